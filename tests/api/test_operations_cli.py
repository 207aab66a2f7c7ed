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


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _objects(http: httpx.Client, repo: str, ref: str = "main") -> list[str]:
    listed = http.get(f"/repositories/{repo}/refs/{ref}/objects/ls", params={"amount": 1000})
    assert listed.status_code == 200, listed.text
    return [entry["path"] for entry in listed.json()["results"]]


def _upload(http: httpx.Client, repo: str, paths: list[str]) -> None:
    for path in paths:
        answer = http.post(
            f"/repositories/{repo}/branches/main/objects", params={"path": path}, content=b"x"
        )
        assert answer.status_code == 201, answer.text


def test_delete_wait_deletes_commits_and_draws_progress(http: httpx.Client, repo: str) -> None:
    _upload(http, repo, [f"a/{i}" for i in range(7)] + ["b/1"])
    result = cli("delete", f"lakefs://{repo}/main/a/", "--wait", "--commit", "gone")
    assert result.exit_code == 0, result.output
    assert "completed: deleted 7 of 7, 0 failed, 0 skipped; commit " in result.stdout
    assert "7/7" in result.stderr  # the progress bar reached the end
    assert _objects(http, repo) == ["b/1"]
    head = http.get(f"/repositories/{repo}/branches/main").json()["commit_id"]
    assert result.stdout.strip().endswith(head)  # the commit it names is the branch's head


def test_delete_without_wait_names_the_operation_to_watch(http: httpx.Client, repo: str) -> None:
    _upload(http, repo, ["a/1", "a/2"])
    created = cli("delete", f"lakefs://{repo}/main/a/", "--json")
    assert created.exit_code == 0, created.output
    operation_id = json.loads(created.stdout)["operation_id"]
    watched = run("watch", operation_id, "--json")
    assert watched.exit_code == 0, watched.output
    assert json.loads(watched.stdout)["deleted_count"] == 2
    assert _objects(http, repo) == []


def test_a_dry_run_delete_says_what_it_would_delete(http: httpx.Client, repo: str) -> None:
    _upload(http, repo, ["a/1", "a/2"])
    result = cli("delete", f"lakefs://{repo}/main/a/", "--wait", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would delete 2 of 2, 0 failed" in result.stdout and " deleted " not in result.stdout
    assert _objects(http, repo) == ["a/1", "a/2"]


def test_delete_refuses_bad_input_in_one_line_and_starts_nothing(repo: str) -> None:
    not_uri = cli("delete", f"{repo}/main/a/")
    assert not_uri.exit_code == 2 and "lakefs://" in not_uri.stderr, not_uri.output
    bad_pair = cli("delete", f"lakefs://{repo}/main/a/", "--metadata", "color")
    assert bad_pair.exit_code == 2 and "'color' is not KEY=VALUE" in bad_pair.stderr
    bad_time = cli("delete", f"lakefs://{repo}/main/a/", "--modified-before", "yesterday")
    assert bad_time.exit_code == 2 and "3d" in bad_time.stderr, bad_time.output
    missing = cli("delete", f"lakefs://{repo}-none/main/a/")
    assert missing.exit_code == 4, missing.output
    for result in (not_uri, bad_pair, bad_time, missing):
        assert "Traceback" not in result.output
    assert json.loads(run("list", "--repository", repo, "--json").stdout) == []
