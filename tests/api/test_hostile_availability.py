"""Anonymous and unprivileged clients cannot take a server offline (issue 23, findings 1, 2).

Each attack of the issue runs against a real `kvlake serve` of two workers, on
SQLite over a local folder and on PostgreSQL over S3, from other loopback
addresses than the admin's (127.0.0.1), as hostile clients elsewhere would.
While it runs, the admin's work must succeed: a request that does not answer
within `REQUEST_SECONDS` fails the test (a bound on hanging, not a measure of
speed). The limits are set low enough that each attack took the server
offline before the fix (`ATTACKABLE`); tests/api/test_limits.py has a test per
guard.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import httpx
import pytest

from tests.api import rawhttp
from tests.api.conftest import SERVERS, served
from tests.api.server import Server
from tests.support import wait_until

REQUEST_SECONDS: Final = 3.0
"""How long one of the admin's small requests may take before the test calls it lost."""

LARGE_UPLOAD_SECONDS: Final = 60.0
"""The same bound for the admin's large (streamed) upload."""

ATTACKABLE: Final = {
    "KVLAKE_SERVER_MAX_CONNECTIONS": "100",
    "KVLAKE_SERVER_BODY_BUDGET": str(16 << 20),
    "KVLAKE_SERVER_HEAD_TIMEOUT": "2",
}
"""Limits each attack exceeded per worker before the fix: 300 idle sockets over two workers
against 100 connections each, and 16 logins declaring 4 MiB against 16 MiB of bodies."""

TICK: Final = 0.1
"""How often the attacking clients look at their sockets."""


@dataclass(frozen=True)
class Behaviour:
    """What each connection of an attack sends: `opening` at once, then `drip` one byte
    every `every` seconds (empty `drip`: nothing more), from the address `source`."""

    source: str
    opening: bytes = b""
    drip: bytes = b""
    every: float = 1.0


class _Client:
    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.sock: socket.socket | None = None
        self.sent = 0
        self.next_drip = 0.0
        self.next_connect = 0.0


class Attack:
    """Hostile clients on a thread of their own: each keeps a connection doing its
    `Behaviour`, and opens a new one (after a short pause) whenever the server closes or
    answers it, until `stop`. Counts what the server did to them."""

    def __init__(self, server: Server, behaviours: list[Behaviour]) -> None:
        self._server = server
        self._clients = [_Client(b) for b in behaviours]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="attack", daemon=True)
        self.opened = 0
        self.ended_by_server = 0
        """Connections the server closed, or answered (refused) and then were closed."""
        self.answers: list[bytes] = []
        """The status lines the server answered attacking requests with."""

    def __enter__(self) -> Attack:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for client in self._clients:
            if client.sock is not None:
                client.sock.close()

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            now = time.monotonic()
            for client in self._clients:
                if client.sock is None:
                    if now >= client.next_connect:
                        self._connect(client, now)
                    continue
                if self._ended(client):
                    client.sock.close()
                    client.sock = None
                    client.next_connect = now + 0.5
                    self.ended_by_server += 1
                elif client.behaviour.drip and now >= client.next_drip:
                    self._drip(client, now)

    def _connect(self, client: _Client, now: float) -> None:
        try:
            sock = rawhttp.connect(self._server, source=client.behaviour.source)
            sock.sendall(client.behaviour.opening)
        except OSError:
            client.next_connect = now + 0.5
            return
        sock.setblocking(False)
        client.sock, client.sent, client.next_drip = sock, 0, now + client.behaviour.every
        self.opened += 1

    def _ended(self, client: _Client) -> bool:
        assert client.sock is not None
        try:
            data = client.sock.recv(65536)
        except BlockingIOError:
            return False
        except OSError:
            return True
        if data.startswith(b"HTTP/"):
            self.answers.append(data.split(b"\r\n", 1)[0])
        return True

    def _drip(self, client: _Client, now: float) -> None:
        assert client.sock is not None
        drip = client.behaviour.drip
        try:
            client.sock.send(drip[client.sent % len(drip) : client.sent % len(drip) + 1])
        except OSError:
            return  # the next look sees the connection closed
        client.sent += 1
        client.next_drip = now + client.behaviour.every


@pytest.fixture(params=SERVERS)
def hostile_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    with served(request, tmp_path_factory, "hostile", ATTACKABLE, workers=2) as server:
        server.storage.prepare()
        yield server
        output = server.output()
    assert "Traceback" not in output and "bug" not in output, output


def _repository(http: httpx.Client, server: Server) -> str:
    name = f"repo-{uuid.uuid4().hex[:12]}"
    namespace = server.storage.namespace(name)
    response = http.post("/repositories", json={"name": name, "storage_namespace": namespace})
    assert response.status_code == 201, response.text
    return name


def _sources(count: int, first: int = 2) -> list[str]:
    return [f"127.0.0.{first + i}" for i in range(count)]


def test_idle_and_trickling_connections_leave_the_server_available(hostile_server: Server) -> None:
    server = hostile_server
    sources = _sources(6)
    idle = [Behaviour(source) for source in sources for _ in range(25)]
    # A head a byte at a time, never finished (the drip repeats its padding for ever).
    trickling = [
        Behaviour(source, drip=rawhttp.TRICKLED_HEAD, every=0.3)
        for source in sources
        for _ in range(25)
    ]
    hostile = idle + trickling
    with server.http() as http:
        repo = _repository(http, server)
        http.timeout = httpx.Timeout(REQUEST_SECONDS)
        with Attack(server, hostile) as attack:
            wait_until(lambda: attack.opened >= len(hostile), message="the attack to open")
            answered = 0

            def admin_works() -> bool:
                nonlocal answered
                # Raises httpx.TimeoutException past REQUEST_SECONDS: the test fails.
                branch = http.get(f"/repositories/{repo}/branches/main")
                assert branch.status_code == 200, branch.text
                listing = http.get("/repositories")
                assert listing.status_code == 200, listing.text
                answered += 1
                # Until every attacking connection has met the head deadline at least once.
                return attack.ended_by_server >= len(hostile) and answered >= 10

            wait_until(admin_works, timeout=120, interval=0.2, message="the attack to be cut")
    assert attack.answers == []  # closed at the deadline, never served


def _nobody(http: httpx.Client) -> str:
    """A user with credentials and no permission at all: its Authorization header."""
    assert http.post("/auth/users", json={"id": "nobody"}).status_code == 201
    created = http.post("/auth/users/nobody/credentials")
    assert created.status_code == 201, created.text
    key = created.json()
    return rawhttp.basic(key["access_key_id"], key["secret_access_key"])


def test_slow_bodies_leave_the_server_available(hostile_server: Server) -> None:
    server = hostile_server
    with server.http() as http:
        repo = _repository(http, server)
        nobody = _nobody(http)
        http.timeout = httpx.Timeout(REQUEST_SECONDS)
        login = (
            rawhttp.head("POST", "/auth/login", size=4 << 20, content_type="application/json")
            + b'{"access_key_id": '
        )
        upload = rawhttp.head(
            "POST",
            f"/repositories/{repo}/branches/main/objects?path=slow",
            size=1 << 20,
            authorization=nobody,
        )
        hostile = [Behaviour("127.0.0.2", login, drip=b" ", every=1.0) for _ in range(16)]
        hostile += [
            Behaviour(source, upload + b"x", drip=b"x", every=1.0)
            for source in _sources(4, first=3)
            for _ in range(20)
        ]
        with Attack(server, hostile) as attack:
            wait_until(lambda: attack.opened >= len(hostile), message="the attack to open")
            wait_until(
                lambda: attack.ended_by_server >= len(hostile),
                timeout=60,
                message="every attacking request to be refused once",
            )
            for i in range(3):
                branch = {"name": f"b{i}", "source": "main"}
                created = http.post(f"/repositories/{repo}/branches", json=branch)
                assert created.status_code == 201, created.text
                small = http.post(
                    f"/repositories/{repo}/branches/main/objects",
                    params={"path": f"small-{i}"},
                    content=b"s" * 1024,
                )
                assert small.status_code == 201, small.text
                large = http.post(
                    f"/repositories/{repo}/branches/main/objects",
                    params={"path": f"large-{i}"},
                    content=b"l" * (8 << 20),
                    timeout=LARGE_UPLOAD_SECONDS,
                )
                assert large.status_code == 201, large.text
                commit = http.post(
                    f"/repositories/{repo}/branches/main/commits", json={"message": f"c{i}"}
                )
                assert commit.status_code == 201, commit.text
        refusals = set(attack.answers)
    assert refusals <= {b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 401 Unauthorized"}, refusals
    with server.http() as http:
        stat = http.get(f"/repositories/{repo}/refs/main/objects/stat", params={"path": "slow"})
        assert stat.status_code == 404, stat.text
