"""`kvlake gc rules`: get prints lakeFS's JSON, set takes a file or options, errors are one line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kvlake.cli import main
from kvlake.config import load_settings
from kvlake.lake import Lake
from tests.test_cli import assert_user_error, run
from tests.test_cli import clean_env as clean_env  # autouse: no KVLAKE_* leaks, data in tmp_path


def make_repository(name: str = "rules-repo") -> None:
    with Lake.open(load_settings()) as lake:
        lake.graveler.create_repository(name, storage_namespace=f"local://lake/{name}")


def test_set_with_options_then_get_prints_lakefs_json() -> None:
    make_repository()
    result = run(
        "gc", "rules", "set", "rules-repo", "--default-days", "7", "--branch", "main=30",
        "--branch", "dev=0",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "set garbage collection rules of rules-repo: 7 days by default, 2 branch rules\n"
    )
    shown = run("gc", "rules", "get", "rules-repo")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == {
        "default_retention_days": 7,
        "branches": [
            {"branch_id": "dev", "retention_days": 0},
            {"branch_id": "main", "retention_days": 30},
        ],
    }


def test_set_from_a_file_or_stdin_replaces_the_rules(tmp_path: Path) -> None:
    make_repository()
    main_rule = {"branch_id": "main", "retention_days": 28}
    rules = {"default_retention_days": 21, "branches": [main_rule]}
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    assert run("gc", "rules", "set", "rules-repo", str(path)).exit_code == 0
    assert json.loads(run("gc", "rules", "get", "rules-repo").stdout) == rules
    piped = CliRunner().invoke(
        main,
        ["gc", "rules", "set", "rules-repo", "-"],
        input='{"default_retention_days": 0, "branches": []}',
    )
    assert piped.exit_code == 0, piped.output
    assert json.loads(run("gc", "rules", "get", "rules-repo").stdout) == {
        "default_retention_days": 0,
        "branches": [],
    }


def test_delete_removes_the_rules() -> None:
    make_repository()
    run("gc", "rules", "set", "rules-repo", "--default-days", "3")
    deleted = run("gc", "rules", "delete", "rules-repo")
    assert deleted.exit_code == 0 and deleted.stdout == (
        "deleted garbage collection rules of rules-repo\n"
    )
    assert_user_error(
        run("gc", "rules", "get", "rules-repo"),
        "repository 'rules-repo' has no garbage collection rules",
    )


def test_bad_rules_are_one_line_errors_and_change_nothing(tmp_path: Path) -> None:
    make_repository()
    assert run("gc", "rules", "set", "rules-repo", "--default-days", "5").exit_code == 0
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
        assert_user_error(run("gc", "rules", "set", "rules-repo", *args), message)
    assert json.loads(run("gc", "rules", "get", "rules-repo").stdout) == {
        "default_retention_days": 5,
        "branches": [],
    }


def test_a_missing_repository_is_one_line() -> None:
    for command in ("get", "delete"):
        assert_user_error(run("gc", "rules", command, "nosuch"), "repository 'nosuch' not found")
    assert_user_error(
        run("gc", "rules", "set", "nosuch", "--default-days", "1"), "repository 'nosuch' not found"
    )
