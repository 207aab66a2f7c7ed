"""A bulk delete whose process is SIGKILLed at any point completes after a restart, exactly.

The issue's scenario is 200,000 objects; the routine test uses 2,000 committed
and 30 staged objects in batches of 100 (about 20 s for all kill points on 2
cores), which crosses every phase: enumeration, processing, the outcome/fold
gap and the commit, on a local folder and on S3. A child process runs the
operation on SQLite and kills itself with SIGKILL at a chosen KV call; this
process then finds the lease
still held (nothing happens), moves its clock past the lease, resumes, and
checks: completed, deleted + failed + skipped = total, counters and `done`
never went backwards across both processes, nothing outside the path touched,
and the commit holds exactly the survivors.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.kv import Store, open_store
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Operation, local_engine, parse_branch_path
from kvlake.operations import keys as operation_keys
from tests.operations.crash_setup import LEASE_TIME, fill, journal, lake_over, record_swaps
from tests.support import FakeClock
from tests.support.backends import BLOCKSTORES

COMMITTED, STAGED = 2000, 30
OUTSIDE = ["de", "del", "dek/1", "z/1"]
TOTAL = COMMITTED + STAGED


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lake every kill starts from, on a local folder, copied for each test."""
    folder = tmp_path_factory.mktemp("crash-template")
    with open_store(f"sqlite://{folder}/kv.db") as store:
        with open_blockstore(f"local://{folder}/blocks") as blocks:
            _fill(store, blocks)
    return folder


def _fill(store: Store, blocks: BlockStore) -> None:
    fill(lake_over(store, blocks, FakeClock()), committed=COMMITTED, staged=STAGED, outside=OUTSIDE)


def _lake_files(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The KV and blockstore URLs of a fresh copy of the lake: the template's files on a
    local folder; on S3 (whose bucket the test's fixture has just emptied) filled anew."""
    kv_url = f"sqlite://{tmp_path}/kv.db"
    if kind == "local":
        template = request.getfixturevalue("template")
        shutil.copy(template / "kv.db", tmp_path / "kv.db")
        shutil.copytree(template / "blocks", tmp_path / "blocks")
        return kv_url, f"local://{tmp_path}/blocks"
    blocks_url = BLOCKSTORES[kind](request, tmp_path)
    with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
        _fill(store, blocks)
    return kv_url, blocks_url


KILL_POINTS = {
    # (op, skip, partition): "operations" resolves to the record's partition,
    # "batches" to the operation's batch partition, "staging" matches any staging write.
    "enumerating": ("set_if", 6, "operations"),
    "tombstones": ("set_many", 7, None),
    "outcome-before-fold": ("after:set", 11, "batches"),
    # Record swaps: claim, 21 enumeration checkpoints, 21 folds, then #43 marks it
    # committing and #44 records the commit id, so these two bracket the graveler commit.
    "before-commit": ("after:set_if", 43, "operations"),
    "committed-not-recorded": ("set_if", 44, "operations"),
}
# And a few seeded points among all of the run's KV calls (about 280 of them).
KILL_POINTS |= {
    f"any-call-{n}": ("*", n, None) for n in sorted(random.Random(13).sample(range(1, 280), 3))
}


def _partition(name: str | None, operation_id: str) -> list[str]:
    if name == "operations":
        return [operation_keys.OPERATIONS.decode()]
    if name == "batches":
        return [operation_keys.batches_partition(operation_id).decode()]
    return []


@pytest.mark.parametrize("kind", sorted(BLOCKSTORES))
@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_a_killed_bulk_delete_resumes_and_completes_exactly(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path, point: str
) -> None:
    # On S3 the child reaches moto through the AWS_* variables the fixture set here.
    kv_url, blocks_url = _lake_files(kind, request, tmp_path)
    clock = FakeClock()
    with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
        lake = lake_over(store, blocks, clock)
        operation = lake.bulk_deletes.create(
            parse_branch_path("lakefs://repo1/main/del/"),
            BulkDeleteOptions(commit=True),
            created_by="alice",
        )
    op, skip, partition = KILL_POINTS[point]
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.operations.crash_child",
            kv_url,
            blocks_url,
            operation.id,
            str(clock.now),
            op,
            str(skip),
            *_partition(partition, operation.id),
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
        lake = lake_over(store, blocks, clock)
        record_swaps(lake, kv_url)
        engine = local_engine(lake.engine_context(owner="restarted"))
        held = engine.run(operation.id, threading.Event())
        assert held.owner == "doomed" and not held.finished  # its lease still holds
        clock.advance(LEASE_TIME + 1)
        final = engine.run(operation.id, threading.Event())
        _check(lake_paths(lake), final, journal(kv_url))


def lake_paths(lake: Lake) -> tuple[list[str], list[str]]:
    repo = lake.graveler.get_repository("repo1")
    staged = [k.decode() for k, _ in lake.graveler.list(repo, "main")]
    commit = lake.graveler.get_branch(repo, "main").commit_id
    committed = [k.decode() for k, _ in lake.graveler.list(repo, commit)]
    return staged, committed


def _check(paths: tuple[list[str], list[str]], final: Operation, swaps: list[Operation]) -> None:
    staged, committed = paths
    assert final.status == "completed", final
    c = final.counters
    assert c.enumerated == TOTAL
    assert (c.deleted, c.failed, c.skipped) == (TOTAL, 0, 0)
    assert staged == committed == sorted(OUTSIDE)
    assert final.commit_id
    ours = [s for s in swaps if s.id == final.id]
    assert ours, "no operation record was written"
    for before, after in zip(ours, ours[1:], strict=False):
        for name in ("enumerated", "deleted", "failed", "skipped"):
            assert getattr(after.counters, name) >= getattr(before.counters, name), name
        assert after.done >= before.done and after.batches >= before.batches
