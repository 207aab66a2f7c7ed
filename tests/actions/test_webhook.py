"""Webhook calls against a real loopback HTTP server: allowed hosts, timeouts, status codes."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kvlake.actions import HookFailedError, Webhook
from kvlake.actions.webhook import call_webhook


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 -- http.server's name
        self.rfile.read(int(self.headers["Content-Length"]))
        status = 204 if self.path.startswith("/ok") else 503
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _hook(url: str) -> Webhook:
    return Webhook(url=url, timeout=5.0)


def test_loopback_answers_pass_or_fail_by_status(port: int) -> None:
    assert "Response: 204" in call_webhook(_hook(f"http://127.0.0.1:{port}/ok"), b"{}", allowed=())
    with pytest.raises(HookFailedError, match=r"request failed \(status code: 503\)"):
        call_webhook(_hook(f"http://127.0.0.1:{port}/no"), b"{}", allowed=())


def test_a_host_not_allowed_is_never_called(port: int) -> None:
    # 0.0.0.0 reaches this machine's listeners on Linux, yet it is no loopback address:
    # refused until configured, the call never leaves (the server would have answered 204).
    url = f"http://0.0.0.0:{port}/ok"
    with pytest.raises(HookFailedError, match="webhook host '0.0.0.0' is not allowed"):
        call_webhook(_hook(url), b"{}", allowed=())
    assert "Response: 204" in call_webhook(_hook(url), b"{}", allowed=frozenset({"0.0.0.0"}))
