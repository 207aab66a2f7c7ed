"""Deleting a repository with ?purge=true removes its blobs through the deletion log, on a
local folder and on S3."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.api.conftest import StartServer
from tests.support import wait_until

WAIT_SECONDS = 90


def test_delete_with_purge_removes_every_blob_of_the_namespace(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(
        tmp_path / "data",
        env={"KVLAKE_DELETION_SEND_DELAY": "0", "KVLAKE_SERVER_JOB_INTERVAL": "0.2"},
    )
    namespace = server.storage.namespace("purged")
    with server.http() as http:
        created = http.post(
            "/repositories", json={"name": "purged", "storage_namespace": namespace}
        )
        assert created.status_code == 201, created.text
        for name in ("a", "b"):
            uploaded = http.post(
                "/repositories/purged/branches/main/objects",
                params={"path": name},
                content=b"data",
                headers={"Content-Type": "application/octet-stream"},
            )
            assert uploaded.status_code == 201, uploaded.text
        assert server.storage.keys(namespace)
        assert http.delete("/repositories/purged", params={"purge": "true"}).status_code == 204
        assert http.get("/repositories/purged").status_code == 404
    wait_until(
        lambda: not server.storage.keys(namespace),
        timeout=WAIT_SECONDS,
        interval=0.5,
        message=lambda: f"the purge to remove {server.storage.keys(namespace)}:\n{server.output()}",
    )
    # Once the purge finishes, the namespace is free for a new repository.
    with server.http() as http:
        body = {"name": "again", "storage_namespace": namespace}

        def namespace_free() -> bool:
            response = http.post("/repositories", json=body)
            if response.status_code == 400:
                assert "being purged" in response.json()["message"]
                return False
            assert response.status_code == 201, response.text
            return True

        wait_until(namespace_free, timeout=WAIT_SECONDS, interval=0.5, message="the namespace")


def test_purge_flag_must_be_a_boolean(http: httpx.Client, repo: str) -> None:
    response = http.delete(f"/repositories/{repo}", params={"purge": "maybe"})
    assert response.status_code == 400
    assert http.get(f"/repositories/{repo}").status_code == 200
