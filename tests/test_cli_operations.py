"""`kvlake delete` and `kvlake operations run` on a lake in a temporary data
dir, over its folder and over S3 (the other `kvlake operations` commands go over the API:
tests/api/test_operations_cli.py)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kvlake.cli import main
from kvlake.config import load_settings
from kvlake.lake import Lake
from kvlake.operations import Operation
from tests.test_cli import namespace as namespace  # fixture: a local folder, then S3


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in os.environ:
        if name.startswith("KVLAKE_") and not name.startswith("KVLAKE_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KVLAKE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KVLAKE_OPERATIONS_BATCH_SIZE", "3")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _lake_with(namespace: str, paths: list[str]) -> None:
    with Lake.open(load_settings()) as lake:
        repo = lake.graveler.create_repository("repo1", storage_namespace=namespace)
        for path in paths:
            lake.catalog.upload(repo, "main", path, io.BytesIO(b"x"))
        lake.graveler.commit(repo, "main", committer="t", message="data")


def _listed() -> list[str]:
    with Lake.open(load_settings()) as lake:
        repo = lake.graveler.get_repository("repo1")
        return [key.decode() for key, _ in lake.graveler.list(repo, "main")]


def _operations() -> list[Operation]:
    with Lake.open(load_settings()) as lake:
        return list(lake.ledger.list())


def test_delete_wait_deletes_and_draws_progress(namespace: str) -> None:
    _lake_with(namespace, [f"a/{i}" for i in range(7)] + ["b/1"])
    result = run("delete", "lakefs://repo1/main/a/", "--wait", "--commit", "gone")
    assert result.exit_code == 0, result.output
    assert "completed: 7 deleted, 0 failed, 0 skipped of 7; commit " in result.stdout
    assert "7/7" in result.stderr and "ETA" in result.stderr
    assert _listed() == ["b/1"]
    assert [(op.prefix, op.status) for op in _operations()] == [("a/", "completed")]


def test_delete_without_wait_records_it_and_run_finishes_it(namespace: str) -> None:
    _lake_with(namespace, ["a/1", "a/2"])
    created = run("delete", "lakefs://repo1/main/a/")
    assert created.exit_code == 0, created.output
    operation_id = created.stdout.split()[1].rstrip(":")
    assert [(op.id, op.status) for op in _operations()] == [(operation_id, "not_started")]
    ran = run("operations", "run")
    assert ran.exit_code == 0 and f"{operation_id} completed: 2 deleted" in ran.stdout
    assert [op.status for op in _operations()] == ["completed"]
    assert _listed() == []


def test_a_locked_path_is_skipped_and_listed_as_a_failure(namespace: str) -> None:
    _lake_with(namespace, ["a/1", "a/2"])
    # `kvlake lock` goes through the API (tests/cli/test_locks.py): here bob locks in the lake.
    with Lake.open(load_settings()) as lake:
        lake.locks.acquire(lake.graveler.get_repository("repo1"), "a/2", owner="bob", ttl=600)
    result = run("delete", "lakefs://repo1/main/a/", "--wait")
    assert result.exit_code == 1 and "completed_with_errors" in result.stdout
    operation_id = result.stdout.split()[1].rstrip(":")
    with Lake.open(load_settings()) as lake:
        ((path, failure),) = lake.ledger.failures(operation_id).failures
    assert (failure.outcome, path) == ("skipped", "a/2")
    assert failure.reason.startswith("write-locked by 'bob'")


def test_bad_input_is_one_line_and_records_nothing(namespace: str) -> None:
    _lake_with(namespace, ["a/1"])
    result = run("delete", "repo1/main/a/")
    assert result.exit_code == 2 and "is not a lakefs:// URI" in result.stderr
    bad_pair = run("delete", "lakefs://repo1/main/a/", "--metadata", "color")
    assert bad_pair.exit_code == 2 and "'color' is not KEY=VALUE" in bad_pair.stderr
    assert _operations() == []


def test_a_dry_run_says_what_it_would_delete(namespace: str) -> None:
    _lake_with(namespace, ["a/1", "a/2"])
    result = run("delete", "lakefs://repo1/main/a/", "--wait", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would delete 2, 0 failed" in result.stdout and " deleted," not in result.stdout
    assert _listed() == ["a/1", "a/2"]
