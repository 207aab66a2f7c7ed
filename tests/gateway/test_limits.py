"""The gateway's bodies hold the same per-process budget as the REST API's (issue 10's limits).

A REST request that sends only the start of a 1 MiB JSON body fills a 1 MiB
budget; a PutObject through the gateway is then refused with 503 until the
holder leaves, and goes through after. Nothing here measures time.
"""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest

from tests.api.conftest import StartServer
from tests.api.server import Server
from tests.api.test_limits import _open
from tests.gateway.signing import send
from tests.support import wait_until


@pytest.mark.parametrize("start_server", ["local"], indirect=True)  # no blob is involved
def test_a_gateway_upload_waits_for_the_body_budget_the_rest_api_fills(
    start_server: StartServer, tmp_path: Path
) -> None:
    server: Server = start_server(
        tmp_path / "server",
        # One address (the test) holds the whole budget: its share is all of it.
        env={"KVLAKE_SERVER_BODY_BUDGET": str(1 << 20), "KVLAKE_SERVER_CLIENT_BODY_SHARE": "1"},
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
