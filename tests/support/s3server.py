"""A real S3 protocol server on loopback for the tests that use S3, and a proxy that breaks it.

`MotoS3` runs moto's server mode (Werkzeug, in a thread of the test process) on
127.0.0.1 with a free port: boto3 speaks HTTP to it exactly as to AWS, so no
client call is mocked. `FaultProxy` sits between the adapter and that server
and answers chosen requests itself (503 SlowDown, 500, a DeleteObjects whose
keys all failed, a dropped connection, an answer cut in half), forwarding the
rest unchanged: the faults of a throttling or
flaky store, injected deterministically.
"""

from __future__ import annotations

import http.client
import logging
import re
import socket
import threading
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from xml.sax.saxutils import escape, unescape

import boto3
import pytest
from moto.server import ThreadedMotoServer

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

ACCESS_KEY_ID = SECRET_ACCESS_KEY = "testing"


def lake_bucket_url(request: pytest.FixtureRequest) -> str:
    """Start the session's S3 server for this test (the `s3_server` fixture: reset, the
    contract's buckets, AWS_ENDPOINT_URL pointing at it) and return the blockstore URL
    whose root is its bucket `lake`, so namespaces are `s3://lake/<path>`."""
    request.getfixturevalue("s3_server")
    return "s3://lake"


def lake_bucket_env(request: pytest.FixtureRequest, blank: Path) -> dict[str, str]:
    """The environment of a kvlake process (a server, a CLI run, Spark's tasks) whose
    blockstore is the bucket `lake` of the session's S3 server, reset for the test (the
    `s3_server` fixture); AWS configuration files in `blank`, which need not exist."""
    moto: MotoS3 = request.getfixturevalue("s3_server")
    return server_env(moto.endpoint, "lake", blank)


def server_env(endpoint: str, bucket: str, blank: Path) -> dict[str, str]:
    """The environment of a kvlake process (a server, a CLI run) whose blockstore is the
    bucket `bucket` of the S3 server at `endpoint`: the URL and the test credentials, and
    AWS configuration files in `blank` (which need not exist), so nothing of the machine's
    own AWS configuration is read."""
    return {
        "KVLAKE_BLOCKSTORE_URL": f"s3://{bucket}?endpoint_url={endpoint}",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(blank / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(blank / "credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


class MotoS3:
    """moto's S3 server on a free loopback port; `reset` empties it between tests."""

    def __init__(self) -> None:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.admin = self.client()
        """One client for setting up and inspecting state (a new one costs about 0.2 s)."""

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            answer.read()

    def client(self) -> S3Client:
        """A plain boto3 client for setting up and inspecting the server's state."""
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY_ID,
            aws_secret_access_key=SECRET_ACCESS_KEY,
        )

    def ensure_bucket(self, bucket: str) -> None:
        """Create `bucket` unless it exists: tests that reset the server may have emptied it."""
        try:
            self.admin.head_bucket(Bucket=bucket)
        except self.admin.exceptions.ClientError:
            self.admin.create_bucket(Bucket=bucket)

    def stop(self) -> None:
        self.admin.close()
        self._server.stop()


@dataclass
class Fault:
    """Answer the next `count` requests that `matches` selects with this fault."""

    matches: Callable[[str, str], bool]
    """(method, path with query) -> whether the fault applies."""
    count: int
    status: int = 503
    code: str = "SlowDown"
    fail_delete_keys: bool = False
    """For DeleteObjects: answer 200 with every key in <Error>, deleting nothing."""
    drop: bool = False
    """Read the request, then close the connection without answering."""
    truncate: bool = False
    """Forward, but send only half of the answer's body, then close the connection."""


@dataclass
class FaultLog:
    answered: list[str] = field(default_factory=list)
    forwarded: list[str] = field(default_factory=list)


class FaultProxy:
    """An HTTP proxy to an S3 server that answers planned faults itself. Thread-safe."""

    def __init__(self, upstream: str) -> None:
        self._upstream = urlsplit(upstream)
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self.log = FaultLog()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass  # quiet: the log is `FaultProxy.log`

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fault = proxy._take(self.command, self.path)
                if fault is None or fault.truncate:
                    proxy.log.forwarded.append(f"{self.command} {self.path}")
                    self._forward(body, truncate=fault is not None)
                elif fault.drop:
                    proxy.log.answered.append(f"{self.command} {self.path} dropped")
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    proxy.log.answered.append(f"{self.command} {self.path} {fault.code}")
                    self._answer(fault, body)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

            def _forward(self, body: bytes, *, truncate: bool = False) -> None:
                host, port = proxy._upstream.hostname or "", proxy._upstream.port
                connection = http.client.HTTPConnection(host, port, timeout=30)
                try:
                    connection.request(self.command, self.path, body, dict(self.headers))
                    answer = connection.getresponse()
                    data = answer.read()
                finally:
                    connection.close()
                self.send_response(answer.status)
                # A HEAD answer has no body but the object's Content-Length: keep that one.
                dropped: tuple[str, ...] = ("connection", "transfer-encoding")
                if self.command != "HEAD":
                    dropped += ("content-length",)
                for name, value in answer.getheaders():
                    if name.lower() not in dropped:
                        self.send_header(name, value)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if truncate:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                elif self.command != "HEAD":
                    self.wfile.write(data)

            def _answer(self, fault: Fault, body: bytes) -> None:
                if fault.fail_delete_keys:
                    keys = re.findall(rb"<Key>(.*?)</Key>", body)
                    errors = "".join(
                        f"<Error><Key>{escape(unescape(key.decode()))}</Key>"
                        f"<Code>{fault.code}</Code><Message>injected</Message></Error>"
                        for key in keys
                    )
                    status, data = 200, f"<DeleteResult>{errors}</DeleteResult>".encode()
                else:
                    status = fault.status
                    data = (
                        f"<Error><Code>{fault.code}</Code><Message>injected</Message></Error>"
                    ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def inject(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def _take(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.count > 0 and fault.matches(method, path):
                    fault.count -= 1
                    return fault
        return None

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
