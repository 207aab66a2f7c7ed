"""One real server per KV driver per session; each test gets its own repository.

The suite runs unchanged on SQLite and PostgreSQL. PostgreSQL needs
KVLAKE_TEST_POSTGRES_DSN (default postgresql://postgres@127.0.0.1:5432/test):
locally it skips with a how-to when unreachable, with CI=true it fails.
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient

from tests.api.server import Server
from tests.support import drop_postgres_table

BACKENDS = [
    pytest.param("sqlite"),
    pytest.param("postgres", marks=pytest.mark.postgres),
]


@contextmanager
def backend_kv_url(request: pytest.FixtureRequest, prefix: str) -> Iterator[str]:
    """The KV URL for a server on `request.param`: "" (SQLite in its data dir), or a
    PostgreSQL table of its own, dropped afterwards."""
    if request.param != "postgres":
        yield ""
        return
    dsn = str(request.getfixturevalue("postgres_dsn"))
    table = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{dsn}{'&' if '?' in dsn else '?'}table={table}"
    finally:
        drop_postgres_table(dsn, table)


@pytest.fixture(scope="session", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp(f"server-{request.param}")
    with backend_kv_url(request, "kv_api") as kv_url:
        server = Server(data_dir, kv_url=kv_url)
        yield server
        status = server.stop()
    # uvicorn re-raises the signal after its graceful shutdown: -SIGTERM is a clean stop.
    assert status in (0, -signal.SIGTERM), f"server did not stop ({status}):\n{server.output()}"
    assert "kvlake: stopped" in server.output(), server.output()
    assert "Traceback" not in server.output(), server.output()


@pytest.fixture
def sdk(server: Server) -> LakeFSClient:
    return server.sdk()


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.http() as client:
        yield client


@pytest.fixture
def repo(http: httpx.Client, tmp_path: Path) -> str:
    """A fresh repository with a `main` branch, named uniquely for the test."""
    name = f"repo-{uuid.uuid4().hex[:12]}"
    response = http.post(
        "/repositories", json={"name": name, "storage_namespace": f"local://{name}"}
    )
    assert response.status_code == 201, response.text
    return name


def viewer(server: Server, sdk: LakeFSClient, user: str) -> LakeFSClient:
    """A client for a new user `user` in the Viewers group (reads only)."""
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user))
    sdk.auth_api.add_group_membership("Viewers", user)
    credentials = sdk.auth_api.create_credentials(user)
    return server.sdk(credentials.access_key_id, credentials.secret_access_key)
