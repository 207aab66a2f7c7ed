"""`If-None-Match: *` uploads through HTTP: exactly one of many racing uploads of a path wins.

The catalog tests force the race deterministically (tests/catalog/test_if_absent.py);
here the outcome that must hold in every schedule is checked end to end: one 201,
every other answer a 412, and the path holds the winner's bytes.
"""

from __future__ import annotations

import threading

import httpx

from tests.api.server import Server

UPLOADS = 16


def test_racing_conditional_uploads_give_one_201_and_412s(server: Server, repo: str) -> None:
    url = f"/repositories/{repo}/branches/main/objects"
    statuses: list[int] = [0] * UPLOADS
    start = threading.Barrier(UPLOADS, timeout=60)

    def upload(n: int) -> None:
        with server.http() as client:
            start.wait()
            response = client.post(
                url, params={"path": "once"}, content=b"%d" % n, headers={"If-None-Match": "*"}
            )
            statuses[n] = response.status_code

    threads = [threading.Thread(target=upload, args=(n,)) for n in range(UPLOADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] + [412] * (UPLOADS - 1), statuses
    with server.http() as client:
        body = client.get(f"/repositories/{repo}/refs/main/objects", params={"path": "once"})
        assert body.content == b"%d" % statuses.index(201)


def test_a_conditional_upload_over_a_committed_object_is_412(http: httpx.Client, repo: str) -> None:
    url = f"/repositories/{repo}/branches/main/objects"
    assert http.post(url, params={"path": "c"}, content=b"1").status_code == 201
    commit = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "m"})
    assert commit.status_code == 201, commit.text
    again = http.post(url, params={"path": "c"}, content=b"2", headers={"If-None-Match": "*"})
    assert again.status_code == 412
    assert again.json()["message"] == "path already exists"  # lakeFS's text
    assert "already exists on branch 'main'" in again.json()["detail"]
