"""`kvlake gc rules` and lakectl's `gc set-config|get-config|delete-config`: the retention
rules over the API, in lakeFS's JSON; bad input is one line and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Cli


def test_set_with_options_then_get_prints_lakefs_json(cli: Cli, repository: str) -> None:
    result = cli(
        "gc", "rules", "set", repository, "--default-days", "7", "--branch", "main=30",
        "--branch", "dev=0",
    )  # fmt: skip
    assert result.ok().stdout == (
        f"set garbage collection rules of {repository}: 7 days by default, 2 branch rules\n"
    )
    assert json.loads(cli("gc", "rules", "get", repository).ok().stdout) == {
        "default_retention_days": 7,
        "branches": [
            {"branch_id": "dev", "retention_days": 0},
            {"branch_id": "main", "retention_days": 30},
        ],
    }
    table = cli("gc", "get-config", f"lakefs://{repository}").ok().stdout.splitlines()
    assert table[0] == "default retention days: 7"
    assert table[1].split() == ["BRANCH", "RETENTION", "DAYS"]
    assert table[2].split() == ["dev", "0"]


def test_set_config_from_a_file_or_stdin_replaces_the_rules(
    cli: Cli, repository: str, tmp_path: Path
) -> None:
    uri = f"lakefs://{repository}"
    main_rule = {"branch_id": "main", "retention_days": 28}
    rules = {"default_retention_days": 21, "branches": [main_rule]}
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    cli("gc", "set-config", uri, "-f", str(path)).ok()
    assert cli("gc", "get-config", uri, "--json").json() == rules
    empty = '{"default_retention_days": 0, "branches": []}'
    cli("gc", "set-config", uri, "-f", "-", stdin=empty).ok()
    assert cli("gc", "get-config", uri, "--json").json() == json.loads(empty)


def test_delete_removes_the_rules(cli: Cli, repository: str) -> None:
    cli("gc", "rules", "set", repository, "--default-days", "3").ok()
    deleted = cli("gc", "delete-config", f"lakefs://{repository}").ok()
    assert deleted.stdout == f"deleted garbage collection rules of {repository}\n"
    cli("gc", "rules", "get", repository).error(4)


def test_bad_rules_are_one_line_errors_and_change_nothing(
    cli: Cli, repository: str, tmp_path: Path
) -> None:
    cli("gc", "rules", "set", repository, "--default-days", "5").ok()
    extra = tmp_path / "extra.json"
    extra.write_text('{"default_retention_days": 1, "branches": [], "retention": 3}')
    negative = tmp_path / "negative.json"
    negative.write_text('{"default_retention_days": -1, "branches": []}')
    bad_calls = [
        (("--default-days", "-1"), "negative retention"),
        (("--default-days", "1", "--branch", "main=-3"), "negative retention"),
        (("--default-days", "1", "--branch", "main"), "is not NAME=DAYS"),
        (("--default-days", "1", "--branch", "=3"), "is not NAME=DAYS"),
        (("--default-days", "1", "--branch", "a=b"), "is not NAME=DAYS"),
        (("--branch", "main=3"), "give a rules FILE, or --default-days"),
        ((), "give a rules FILE, or --default-days"),
        ((str(extra),), "unknown field `retention`"),
        ((str(negative),), "negative retention"),
        ((str(negative), "--default-days", "2"), "not both"),
    ]
    for args, message in bad_calls:
        cli("gc", "rules", "set", repository, *args).error(2, message)
    assert json.loads(cli("gc", "rules", "get", repository).ok().stdout) == {
        "default_retention_days": 5,
        "branches": [],
    }


def test_a_missing_repository_is_one_line(cli: Cli) -> None:
    cli("gc", "rules", "get", "nosuch").error(4, "nosuch")
    cli("gc", "get-config", "lakefs://nosuch").error(4, "nosuch")
    cli("gc", "rules", "set", "nosuch", "--default-days", "1").error(4, "nosuch")
