"""The gateway's bodies hold the same per-process budget and pace as the REST API's.

A REST request that sends only the start of a 1 MiB JSON body fills a 1 MiB
budget (or its address's share of a larger one); a PutObject through the
gateway is then refused with 503 until the holder leaves, and goes through
after. A PutObject whose body trickles below the minimum rate is cut as a REST
upload is (the doors share kvlake/http's reader), with S3's RequestTimeout, and
nothing is stored. Nothing here measures time.
"""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from urllib.parse import urlsplit
from xml.etree import ElementTree

import httpx
import pytest

from tests.api import rawhttp
from tests.api.conftest import StartServer
from tests.api.rawhttp import HANG_SECONDS
from tests.api.server import Server
from tests.api.test_limits import _open
from tests.gateway.conftest import s3_client
from tests.gateway.signing import send
from tests.support import wait_until


@pytest.mark.parametrize("start_server", ["local"], indirect=True)  # no blob is involved
@pytest.mark.parametrize(
    ("budget", "share"),
    [
        pytest.param(1 << 20, "1", id="the-whole-budget"),
        # Half of 2 MiB is free, but this address's share is full: the gateway holds its
        # body under the client's address, as the REST API does, not under another.
        pytest.param(2 << 20, "0.5", id="the-addresss-share"),
    ],
)
def test_a_gateway_upload_waits_for_the_body_budget_the_rest_api_fills(
    start_server: StartServer, tmp_path: Path, budget: int, share: str
) -> None:
    server: Server = start_server(
        tmp_path / "server",
        env={"KVLAKE_SERVER_BODY_BUDGET": str(budget), "KVLAKE_SERVER_CLIENT_BODY_SHARE": share},
    )
    repo = f"gw-{uuid.uuid4().hex[:12]}"
    with server.http() as http:
        made = http.post(
            "/repositories",
            json={"name": repo, "storage_namespace": server.storage.namespace(repo)},
        )
        assert made.status_code == 201, made.text
    holder: socket.socket = _open(
        server, "POST", "/repositories", size=1 << 20, content_type="application/json", first=b"{"
    )
    answers: list[httpx.Response] = []

    def put() -> int:
        answers.append(send("PUT", f"{server.url}/{repo}/main/x", body=b"x" * 1000))
        return answers[-1].status_code

    try:
        wait_until(lambda: put() == 503, message="the body budget to be full")
        code = ElementTree.fromstring(answers[-1].content).findtext("Code")
        assert code == "ServiceUnavailable"
    finally:
        holder.close()
    wait_until(lambda: put() != 503, message="the budget to be freed")
    assert answers[-1].status_code == 200, answers[-1].text


@pytest.mark.parametrize("start_server", ["local"], indirect=True)  # no blob is stored
def test_a_trickled_gateway_body_is_cut_as_a_rest_body_is(
    start_server: StartServer, tmp_path: Path
) -> None:
    # Each pause is far within the read timeout; the average is far below the rate.
    server: Server = start_server(
        tmp_path / "server",
        env={"KVLAKE_SERVER_BODY_MIN_RATE": "10000", "KVLAKE_SERVER_BODY_RATE_GRACE": "1"},
    )
    repo = f"gw-{uuid.uuid4().hex[:12]}"
    with server.http() as http:
        namespace = server.storage.namespace(repo)
        made = http.post("/repositories", json={"name": repo, "storage_namespace": namespace})
        assert made.status_code == 201, made.text
    url = urlsplit(
        s3_client(server).generate_presigned_url(
            "put_object", Params={"Bucket": repo, "Key": "main/trickled"}, ExpiresIn=600
        )
    )
    head = f"PUT {url.path}?{url.query} HTTP/1.1\r\nHost: {url.netloc}\r\n"
    head += f"Content-Length: {4 << 20}\r\n\r\n"
    with rawhttp.connect(server) as sock:
        sock.sendall(head.encode() + b"x" * 1000)
        for _ in range(int(HANG_SECONDS / 0.2)):
            if rawhttp.readable_within(sock, 0.2):
                break
            try:
                sock.sendall(b"x" * 100)
            except OSError:
                break
        status, data = rawhttp.read_response(sock)
    assert status == 400, data
    assert b"<Code>RequestTimeout</Code>" in data and b"slower than 10000 bytes/s" in data
    assert server.storage.unfinished_writes(repo) == []
    assert server.storage.keys(namespace, "data/") == []
