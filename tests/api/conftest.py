"""One real server per KV driver and blockstore per session; each test gets its own repository.

The suite runs unchanged on two servers: SQLite over a local blockstore, and
PostgreSQL over S3 (moto's server on loopback, bucket `kvlake-api-suite`). Two,
not four: the KV driver and the blockstore are independent layers that meet
only through the lake, so the two pairs take every test through both KV drivers
and both blockstores, and each more pair costs about three minutes of CI's
fifteen. Tests that are about the local folder itself are marked
`local_blockstore` and run on the local server only. PostgreSQL needs KVLAKE_TEST_POSTGRES_DSN
(default postgresql://postgres@127.0.0.1:5432/test): locally it skips with a
how-to when unreachable, with CI=true it fails. The pairs and the servers' set-up
are tests/support/servers.py's, which the S3 gateway's suite shares.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import httpx
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient

from tests.api.server import Server
from tests.support.backends import BLOCKSTORES, Backend
from tests.support.servers import (
    S3_BUCKET,
    SERVERS,
    admin_http,
    backend_kv_url,
    new_repository,
    served,
    server_storage,
    session_server,
)

__all__ = ["S3_BUCKET", "SERVERS", "backend_kv_url", "served"]  # for the suites' own servers


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the S3 server's runs of tests marked `local_blockstore` (each says why)."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("server") if callspec is not None else None
        on_s3 = isinstance(backend, Backend) and backend.blocks == "s3"
        (dropped if on_s3 and item.get_closest_marker("local_blockstore") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


class StartServer(Protocol):
    """Start a server of the test's own on SQLite in `data_dir`, over the run's blockstore."""

    def __call__(self, data_dir: Path, *, env: dict[str, str] | None = None) -> Server: ...


@pytest.fixture(params=sorted(BLOCKSTORES))
def start_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StartServer]:
    """For the tests that start servers of their own (processes, limits, purges): once over
    the data dir's local folder, once over S3 (the session's moto server, bucket
    `S3_BUCKET`, shared by every server the test starts). All are stopped after the test."""
    servers: list[Server] = []
    storage, s3_env = server_storage(request, tmp_path_factory, request.param)

    def start(data_dir: Path, *, env: dict[str, str] | None = None) -> Server:
        server = Server(data_dir, env=s3_env | (env or {}), storage=storage)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session", params=SERVERS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    yield from session_server(request, tmp_path_factory, "api")


@pytest.fixture
def sdk(server: Server) -> LakeFSClient:
    server.storage.prepare()
    return server.sdk()


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    yield from admin_http(server)


@pytest.fixture
def repo(server: Server, http: httpx.Client) -> str:
    """A fresh repository with a `main` branch, named uniquely for the test."""
    return new_repository(server, http, "repo")


def viewer(server: Server, sdk: LakeFSClient, user: str) -> LakeFSClient:
    """A client for a new user `user` in the Viewers group (reads only)."""
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user))
    sdk.auth_api.add_group_membership("Viewers", user)
    credentials = sdk.auth_api.create_credentials(user)
    return server.sdk(credentials.access_key_id, credentials.secret_access_key)
