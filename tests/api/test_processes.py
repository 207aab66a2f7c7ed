"""Several server processes over one store behave as one system; shutdown is graceful."""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kvlake.auth.ratelimit import FREE_FAILURES
from tests.api.conftest import StartServer
from tests.api.server import Server
from tests.support import wait_until


@pytest.fixture
def pair(start_server: StartServer, tmp_path: Path) -> tuple[Server, Server]:
    """Two processes on one SQLite file and one data folder (so one server key), over the
    folder's blockstore, then over one S3 bucket."""
    return start_server(tmp_path / "data"), start_server(tmp_path / "data")


def test_writes_and_revocations_on_one_process_show_on_the_other(
    pair: tuple[Server, Server],
) -> None:
    first, second = pair
    with first.http() as a, second.http() as b:
        name = f"p-{uuid.uuid4().hex[:8]}"
        namespace = first.storage.namespace(name)
        a.post("/repositories", json={"name": name, "storage_namespace": namespace})
        a.post(f"/repositories/{name}/branches/main/objects", params={"path": "f"}, content=b"1")
        read = b.get(f"/repositories/{name}/refs/main/objects", params={"path": "f"})
        assert read.content == b"1"
        assert a.post("/auth/users", json={"id": "shared"}).status_code == 201
        a.put("/auth/groups/Viewers/members/shared")
        key = a.post("/auth/users/shared/credentials").json()
    credentials = (key["access_key_id"], key["secret_access_key"])
    assert httpx.get(f"{second.url}/api/v1/user", auth=credentials).status_code == 200
    with first.http() as a:
        a.delete(f"/auth/users/shared/credentials/{key['access_key_id']}")
    assert httpx.get(f"{first.url}/api/v1/user", auth=credentials).status_code == 401  # at once
    # The other process may answer from its auth cache for up to KVLAKE_AUTH_CACHE_TTL
    # (1 s); wait_until's generous timeout only keeps a broken revocation from hanging the test.
    wait_until(
        lambda: httpx.get(f"{second.url}/api/v1/user", auth=credentials).status_code == 401,
        interval=0.1,
        message="the revoked key to fail on the other process",
    )


@pytest.mark.parametrize("start_server", ["local"], indirect=True)  # no blob is written
def test_failed_logins_count_across_processes(pair: tuple[Server, Server]) -> None:
    first, second = pair
    with first.http() as a:
        a.post("/auth/users", json={"id": "target"})
        key = a.post("/auth/users/target/credentials").json()["access_key_id"]
    attempt = {"access_key_id": key, "secret_access_key": "wrong"}
    for index in range(FREE_FAILURES + 1):
        server = (first, second)[index % 2]
        assert httpx.post(f"{server.url}/api/v1/auth/login", json=attempt).status_code == 401
    for server in (first, second):
        assert httpx.post(f"{server.url}/api/v1/auth/login", json=attempt).status_code == 429


def test_a_process_with_another_server_key_refuses_to_start(tmp_path: Path) -> None:
    first = Server(tmp_path / "one")
    try:
        kv_url = f"sqlite://{tmp_path / 'one' / 'kv.db'}"
        with pytest.raises(RuntimeError, match="KVLAKE_AUTH_ENCRYPT_SECRET_KEY"):
            Server(tmp_path / "two", kv_url=kv_url)
    finally:
        first.stop()


def test_two_workers_serve_one_store(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", workers=2)
    try:
        with server.http() as client:
            name = f"w-{uuid.uuid4().hex[:8]}"
            client.post(
                "/repositories", json={"name": name, "storage_namespace": f"local://{name}"}
            )
            statuses = {client.get(f"/repositories/{name}").status_code for _ in range(20)}
        assert statuses == {200}
        assert server.output().count("created the admin user") == 1
    finally:
        assert server.stop() in (0, -signal.SIGTERM)


def test_shutdown_lets_an_in_flight_upload_finish(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(tmp_path / "data")
    with server.http() as client:
        name = f"s-{uuid.uuid4().hex[:8]}"
        namespace = server.storage.namespace(name)
        client.post("/repositories", json={"name": name, "storage_namespace": namespace})
        started = threading.Event()

        def slow_body() -> Iterator[bytes]:
            for index in range(20):
                if index == 2:
                    started.set()
                yield b"x" * (256 * 1024)
                time.sleep(0.05)

        stopper = threading.Thread(target=lambda: (started.wait(), server.stop()))
        stopper.start()
        response = client.post(
            f"/repositories/{name}/branches/main/objects",
            params={"path": "late"},
            content=slow_body(),
        )
        stopper.join()
    assert response.status_code == 201 and response.json()["size_bytes"] == 20 * 256 * 1024
    assert "kvlake: stopped" in server.output()


def _new_repository(client: httpx.Client, server: Server) -> tuple[str, str, str]:
    """Create a repository with a fresh name; return the name and its main branch's
    objects and stat routes."""
    name = f"p-{uuid.uuid4().hex[:8]}"
    client.post(
        "/repositories", json={"name": name, "storage_namespace": server.storage.namespace(name)}
    )
    objects = f"/repositories/{name}/branches/main/objects"
    stat = f"/repositories/{name}/refs/main/objects/stat"
    return name, objects, stat


def test_a_name_recreated_on_one_process_is_read_afresh_on_the_other(
    pair: tuple[Server, Server],
) -> None:
    """Each process remembers a repository's instance uid to read the record and the
    branch in one round trip (issue 28); the other process's delete, re-creation and
    upload still show at once."""
    first, second = pair
    with first.http() as a, second.http() as b:
        name, objects, stat = _new_repository(a, first)
        a.post(objects, params={"path": "f"}, content=b"old")
        assert b.get(stat, params={"path": "f"}).json()["size_bytes"] == 3  # b knows the uid
        assert a.delete(f"/repositories/{name}").status_code == 204
        assert b.get(stat, params={"path": "f"}).status_code == 404
        fresh = first.storage.namespace(f"{name}-new")
        a.post("/repositories", json={"name": name, "storage_namespace": fresh})
        assert b.get(stat, params={"path": "f"}).status_code == 404  # the new one has no f
        a.post(objects, params={"path": "f"}, content=b"newer")
        assert b.get(stat, params={"path": "f"}).json()["size_bytes"] == 5
        assert b.get(f"/repositories/{name}").json()["storage_namespace"] == fresh


@pytest.fixture(params=["sqlite", "postgres"])
def stat_pair(
    request: pytest.FixtureRequest, start_server: StartServer, tmp_path: Path
) -> tuple[Server, Server]:
    """`pair`, and two processes on one PostgreSQL table on loopback: over local blocks
    their stats run on each event loop's own connection (kvlake/kv/postgres.py)."""
    env = {}
    if request.param == "postgres":
        env["KVLAKE_KV_URL"] = str(request.getfixturevalue("postgres_url"))
    return start_server(tmp_path / "data", env=env), start_server(tmp_path / "data", env=env)


def test_stats_on_one_process_see_uploads_deletes_and_commits_of_the_other(
    stat_pair: tuple[Server, Server],
) -> None:
    """A stat reads the path's staged entry in the staging tokens its process saw on the
    branch last time, in the statement that reads the branch (issue 28): an upload, a
    delete or a commit acknowledged by the other process still shows at once."""
    first, second = stat_pair
    with first.http() as a, second.http() as b:
        name, objects, stat = _new_repository(a, first)

        def size() -> int | None:
            response = b.get(stat, params={"path": "f"})
            return response.json()["size_bytes"] if response.status_code == 200 else None

        for content in (b"1", b"22"):  # the second stat is served with the known token
            assert a.post(objects, params={"path": "f"}, content=content).status_code == 201
            assert size() == len(content)
        commit = {"message": "move the token"}
        assert a.post(f"/repositories/{name}/branches/main/commits", json=commit).is_success
        assert a.post(objects, params={"path": "f"}, content=b"333").status_code == 201
        assert size() == 3
        assert a.delete(objects, params={"path": "f"}).status_code == 204
        assert size() is None
