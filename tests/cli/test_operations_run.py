"""`kvlake operations run`, the operator's command that runs recorded operations on the lake
directly, in a temporary data dir over its folder and over S3 (`kvlake delete` and the other
`kvlake operations` commands go over the API: tests/api/test_operations_cli.py)."""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner, Result

from kvlake.cli import main
from kvlake.config import load_settings
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Operation, parse_branch_path


@pytest.fixture(autouse=True)
def small_batches(lake_env: pytest.MonkeyPatch) -> None:
    lake_env.setenv("KVLAKE_OPERATIONS_BATCH_SIZE", "3")


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


def test_operations_run_finishes_what_was_recorded_here(namespace: str) -> None:
    _lake_with(namespace, ["a/1", "a/2", "b/1"])
    with Lake.open(load_settings()) as lake:
        created = lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo1/main/a/"), BulkDeleteOptions(), created_by="t"
        )
    ran = run("operations", "run")
    assert ran.exit_code == 0, ran.output
    assert f"{created.id} completed: 2 deleted, 0 failed, 0 skipped of 2" in ran.stdout
    assert [op.status for op in _operations()] == ["completed"]
    assert _listed() == ["b/1"]


def test_operations_run_of_a_dry_run_says_what_it_would_delete(namespace: str) -> None:
    _lake_with(namespace, ["a/1", "a/2"])
    with Lake.open(load_settings()) as lake:
        lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo1/main/a/"),
            BulkDeleteOptions(dry_run=True),
            created_by="t",
        )
    ran = run("operations", "run")
    assert ran.exit_code == 0, ran.output
    assert "would delete 2, 0 failed" in ran.stdout and " deleted," not in ran.stdout
    assert _listed() == ["a/1", "a/2"]
