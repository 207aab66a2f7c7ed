"""Every accepted connection gets TCP_NODELAY, whatever socket uvicorn bound."""

from __future__ import annotations

import asyncio
import socket

from kvlake.api.protocols import protocol_path, set_no_delay


class _Transport(asyncio.BaseTransport):
    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock

    def get_extra_info(self, name: str, default: object = None) -> object:
        return self._sock if name == "socket" else default


def test_connections_of_a_protocol_zero_listener_get_no_delay() -> None:
    # uvicorn's multi-worker listener is bound with protocol 0, as this one is.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
                set_no_delay(_Transport(accepted))
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_the_protocol_path_names_an_importable_class() -> None:
    for choice in ("auto", "h11", "httptools"):
        module, _, name = protocol_path(choice).partition(":")
        assert hasattr(__import__(module, fromlist=[name]), name)
    assert protocol_path("h11").endswith(":NoDelayH11Protocol")
    assert protocol_path("httptools").endswith(":NoDelayHttpToolsProtocol")
    assert protocol_path() == protocol_path("httptools")  # installed: the faster one
