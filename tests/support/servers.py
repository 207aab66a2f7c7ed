"""The suites' real servers: the (KV driver, blockstore) pairs, a server per pair, a clean stop.

The REST API's suite and the S3 gateway's run servers the same way: SQLite over
the local folder, and PostgreSQL over S3 (moto's server on loopback, bucket
`S3_BUCKET`). A session server must stop cleanly with no traceback in its
output; each test gets the admin's client and a repository of its own.
"""

from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from tests.api.server import Server, Storage
from tests.support.backends import SERVED, Backend, served_params
from tests.support.postgres import drop_postgres_table

SERVERS = served_params(SERVED)
"""The session's servers, a `Backend` each (`request.param`): ids `sqlite`, `postgres-s3`."""

S3_BUCKET = "kvlake-api-suite"


@contextmanager
def backend_kv_url(request: pytest.FixtureRequest, prefix: str, kv: str) -> Iterator[str]:
    """The KV URL for a server on driver `kv`: "" (SQLite in its data dir), or a PostgreSQL
    table of its own, dropped afterwards."""
    if kv != "postgres":
        yield ""
        return
    dsn = str(request.getfixturevalue("postgres_dsn"))
    table = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{dsn}{'&' if '?' in dsn else '?'}table={table}"
    finally:
        drop_postgres_table(dsn, table)


@contextmanager
def served(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    env: dict[str, str] | None = None,
    *,
    workers: int = 1,
) -> Iterator[Server]:
    """A server of `workers` processes on the backend `request.param` (one of SERVERS), its
    data dir a new folder named after `name`; stopped on exit."""
    backend: Backend = request.param
    data_dir = tmp_path_factory.mktemp(f"{name}-{backend.id}")
    storage, s3_env = server_storage(request, tmp_path_factory, backend.blocks)
    env = (env or {}) | s3_env
    with backend_kv_url(request, f"kv_{name}", backend.kv) as kv_url:
        server = Server(data_dir, kv_url=kv_url, env=env, storage=storage, workers=workers)
        try:
            yield server
        finally:
            server.stop()


def server_storage(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, blocks: str
) -> tuple[Storage | None, dict[str, str]]:
    """The storage of a server process on blockstore `blocks`, and the environment it needs:
    none for a local folder (the data dir's, the default), and for S3 the bucket `S3_BUCKET`
    of the session's moto server with the test credentials."""
    if blocks != "s3":
        return None, {}
    from tests.support.s3server import server_env  # moto loads only for S3

    moto = request.getfixturevalue("moto_s3")
    env = server_env(moto.endpoint, S3_BUCKET, tmp_path_factory.mktemp("aws"))
    return Storage.s3(moto, S3_BUCKET), env


def session_server(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    env: dict[str, str] | None = None,
) -> Iterator[Server]:
    """A suite's shared server (a fixture's body: `yield from`), checked to stop cleanly."""
    with served(request, tmp_path_factory, name, env) as server:
        yield server
        status = server.stop()
    # uvicorn re-raises the signal after its graceful shutdown: -SIGTERM is a clean stop.
    assert status in (0, -signal.SIGTERM), f"server did not stop ({status}):\n{server.output()}"
    assert "kvlake: stopped" in server.output(), server.output()
    assert "Traceback" not in server.output(), server.output()


def admin_http(server: Server) -> Iterator[httpx.Client]:
    """The REST API as the admin, on storage prepared for the test (`yield from`)."""
    server.storage.prepare()
    with server.http() as client:
        yield client


def new_repository(server: Server, http: httpx.Client, prefix: str) -> str:
    """A fresh repository with a `main` branch, named `<prefix>-<random>`."""
    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    response = http.post(
        "/repositories", json={"name": name, "storage_namespace": server.storage.namespace(name)}
    )
    assert response.status_code == 201, response.text
    return name
