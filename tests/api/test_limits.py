"""What hostile or careless clients can make one server hold (issue 10, items 4 to 6).

Each test starts its own server with small limits and drives it over raw
sockets, so a request can be left half sent. Nothing here measures time: a
limit that does not hold shows as a socket timing out (the tests' own bound),
and the few waits for the server to notice a held request are wait_until's.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from pathlib import Path
from typing import Protocol

import httpx
import pytest
from starlette.requests import Request

from kvlake.api import errors
from kvlake.http import ClientGoneError
from tests.api import rawhttp
from tests.api.conftest import StartServer
from tests.api.rawhttp import HANG_SECONDS
from tests.api.server import Server
from tests.support import wait_until


class Start(Protocol):
    """Start a server with these KVLAKE_* settings; the fixture stops it after the test."""

    def __call__(self, **env: str) -> Server: ...


NO_BLOBS = pytest.mark.parametrize("start_server", ["local"], indirect=True)
"""For the limits no blob ever reaches the store under (a refused body, connections, the
body memory budget): they run on the local folder only."""

PROTOCOLS = pytest.mark.parametrize("protocol", ["httptools", "h11"])
"""The connection guards live in each of uvicorn's HTTP protocols (kvlake/api/protocols.py):
their tests run on both (`KVLAKE_SERVER_HTTP`)."""


def _on(server: Server, protocol: str) -> Server:
    """`server`, having checked that it serves over `protocol`'s class."""
    wanted = {"h11": "NoDelayH11Protocol", "httptools": "NoDelayHttpToolsProtocol"}[protocol]
    wait_until(lambda: f"over {wanted};" in server.output(), message=f"a server over {protocol}")
    return server


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
    """A connection with the admin's request head and the first bytes of its body sent."""
    authorization = rawhttp.basic() if auth else None
    return rawhttp.open_request(
        server,
        method,
        path,
        size=size,
        authorization=authorization,
        content_type=content_type,
        first=first,
    )


_status = rawhttp.read_response


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
    # The whole budget, not an address's share of it (below), is what fills here.
    server = start(KVLAKE_SERVER_BODY_BUDGET=str(1 << 20), KVLAKE_SERVER_CLIENT_BODY_SHARE="1")
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
                # A new name each try: one that got in before the share was held is not a 409.
                name = f"b{len(answers)}"
                answers.append(
                    http.post(
                        f"/repositories/{repo}/branches", json={"name": name, "source": "main"}
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
def test_requests_in_flight_beyond_the_limit_get_503_and_idle_connections_do_not_count(
    start: Start,
) -> None:
    server = start(KVLAKE_SERVER_MAX_CONNECTIONS="4")
    repo = _repository(server)

    def health() -> int:
        return httpx.get(f"{server.url}/api/v1/healthcheck", timeout=HANG_SECONDS).status_code

    # Issue 23: sockets that never send a request are not requests in flight.
    idle = [rawhttp.connect(server) for _ in range(8)]
    try:
        assert health() == 204
    finally:
        for sock in idle:
            sock.close()
    held = [
        _open(server, "POST", _upload_path(repo, f"held-{i}"), size=4 << 20, first=b"x" * 1000)
        for i in range(4)
    ]
    try:
        # Until the server has started the held uploads.
        wait_until(lambda: health() == 503, message="the held uploads to fill the limit")
    finally:
        for sock in held:
            sock.close()
    wait_until(lambda: health() == 204, message="the ended requests to free the limit")


@NO_BLOBS
@PROTOCOLS
def test_a_connection_must_send_its_head_in_time(start: Start, protocol: str) -> None:
    server = _on(start(KVLAKE_SERVER_HEAD_TIMEOUT="1", KVLAKE_SERVER_HTTP=protocol), protocol)
    silent = rawhttp.connect(server)
    trickling = rawhttp.connect(server)
    with silent, trickling:
        for byte in rawhttp.TRICKLED_HEAD:
            # A byte at a time, each well within the deadline: only a whole head counts.
            trickling.sendall(bytes([byte]))
            if rawhttp.closed_by_server_within(trickling, 0.1):
                break
        else:
            pytest.fail("a head trickled for longer than its deadline was still open")
        assert rawhttp.closed_by_server(silent)


@PROTOCOLS
def test_a_request_whose_head_came_in_time_outlives_the_head_deadline(
    start: Start, protocol: str
) -> None:
    server = _on(start(KVLAKE_SERVER_HEAD_TIMEOUT="0.5", KVLAKE_SERVER_HTTP=protocol), protocol)
    repo = _repository(server)
    body = b"z" * 4000
    sock = _open(server, "POST", _upload_path(repo, "slow"), size=len(body), first=body[:1000])
    with sock:
        for offset in range(1000, len(body), 1000):
            # Each pause is longer than the head deadline; the body's pace allows it.
            assert not rawhttp.closed_by_server_within(sock, 0.6)
            sock.sendall(body[offset : offset + 1000])
        status, data = _status(sock)
        assert status == 201, data
        # The response re-arms the deadline for the next head (no keep-alive loophole): the
        # deadline armed at the connection's opening has passed while the upload ran.
        for byte in rawhttp.TRICKLED_HEAD:
            sock.sendall(bytes([byte]))
            if rawhttp.closed_by_server_within(sock, 0.1):
                break
        else:
            pytest.fail("a second head trickled for longer than its deadline was still open")


@NO_BLOBS
@PROTOCOLS
def test_one_address_holds_at_most_its_share_of_connections(start: Start, protocol: str) -> None:
    server = start(
        KVLAKE_SERVER_MAX_CLIENT_CONNECTIONS="3",
        KVLAKE_SERVER_HEAD_TIMEOUT="60",
        KVLAKE_SERVER_HTTP=protocol,
    )
    _on(server, protocol)
    request = b"GET /api/v1/healthcheck HTTP/1.1\r\nHost: x\r\n\r\n"
    held = [rawhttp.connect(server, source="127.0.0.2") for _ in range(3)]
    try:
        for sock in held:  # each is served, so each was accepted and counted
            sock.sendall(request)
            assert _status(sock)[0] == 204
        with rawhttp.connect(server, source="127.0.0.2") as extra:
            assert rawhttp.closed_by_server(extra)
        with rawhttp.connect(server) as other:  # another address is not held back
            other.sendall(request)
            assert _status(other)[0] == 204
    finally:
        for sock in held:
            sock.close()

    def served_again() -> bool:
        with rawhttp.connect(server, source="127.0.0.2") as sock:
            sock.sendall(request)
            try:
                return _status(sock)[0] == 204
            except ConnectionError:
                return False

    wait_until(served_again, message="the closed connections to free the address's share")


def _user_without_permissions(server: Server, name: str) -> str:
    """A new user in no group and with no policy: the Authorization header of its key."""
    with server.http() as http:
        assert http.post("/auth/users", json={"id": name}).status_code == 201
        created = http.post(f"/auth/users/{name}/credentials")
        assert created.status_code == 201, created.text
        key = created.json()
    return rawhttp.basic(key["access_key_id"], key["secret_access_key"])


@pytest.mark.parametrize("size", [512 << 10, 4 << 20], ids=["read-whole", "streamed"])
def test_an_upload_without_permission_is_refused_before_its_body(start: Start, size: int) -> None:
    server = start()
    repo = _repository(server)
    nobody = _user_without_permissions(server, "nobody")
    # The body is never sent: a server that reads it before authorizing waits until the
    # test fails, holding the body's budget all the while (issue 23).
    sock = rawhttp.open_request(
        server, "POST", _upload_path(repo, "x"), size=size, authorization=nobody
    )
    with sock:
        status, data = _status(sock)
    assert status == 401, data
    assert b"insufficient permissions" in data
    assert server.storage.keys(server.storage.namespace(repo), "data/") == []


@NO_BLOBS
def test_a_json_body_without_permission_is_refused_before_it_is_read(start: Start) -> None:
    # The whole budget is one body: a refused caller that held it would starve the admin.
    server = start(KVLAKE_SERVER_BODY_BUDGET=str(1 << 20), KVLAKE_SERVER_CLIENT_BODY_SHARE="1")
    repo = _repository(server)
    nobody = _user_without_permissions(server, "nobody")
    # Bodies declared 1 MiB and never finished: a server that reads a JSON body before
    # authorizing waits for it (then 408), holding the budget all the while (issue 23).
    for path in (
        f"/repositories/{repo}/branches/main/commits",
        f"/repositories/{repo}/branches/main/staging/backing?path=p",
    ):
        sock = rawhttp.open_request(
            server,
            "POST" if path.endswith("commits") else "PUT",
            path,
            size=1 << 20,
            authorization=nobody,
            content_type="application/json",
            first=b'{"message": "',
        )
        with sock:
            status, data = _status(sock)
            assert status == 401, data
            assert b"insufficient permissions" in data
            with server.http() as http:  # the refused body holds nothing
                branch = {"name": f"b-{len(path)}", "source": "main"}
                created = http.post(f"/repositories/{repo}/branches", json=branch)
                assert created.status_code == 201, created.text
    output = server.output()
    assert "Traceback" not in output and "bug" not in output, output


@NO_BLOBS
def test_a_public_operation_takes_a_tiny_body(start: Start) -> None:
    server = start()
    # Declared 4 MiB and never sent: refused at once, from the head (issue 23).
    sock = _open(
        server, "POST", "/auth/login", size=4 << 20, auth=False, content_type="application/json"
    )
    with sock:
        status, data = _status(sock)
    assert status == 400, data
    assert b"request body is over 16384 bytes" in data
    login = {"access_key_id": "AKIAIOSFODNN7EXAMPLE", "secret_access_key": "x" * 20_000}
    response = httpx.post(f"{server.url}/api/v1/auth/login", json=login, timeout=HANG_SECONDS)
    assert response.status_code == 400, response.text  # and one sent whole over the cap


@NO_BLOBS
def test_public_bodies_have_a_budget_of_their_own(start: Start) -> None:
    server = start(
        KVLAKE_SERVER_BODY_BUDGET=str(1 << 20),
        KVLAKE_SERVER_PUBLIC_BODY_BUDGET=str(64 << 10),
        KVLAKE_SERVER_CLIENT_BODY_SHARE="1",
    )
    repo = _repository(server)
    logins = [
        rawhttp.open_request(
            server,
            "POST",
            "/auth/login",
            size=16 << 10,
            content_type="application/json",
            first=b'{"access_key_id": ',
            source="127.0.0.2",
        )
        for _ in range(4)
    ]
    try:

        def login_answer() -> int:
            # The whole body is sent: a request that finds room answers at once (401)
            # instead of waiting for bytes, so polling cannot outlast the held logins.
            body = b'{"access_key_id": "x", "secret_access_key": "y"}'
            with rawhttp.open_request(
                server,
                "POST",
                "/auth/login",
                size=len(body),
                content_type="application/json",
                first=body,
                source="127.0.0.3",
            ) as sock:
                return _status(sock)[0]

        # Until the server has read the held logins' heads and held their shares.
        wait_until(lambda: login_answer() == 503, message="the public budget to be full")
        with server.http() as http:
            created = http.post(
                f"/repositories/{repo}/branches", json={"name": "b", "source": "main"}
            )
            assert created.status_code == 201, created.text
    finally:
        for sock in logins:
            sock.close()


@NO_BLOBS
def test_one_address_holds_at_most_its_share_of_the_body_budget(start: Start) -> None:
    server = start(KVLAKE_SERVER_BODY_BUDGET=str(1 << 20), KVLAKE_SERVER_CLIENT_BODY_SHARE="0.25")
    repo = _repository(server)
    holder = rawhttp.open_request(
        server,
        "POST",
        "/repositories",
        size=256 << 10,
        authorization=rawhttp.basic(),
        content_type="application/json",
        first=b'{"name": ',
        source="127.0.0.2",
    )
    try:

        def second_answer() -> tuple[int, bytes]:
            # The whole body is sent: a request that finds room (before the holder's share
            # is held) answers at once instead of waiting for bytes until the holder's own
            # body deadline has passed and freed its share.
            body = b'{"name": "probe", "source": "main"}'
            with rawhttp.open_request(
                server,
                "POST",
                f"/repositories/{repo}/branches",
                size=len(body),
                authorization=rawhttp.basic(),
                content_type="application/json",
                first=body,
                source="127.0.0.2",
            ) as sock:
                return _status(sock)

        # Until the server holds the first body's share, the whole of the address's.
        wait_until(lambda: second_answer()[0] == 503, message="the address's share to be full")
        assert b"client address 127.0.0.2 holds its share" in second_answer()[1]
        with server.http() as http:  # another address still has the rest of the budget
            created = http.post(
                f"/repositories/{repo}/branches", json={"name": "b", "source": "main"}
            )
            assert created.status_code == 201, created.text
    finally:
        holder.close()


@pytest.mark.parametrize("size", [512 << 10, 4 << 20], ids=["read-whole", "streamed"])
def test_a_trickled_body_is_cut_at_its_whole_body_deadline(start: Start, size: int) -> None:
    # Each pause is far within the read timeout; the average is far below the rate.
    server = start(KVLAKE_SERVER_BODY_MIN_RATE="10000", KVLAKE_SERVER_BODY_RATE_GRACE="1")
    repo = _repository(server)
    sock = _open(server, "POST", _upload_path(repo, "trickled"), size=size, first=b"x" * 1000)
    with sock:
        for _ in range(int(HANG_SECONDS / 0.2)):
            if rawhttp.readable_within(sock, 0.2):
                break
            try:
                sock.sendall(b"x" * 100)
            except OSError:
                break
        status, data = _status(sock)
    assert status == 408, data
    assert b"slower than 10000 bytes/s" in data
    assert server.storage.unfinished_writes(repo) == []
    assert server.storage.keys(server.storage.namespace(repo), "data/") == []


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


def _ui_form(server: Server, *, size: int, first: bytes) -> socket.socket:
    """A POST of a `size`-byte urlencoded form to the UI's login page, `first` bytes sent."""
    sock = rawhttp.connect(server)
    request_head = (
        "POST /ui/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {size}\r\n\r\n"
    )
    sock.sendall(request_head.encode() + first)
    return sock


@NO_BLOBS
def test_a_ui_form_over_its_cap_is_refused_as_it_passes_it(start: Start) -> None:
    # Starlette's own form reading would keep every byte of it in memory.
    server = start()
    body = b"access_key_id=" + b"x" * (20 << 10)
    with _ui_form(server, size=len(body), first=body) as sock:
        status, data = _status(sock)
    assert status == 400, data
    assert b"the form is over 16384 bytes; send less" in data


@NO_BLOBS
def test_a_stalled_ui_form_gets_408(start: Start) -> None:
    server = start(KVLAKE_SERVER_BODY_READ_TIMEOUT="1")
    with _ui_form(server, size=1000, first=b"access_key_id=") as sock:
        status, data = _status(sock)
    assert status == 408, data
    assert b"send it without pausing" in data
