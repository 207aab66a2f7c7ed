"""`kvlake operations list|status|failures|cancel|watch` over the HTTP API of a real server,
as the lakectl user the LAKECTL_* variables name."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from kvlake.cli import main
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server

BULK = "/operations/bulk-delete"


@pytest.fixture(autouse=True)
def lakectl(server: Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LAKECTL_SERVER_ENDPOINT_URL", server.url)
    monkeypatch.setenv("LAKECTL_CREDENTIALS_ACCESS_KEY_ID", ACCESS_KEY_ID)
    monkeypatch.setenv("LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)
    monkeypatch.setenv("LAKECTL_CONFIG_FILE", str(tmp_path / "no-lakectl.yaml"))


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["operations", *args])


def _bulk_delete(http: httpx.Client, repo: str, body: dict[str, object]) -> str:
    for i in range(4):
        answer = http.post(
            f"/repositories/{repo}/branches/main/objects", params={"path": f"a/{i}"}, content=b"x"
        )
        assert answer.status_code == 201, answer.text
    created = http.put(BULK, params={"path": f"lakefs://{repo}/main/a/"}, json=body)
    assert created.status_code == 202, created.text
    operation_id: str = created.json()["operation_id"]
    return operation_id


def test_watch_list_status_and_cancel_over_the_api(http: httpx.Client, repo: str) -> None:
    dry = _bulk_delete(http, repo, {"dry_run": True})
    watched = run("watch", dry, "--json")
    assert watched.exit_code == 0, watched.output
    final = json.loads(watched.stdout)
    assert (final["status"], final["deleted_count"], final["dry_run"]) == ("completed", 4, True)
    assert "would delete 4" in watched.stderr  # the bar says what a dry run does
    assert final["summary"] == "would delete 4 of 4, 0 failed, 0 skipped (dry run: nothing changed)"

    real = _bulk_delete(http, repo, {})
    assert run("watch", real).exit_code == 0
    text = run("list", "--repository", repo).stdout.splitlines()
    assert len(text) == 2, text
    assert dry in text[0] and "would delete 4" in text[0] and "completed" in text[0]
    assert real in text[1] and " deleted 4 " in text[1]
    listed = json.loads(run("list", "--repository", repo, "--json").stdout)
    assert [op["operation_id"] for op in listed] == [dry, real]
    assert json.loads(run("list", "--repository", f"{repo}-none", "--json").stdout) == []
    status = json.loads(run("status", real, "--json").stdout)
    assert (status["kind"], status["path"]) == ("bulk-delete", f"lakefs://{repo}/main/a/")

    finished = run("cancel", real)
    assert finished.exit_code == 5  # a conflict, in docs/cli.md's table
    assert "already finished with status 'completed'" in finished.stderr


def test_bad_input_and_missing_credentials_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unknown = run("list", "--kind", "purge")
    assert unknown.exit_code == 2 and "kind 'purge' is unknown" in unknown.stderr
    missing = run("status", "01aaaaaaaaaaaaaaaaaaaaaaaa")
    assert missing.exit_code == 4 and "not found" in missing.stderr
    monkeypatch.delenv("LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY")
    unconfigured = run("list")
    assert unconfigured.exit_code == 3 and "no credentials" in unconfigured.stderr
