"""`kvlake repo delete --purge --wait` and `repo purge-status`: a purge followed over the API,
the send delay counted down, then the blobs deleted, on a server with a short send delay."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.server import Server
from tests.cli.conftest import Cli, module_server

SEND_DELAY = 3


@pytest.fixture(scope="module")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Deletion workers may start 3 s after a purge; background passes every 0.2 s."""
    yield from module_server(
        tmp_path_factory,
        "purge-server",
        {"KVLAKE_DELETION_SEND_DELAY": str(SEND_DELAY), "KVLAKE_SERVER_JOB_INTERVAL": "0.2"},
    )


def test_wait_counts_the_send_delay_down_then_deletes_every_blob(
    cli: Cli, cli_server: Server, tmp_path: Path
) -> None:
    name = "purged-and-waited"
    namespace = cli_server.storage.namespace(name)
    cli("repo", "create", f"lakefs://{name}", namespace).ok()
    source = tmp_path / "f"
    source.write_bytes(b"data")
    for number in range(3):
        cli("fs", "upload", f"lakefs://{name}/main/{number}", "-s", str(source)).ok()
    assert len(cli_server.storage.keys(namespace)) >= 3

    done = cli("repo", "delete", f"lakefs://{name}", "--purge", "--wait").ok()

    assert done.stdout.startswith(f"deleted repository {name}\npurged {namespace}: ")
    assert "send delay" in done.stderr and "purge" in done.stderr
    assert cli_server.storage.keys(namespace) == []
    status = cli("repo", "purge-status", f"lakefs://{name}", "--json").json()
    assert status["state"] == "done" and status["seconds_until_due"] == 0
    assert status["deleted"] == status["logged"] >= 3 and status["dead_lettered"] == 0
    assert f"purge of {namespace}: done; " in cli("repo", "purge-status", name).ok().stdout


def test_a_purge_not_followed_can_be_read_later(cli: Cli, cli_server: Server) -> None:
    name = "purged-not-waited"
    cli("repo", "create", f"lakefs://{name}", cli_server.storage.namespace(name)).ok()
    deleted = cli("repo", "delete", name, "--purge").ok().stdout
    assert f"follow it with `kvlake repo purge-status {name}`" in deleted
    status = cli("repo", "purge-status", name, "--json").json()
    assert status["state"] in ("requested", "logged", "done")
    assert status["due"] == pytest.approx(status["requested"] + SEND_DELAY)


def test_bad_purge_requests_are_one_line(cli: Cli, cli_server: Server) -> None:
    name = "kept-not-purged"
    cli("repo", "create", f"lakefs://{name}", cli_server.storage.namespace(name)).ok()
    cli("repo", "delete", name, "--wait").error(2, "--wait follows a purge")
    assert name in [r["id"] for r in cli("repo", "list", "--json").json()]  # nothing changed
    cli("repo", "delete", name).ok()
    cli("repo", "purge-status", name).error(4, "never deleted with purge")
