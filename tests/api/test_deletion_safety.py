"""Deletion safety through the HTTP API, on a server whose workers delete at once (issue 9).

A staged blob a reset drops is deleted (not orphaned); a commit that finds
nothing to commit leaves the branch clean; a committed blob survives
everything but garbage collection. The library-level tests explore the races;
these check the same outcomes through the server a client talks to.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.api.conftest import SERVERS, served
from tests.api.server import Server
from tests.support import wait_until

WAIT_SECONDS = 60.0
NAME = "safety"


@pytest.fixture(scope="module", params=SERVERS)
def deleting_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    # Deletions are due at once and the jobs look for them five times a second, so the
    # tests wait for the deletes, not for the default ten-second pause between passes.
    env = {"KVLAKE_DELETION_SEND_DELAY": "0", "KVLAKE_SERVER_JOB_INTERVAL": "0.2"}
    with served(request, tmp_path_factory, "safety", env=env) as server:
        yield server


@pytest.fixture(scope="module")
def http(deleting_server: Server) -> Iterator[httpx.Client]:
    deleting_server.storage.prepare()
    with deleting_server.http() as client:
        body = {"name": NAME, "storage_namespace": deleting_server.storage.namespace(NAME)}
        assert client.post("/repositories", json=body).status_code == 201
        yield client


def _blobs(server: Server) -> set[str]:
    """The keys of the repository's data blobs, below `data/`, on either blockstore."""
    return {
        key.removeprefix("data/")
        for key in server.storage.keys(server.storage.namespace(NAME), "data/")
    }


def _upload(http: httpx.Client, branch: str, path: str, body: bytes) -> str:
    response = http.post(
        f"/repositories/{NAME}/branches/{branch}/objects",
        params={"path": path},
        content=body,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert response.status_code == 201, response.text
    address: str = response.json()["physical_address"]
    return address.rsplit("/data/", 1)[-1]


def _branch(http: httpx.Client, name: str) -> None:
    created = http.post(f"/repositories/{NAME}/branches", json={"name": name, "source": "main"})
    assert created.status_code == 201, created.text


def test_a_reset_deletes_the_blobs_it_drops_instead_of_orphaning_them(
    deleting_server: Server, http: httpx.Client
) -> None:
    _branch(http, "resets")
    kept = _upload(http, "resets", "keep/a", b"kept")
    dropped = {
        _upload(http, "resets", "one", b"1"),
        _upload(http, "resets", "folder/a", b"2"),
        _upload(http, "resets", "folder/b", b"3"),
    }
    assert dropped | {kept} <= _blobs(deleting_server)
    url = f"/repositories/{NAME}/branches/resets"
    assert http.put(url, json={"type": "object", "path": "one"}).status_code == 204
    assert http.put(url, json={"type": "common_prefix", "path": "folder/"}).status_code == 204
    wait_until(
        lambda: not dropped & _blobs(deleting_server),
        timeout=WAIT_SECONDS,
        message=lambda: f"the worker to delete {dropped & _blobs(deleting_server)}",
    )
    assert kept in _blobs(deleting_server)
    stat = http.get(f"/repositories/{NAME}/refs/resets/objects", params={"path": "keep/a"})
    assert stat.content == b"kept"


def test_a_commit_with_nothing_to_commit_leaves_the_branch_clean(http: httpx.Client) -> None:
    _branch(http, "empty")
    _upload(http, "empty", "gone", b"x")
    deleted = http.delete(f"/repositories/{NAME}/branches/empty/objects", params={"path": "gone"})
    assert deleted.status_code == 204
    for _ in range(3):  # every retry used to leave one more sealed token behind
        commit = http.post(f"/repositories/{NAME}/branches/empty/commits", json={"message": "m"})
        assert commit.status_code == 400, commit.text
    diff = http.get(f"/repositories/{NAME}/branches/empty/diff")
    assert diff.json()["results"] == []
    _upload(http, "main", "on-main", b"m")
    committed = http.post(f"/repositories/{NAME}/branches/main/commits", json={"message": "m"})
    assert committed.is_success, committed.text
    merged = http.post(f"/repositories/{NAME}/refs/main/merge/empty", json={})
    assert merged.status_code == 200, merged.text  # not refused as dirty


def test_a_committed_blob_outlives_its_branch_and_an_overwrite(
    deleting_server: Server, http: httpx.Client
) -> None:
    _branch(http, "committed")
    first = _upload(http, "committed", "a", b"first")
    commit = http.post(f"/repositories/{NAME}/branches/committed/commits", json={"message": "m"})
    commit_id = commit.json()["id"]
    overwritten = _upload(http, "committed", "a", b"second")
    _upload(http, "committed", "a", b"third")  # logs the staged "second" blob
    assert http.delete(f"/repositories/{NAME}/branches/committed").status_code == 204
    wait_until(
        lambda: overwritten not in _blobs(deleting_server),
        timeout=WAIT_SECONDS,
        message="the worker to delete the overwritten staged blob",
    )
    assert first in _blobs(deleting_server)
    read = http.get(f"/repositories/{NAME}/refs/{commit_id}/objects", params={"path": "a"})
    assert read.content == b"first"
