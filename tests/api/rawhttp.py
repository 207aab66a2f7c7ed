"""Requests over raw sockets, for the tests of what clients can make a server hold.

A raw socket can leave a request half sent (a head a byte at a time, a body
that stops) and can come from another loopback address (`127.0.0.2`, ...), so
a test tells an attacker's connections from a user's as the server does: by
the peer address.
"""

from __future__ import annotations

import base64
import select
import socket
from typing import Final

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server

HANG_SECONDS: Final = 30.0
"""A socket read that takes this long means the server hung: the test fails."""

TRICKLED_HEAD: Final = (
    b"GET /api/v1/healthcheck HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 200
)
"""The start of a head that a client sends a byte at a time and never finishes."""


def basic(access_key_id: str = ACCESS_KEY_ID, secret: str = SECRET_ACCESS_KEY) -> str:
    """An Authorization header value for these credentials."""
    return "Basic " + base64.b64encode(f"{access_key_id}:{secret}".encode()).decode()


def connect(server: Server, *, source: str = "127.0.0.1") -> socket.socket:
    """A connection to the server from the loopback address `source`."""
    return socket.create_connection(
        ("127.0.0.1", server.port), timeout=HANG_SECONDS, source_address=(source, 0)
    )


def head(
    method: str,
    path: str,
    *,
    size: int,
    authorization: str | None = None,
    content_type: str = "application/octet-stream",
) -> bytes:
    """A request head for a `size`-byte body (path below /api/v1)."""
    lines = [
        f"{method} /api/v1{path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Content-Type: {content_type}",
        f"Content-Length: {size}",
    ]
    if authorization is not None:
        lines.append(f"Authorization: {authorization}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def open_request(
    server: Server,
    method: str,
    path: str,
    *,
    size: int,
    authorization: str | None = None,
    content_type: str = "application/octet-stream",
    first: bytes = b"",
    source: str = "127.0.0.1",
) -> socket.socket:
    """A connection with a request's head and the first bytes of a `size`-byte body sent."""
    sock = connect(server, source=source)
    sock.sendall(
        head(method, path, size=size, authorization=authorization, content_type=content_type)
        + first
    )
    return sock


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """The status and the whole response (head and the body its Content-Length says)."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := sock.recv(65536)):
        data += chunk
    if b"\r\n\r\n" not in data:
        raise ConnectionError(f"the server closed the connection without answering: {data!r}")
    response_head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in response_head.lower().split(b"\r\n")
            if line.startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length and (chunk := sock.recv(65536)):
        body += chunk
    return int(response_head.split(b" ", 2)[1]), response_head + b"\r\n\r\n" + body


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed the connection (the read returns nothing or resets);
    a read that hangs for HANG_SECONDS raises TimeoutError, failing the test."""
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True


def closed_by_server_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes the connection within `seconds` (False: still open, nothing
    read). Only a bound on waiting: the caller's assertion is about which, not how soon."""
    previous = sock.gettimeout()
    sock.settimeout(seconds)
    try:
        return closed_by_server(sock)
    except TimeoutError:
        return False
    finally:
        sock.settimeout(previous)


def readable_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server sends something (or closes) within `seconds`; nothing is read."""
    readable, _, _ = select.select([sock], [], [], seconds)
    return bool(readable)
