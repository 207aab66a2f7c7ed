"""`kvlake actions runs list|describe` over a real server, and `actions validate` on a file:
lakectl's grammar, text and `--json`, one-line errors."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import Cli

ACTION = """\
name: check message
on:
  pre-commit:
    branches: [main]
hooks:
  - id: says_message
    type: lua
    properties:
      script: |
        print("checked " .. action.commit.message)
        if action.commit.message == "refuse me" then error("refused by the hook") end
"""


def test_runs_are_listed_and_described_with_their_hooks_output(
    cli: Cli, repository: str, tmp_path: Path
) -> None:
    repo = f"lakefs://{repository}"
    assert cli("actions", "runs", "list", repo).ok().stdout == f"no action runs in {repository}\n"
    action = tmp_path / "check.yaml"
    action.write_text(ACTION)
    cli("fs", "upload", f"{repo}/main/_lakefs_actions/check.yaml", "-s", str(action)).ok()
    cli("commit", f"{repo}/main", "-m", "add the action").ok()
    data = tmp_path / "data.csv"
    data.write_text("id\n1\n")
    cli("fs", "upload", f"{repo}/main/data.csv", "-s", str(data)).ok()
    cli("commit", f"{repo}/main", "-m", "refuse me").error(5, "refused by the hook")
    cli("commit", f"{repo}/main", "-m", "add data").ok()

    listed = cli("actions", "runs", "list", repo, "--json").json()
    # Newest first; the action ran on the commit that added it too (it reads the source).
    assert [run["status"] for run in listed] == ["completed", "failed", "completed"]
    assert {run["event_type"] for run in listed} == {"pre-commit"}
    only_main = cli("actions", "runs", "list", repo, "--branch", "dev", "--json").json()
    assert only_main == []
    table = cli("actions", "runs", "list", repo, "--amount", "1").ok().stdout.splitlines()
    assert table[0].split()[:2] == ["RUN", "ID"] and len(table) == 2

    failed = listed[1]["run_id"]
    described = cli("actions", "runs", "describe", repo, failed).ok().stdout
    assert "checked refuse me" in described and "says_message" in described
    shown = cli("actions", "runs", "describe", repo, listed[0]["run_id"], "--json").json()
    (hook,) = shown["hooks"]
    assert hook["status"] == "completed" and hook["output"].startswith("checked add data")
    cli("actions", "runs", "describe", repo, "nosuchrun").error(4, "nosuchrun")


def test_validate_checks_a_file_as_the_server_reads_it(cli: Cli, tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(ACTION)
    assert cli("actions", "validate", str(good)).ok().stdout == (
        f"{good}: valid action 'check message' on pre-commit: says_message (lua)\n"
    )
    assert cli("actions", "validate", str(good), "--json").json()["valid"] is True
    bad = tmp_path / "bad.yaml"
    bad.write_text(ACTION.replace("type: lua", "type: carrier-pigeon"))
    cli("actions", "validate", str(bad)).error(2, "bad.yaml", "carrier-pigeon")
