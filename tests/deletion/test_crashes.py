"""A crash at every step never deletes a referenced blob, and recovery leaves none orphaned.

Each scenario runs once to count its KV calls, then once per call and per side
("before": the call never happened; "after": it happened but the caller saw an
error). After each crash, every referenced blob must still exist; after cleaner
passes and workers run to completion, the blobs on disk must be exactly the
referenced ones: nothing was deleted too early and nothing was left unlogged.
The same holds for a blockstore failing each of a worker's calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import KvlakeError
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.blockstores import BlobCall, FaultyBlockStore
from tests.deletion.helpers import DeletionLake
from tests.support import backends
from tests.support.backends import budget

Step = Callable[[DeletionLake], object]


def crashed_lakes(
    blocks: BlockStore, setup: Step, action: Step, *, every: int = 1
) -> Iterator[DeletionLake]:
    """Yield a lake after `action` failed at each of its KV calls in turn (or at every
    `every`-th one, first and last included).

    The lakes share `blocks`, each in a namespace of its own, so none sees another's blobs.
    """
    probe = FaultyStore(MemoryStore())
    lake = DeletionLake(probe, blocks, namespace=backends.namespace(blocks, "probe"))
    setup(lake)
    before = len(probe.calls)
    action(lake)
    total = len(probe.calls) - before
    assert total > 0
    for n in sorted({*range(0, total, every), total - 1}):
        for when in ("before", "after"):
            store = FaultyStore(MemoryStore())
            lake = DeletionLake(store, blocks, namespace=backends.namespace(blocks, f"{when}{n}"))
            setup(lake)
            store.arm(Fault(skip=n, when=when))
            try:
                action(lake)
            except KvlakeError:
                pass  # the crash; what it left behind is what we check
            store.disarm()
            yield lake


def check_recovery(lake: DeletionLake) -> None:
    referenced = lake.referenced()
    assert referenced <= lake.data_blobs(), "a referenced blob is gone right after the crash"
    lake.settle()
    assert lake.data_blobs() == lake.referenced(), "after recovery: blobs != referenced ones"


def staged(lake: DeletionLake) -> None:
    for path in ("a", "b", "c"):
        lake.upload(path, b"1")
    lake.catalog.copy_object(lake.repository, "main", "a", "main", "copy")


def overwrite(lake: DeletionLake) -> None:
    lake.upload("a", b"2")
    lake.upload("b", b"2")


def delete_many(lake: DeletionLake) -> None:
    lake.catalog.delete_objects(lake.repository, "main", ["a", "b", "c"])


def commit_then_clean(lake: DeletionLake) -> None:
    lake.commit()
    lake.upload("b", b"3")
    lake.cleaner.clean_once()


def branch_deletion(lake: DeletionLake) -> None:
    lake.graveler.create_branch(lake.repository, "dev", "main")
    lake.upload("d", b"4", branch="dev")
    lake.upload("d", b"5", branch="dev")
    lake.graveler.delete_branch(lake.repository, "dev")
    lake.cleaner.clean_once()


def logged_overwrites(lake: DeletionLake) -> None:
    staged(lake)
    overwrite(lake)
    lake.clock.advance(60)


def worker_pass(lake: DeletionLake) -> None:
    lake.worker(owner="crashing").run_once()


def purge(lake: DeletionLake) -> None:
    lake.purges.delete_repository("repo1", purge=True)
    lake.cleaner.clean_once()


CRASH_EVERY = (1, 5)
"""Which KV calls crash (every case, sample): every one on a local folder; a fresh lake per call
and side costs 3 to 10 s a case on S3 (0.4 to 1.1 s locally), so S3 crashes at every fifth.
The crash points are KV calls: every run makes the same blob calls."""


@pytest.mark.parametrize(
    ("setup", "action"),
    [
        (staged, overwrite),
        (staged, delete_many),
        (staged, commit_then_clean),
        (staged, branch_deletion),
        (logged_overwrites, worker_pass),
    ],
    ids=["overwrite", "delete-many", "commit-and-clean", "branch-deletion", "worker"],
)
def test_a_crash_at_any_kv_call_deletes_nothing_referenced_and_orphans_nothing(
    setup: Step, action: Step, lake_blocks: BlockStore
) -> None:
    every = budget(lake_blocks, *CRASH_EVERY)
    for lake in crashed_lakes(lake_blocks, setup, action, every=every):
        check_recovery(lake)


def test_a_crash_at_any_kv_call_of_a_purge_still_purges_everything(
    lake_blocks: BlockStore,
) -> None:
    for lake in crashed_lakes(lake_blocks, staged, purge):
        try:
            lake.purges.delete_repository("repo1", purge=True)
        except KvlakeError:
            pass  # the crash had already deleted it; the purge request decides
        lake.settle()
        remaining = list(lake.blocks.list_keys(lake.namespace))
        purged = list(lake.purges.reports())
        assert remaining == [] or purged == [], "a requested purge left blobs behind"


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_blockstore_failing_any_worker_call_never_loses_a_referenced_blob(
    when: str, lake_blocks: BlockStore
) -> None:
    scheme = lake_blocks.scheme  # one namespace per lake: none sees another's blobs
    probe_lake = DeletionLake(
        MemoryStore(), lake_blocks, namespace=backends.namespace(scheme, "probe")
    )
    logged_overwrites(probe_lake)
    probe = FaultyBlockStore(probe_lake.blocks)
    probe_lake.worker(probe).run_once()
    total = len(probe.calls)
    assert total >= 2
    for n in range(total):
        lake = DeletionLake(
            MemoryStore(), lake_blocks, namespace=backends.namespace(scheme, f"run{n}")
        )
        logged_overwrites(lake)

        def fail(call: BlobCall, n: int = n) -> str | None:
            return when if call.index == n else None

        lake.worker(FaultyBlockStore(lake.blocks, fail)).run_once()  # type: ignore[arg-type]
        check_recovery(lake)


def test_a_crash_while_writing_retries_keeps_every_record(lake_blocks: BlockStore) -> None:
    """Invariant 4: a record is removed only after its retry is written (issue 9)."""
    kv = FaultyStore(MemoryStore())
    lake = DeletionLake(kv, lake_blocks)
    for path in ("a", "b", "c", "d"):
        lake.upload(path, b"1")
        lake.upload(path, b"2")  # logs the first blob: unreferenced, so due for deletion
    lake.clock.advance(60)
    pending = lake.pending()
    assert pending == 4

    def refuse_deletes(call: BlobCall) -> str | None:
        return "before" if call.op.startswith("delete") else None

    # Every blob delete fails, so every record is to be retried; then writing the
    # retries fails, as a crash there would: the original records must all remain.
    kv.arm(Fault(op="set_many", times=None))
    try:
        lake.worker(FaultyBlockStore(lake.blocks, refuse_deletes)).run_once()  # type: ignore[arg-type]
    except KvlakeError:
        pass  # the worker may give up on the batch; nothing may be lost either way
    kv.disarm()
    assert lake.pending() == pending, "records were removed before their retries were written"
    check_recovery(lake)
