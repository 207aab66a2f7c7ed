"""What hostile or careless clients can make one server hold (issue 10, items 4 to 6).

Each test starts its own server with small limits and drives it over raw
sockets, so a request can be left half sent. Nothing here measures time: a
limit that does not hold shows as a socket timing out (the tests' own bound),
and the few waits for the server to notice a held request are wait_until's.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import socket
import uuid
from pathlib import Path
from typing import Protocol

import httpx
import pytest
from starlette.requests import Request

from kvlake.api import errors
from kvlake.api.body import ClientGoneError
from tests.api.conftest import StartServer
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server
from tests.support import wait_until

HANG_SECONDS = 30.0
"""A socket read that takes this long means the server hung: the test fails."""

_AUTH = base64.b64encode(f"{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}".encode()).decode()


class Start(Protocol):
    """Start a server with these KVLAKE_* settings; the fixture stops it after the test."""

    def __call__(self, **env: str) -> Server: ...


NO_BLOBS = pytest.mark.parametrize("start_server", ["local"], indirect=True)
"""For the limits no blob ever reaches the store under (a refused body, connections, the
body memory budget): they run on the local folder only."""


@pytest.fixture
def start(start_server: StartServer, tmp_path: Path) -> Start:
    """Servers on a local folder, then on S3: a streamed upload is a multipart upload there."""
    started = 0

    def make(**env: str) -> Server:
        nonlocal started
        started += 1
        return start_server(tmp_path / f"server-{started}", env=env)

    return make


def _open(
    server: Server,
    method: str,
    path: str,
    *,
    size: int,
    auth: bool = True,
    content_type: str = "application/octet-stream",
    first: bytes = b"",
) -> socket.socket:
    """A connection with a request's head and the first bytes of a `size`-byte body sent."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=HANG_SECONDS)
    head = [
        f"{method} /api/v1{path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Content-Type: {content_type}",
        f"Content-Length: {size}",
    ]
    if auth:
        head.append(f"Authorization: Basic {_AUTH}")
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + first)
    return sock


def _status(sock: socket.socket) -> tuple[int, bytes]:
    """The status and the whole response (head and the body its Content-Length says)."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := sock.recv(65536)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length and (chunk := sock.recv(65536)):
        body += chunk
    return int(head.split(b" ", 2)[1]), head + b"\r\n\r\n" + body


def _repository(server: Server) -> str:
    name = f"repo-{uuid.uuid4().hex[:12]}"
    with server.http() as http:
        namespace = server.storage.namespace(name)
        response = http.post("/repositories", json={"name": name, "storage_namespace": namespace})
    assert response.status_code == 201, response.text
    return name


def _upload_path(repo: str, path: str) -> str:
    return f"/repositories/{repo}/branches/main/objects?path={path}"


@NO_BLOBS
def test_anonymous_body_is_refused_before_it_is_read(start: Start) -> None:
    server = start()
    # The body is never sent: a server that reads it first waits for it until the test fails.
    sock = _open(
        server, "POST", "/repositories", size=4 << 20, auth=False, content_type="application/json"
    )
    with sock:
        status, data = _status(sock)
    assert status == 401, data
    # Malformed JSON from an anonymous client is a 401, not a schema error.
    response = httpx.post(f"{server.url}/api/v1/repositories", content=b"{not json", timeout=30)
    assert response.status_code == 401, response.text
    repo = _repository(server)
    sock = _open(server, "POST", _upload_path(repo, "big"), size=8 << 20, auth=False)
    with sock:
        status, data = _status(sock)
    assert status == 401, data


@NO_BLOBS
def test_body_budget_full_is_503_then_frees_when_the_holder_leaves(start: Start) -> None:
    server = start(KVLAKE_SERVER_BODY_BUDGET=str(1 << 20))
    repo = _repository(server)
    holder = _open(
        server,
        "POST",
        "/repositories",
        size=1 << 20,
        content_type="application/json",
        first=b'{"name": ',
    )
    try:
        with server.http() as http:
            answers: list[httpx.Response] = []

            def branch_answer() -> int:
                answers.append(
                    http.post(
                        f"/repositories/{repo}/branches", json={"name": "b", "source": "main"}
                    )
                )
                return answers[-1].status_code

            # Until the server has read the holder's head and held its share.
            wait_until(lambda: branch_answer() == 503, message="the body budget to be full")
            assert "retry" in answers[-1].json()["message"]
            assert http.get(f"/repositories/{repo}/branches/main").status_code == 200  # no body
            holder.close()  # the server notices the client gone and returns the share
            wait_until(lambda: branch_answer() != 503, message="the budget to be freed")
            assert answers[-1].status_code == 201, answers[-1].text
    finally:
        holder.close()
    output = server.output()
    assert "Traceback" not in output and "bug" not in output, output


@NO_BLOBS
def test_connections_beyond_the_limit_get_503(start: Start) -> None:
    server = start(KVLAKE_SERVER_MAX_CONNECTIONS="4")
    held = [
        socket.create_connection(("127.0.0.1", server.port), timeout=HANG_SECONDS) for _ in range(4)
    ]

    def health() -> int:
        return httpx.get(f"{server.url}/api/v1/healthcheck", timeout=HANG_SECONDS).status_code

    try:
        # Until the server has accepted the held connections.
        wait_until(lambda: health() == 503, message="the held connections to fill the limit")
    finally:
        for sock in held:
            sock.close()
    wait_until(lambda: health() == 204, message="the closed connections to free the limit")


@pytest.mark.parametrize("size", [512 << 10, 4 << 20], ids=["read-whole", "streamed"])
def test_stalled_upload_gets_408_and_leaves_no_blob(start: Start, size: int) -> None:
    server = start(KVLAKE_SERVER_BODY_READ_TIMEOUT="1")
    repo = _repository(server)
    sock = _open(server, "POST", _upload_path(repo, "stalled"), size=size, first=b"x" * 70000)
    with sock:
        status, data = _status(sock)
    assert status == 408, data
    assert b"send it without pausing" in data
    with server.http() as http:
        stat = http.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": "stalled"})
        assert stat.status_code == 404, stat.text
    assert server.storage.unfinished_writes(repo) == []
    assert server.storage.keys(server.storage.namespace(repo), "data/") == []


def test_held_open_uploads_do_not_starve_other_requests(start: Start) -> None:
    server = start()
    repo = _repository(server)
    held = [
        _open(server, "POST", _upload_path(repo, f"held-{i}"), size=4 << 20, first=b"x" * 1000)
        for i in range(45)
    ]
    try:
        with server.http() as http:
            http.timeout = httpx.Timeout(HANG_SECONDS)
            assert http.get(f"/repositories/{repo}/branches/main").status_code == 200
            response = http.post(
                f"/repositories/{repo}/branches/main/objects",
                params={"path": "other"},
                content=b"y" * (2 << 20),
            )
            assert response.status_code == 201, response.text
    finally:
        for sock in held:
            sock.close()


def test_client_leaving_mid_upload_is_one_quiet_line(start: Start) -> None:
    server = start()
    repo = _repository(server)
    for i in range(3):
        sock = _open(
            server, "POST", _upload_path(repo, f"gone-{i}"), size=4 << 20, first=b"x" * 100000
        )
        sock.close()
    with server.http() as http:  # the server is still serving, with nothing staged
        listing = http.get(f"/repositories/{repo}/refs/main/objects/ls")
        assert listing.status_code == 200 and listing.json()["results"] == []
    server.stop()
    output = server.output()
    assert "Traceback" not in output and "bug" not in output, output


def test_client_gone_is_logged_once_at_info(caplog: pytest.LogCaptureFixture) -> None:
    request = Request({"type": "http", "method": "PUT", "path": "/api/v1/x", "headers": []})
    with caplog.at_level(logging.INFO, logger="kvlake.api.errors"):
        asyncio.run(errors.client_gone(request, ClientGoneError("gone mid-body")))
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "PUT /api/v1/x: gone mid-body")
    ]
    assert all(r.exc_info is None for r in caplog.records)
