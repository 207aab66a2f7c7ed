"""Bulk deletes under racing engines, lease take-overs and cancels, interleaved.

Every schedule (scheduler.py) pauses the operations at each KV call. Whatever
the interleaving, a batch is counted exactly once: `done` and the counters
move together by compare-and-swap (`Ledger.fold`), so two engines that both
process a batch, or an engine whose lease was taken over mid-batch, never
double count, and a cancel stops at a batch boundary with counters that match
what was deleted.
"""

from __future__ import annotations

import io
import itertools
import threading
from collections.abc import Callable, Sequence
from functools import partial

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import DeletionSettings, OperationsSettings, Settings
from kvlake.errors import ConflictError, DirtyBranchError, LockedError, NoChangesError
from kvlake.graveler import RangeTombstone, Repository
from kvlake.graveler.keys import staging_partition
from kvlake.graveler.records import encode as encode_value
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import (
    BatchProcessor,
    BulkDeleteDriver,
    BulkDeleteOptions,
    LocalBatches,
    Operation,
    Outcome,
    RangeBatch,
    local_engine,
    parse_branch_path,
)
from tests.interleavings.scheduler import Check, Scheduler, SteppingStore, explore
from tests.interleavings.scheduler import Outcome as Ended
from tests.support import FakeClock, backends
from tests.support.backends import budget
from tests.support.lakes import logged_addresses

Operations = Sequence[Callable[[], object]]
PATHS = [f"d/{i}" for i in range(6)]
_lakes = itertools.count()
"""Numbers the lakes: each schedule's lake has a namespace of its own on the shared blockstore."""


class TickingClock:
    """Time that moves one second per reading: leases of two seconds expire mid-run."""

    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def _lake(
    scheduler: Scheduler,
    blocks: BlockStore,
    *,
    lease_time: float = 600.0,
    ticking: bool = False,
    clock: Callable[[], float] | None = None,
) -> Lake:
    settings = Settings(
        operations=OperationsSettings(batch_size=2, lease_time=lease_time),
        deletion=DeletionSettings(send_delay=0.0),
    )
    if clock is None:
        clock = TickingClock() if ticking else (lambda: 1_750_000_000.0)
    lake = Lake(settings, SteppingStore(MemoryStore(), scheduler), blocks, clock=clock)
    namespace = backends.namespace(blocks, f"repo{next(_lakes)}")
    repo = lake.graveler.create_repository("repo1", storage_namespace=namespace)
    for path in [*PATHS, "e/1"]:
        entry = ObjectEntry(
            address=f"data/{path}", size=1, checksum="c", mtime=1.0, content_type="x"
        )
        lake.graveler.set(repo, "main", path.encode(), to_value(entry))
    lake.graveler.commit(repo, "main", committer="t", message="data")
    return lake


def _create(lake: Lake, *, purge: bool = True) -> Operation:
    return lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo1/main/d/"),
        BulkDeleteOptions(purge=purge),
        created_by="alice",
    )


def _left(lake: Lake) -> list[str]:
    repo = lake.graveler.get_repository("repo1")
    return [key.decode() for key, _ in lake.graveler.list(repo, "main")]


def _enumerated(lake: Lake, operation: Operation) -> Operation:
    """Run the operation's enumeration only: the first batch stops the engine unprocessed."""
    context = lake.engine_context(owner="setup")
    stop = threading.Event()

    class EnumerateOnly(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            stop.set()
            return Outcome()

    engine = BulkDeleteDriver(context, LocalBatches(EnumerateOnly(context)))
    return engine.run(operation.id, stop)


def two_processors_fold(scheduler: Scheduler, blocks: BlockStore) -> tuple[Operations, Check]:
    """Two folds race, one after processing the last batch: each batch counts once."""
    lake = _lake(scheduler, blocks)
    operation = _enumerated(lake, _create(lake))
    assert operation.batches == 3
    repository = lake.graveler.get_repository("repo1")
    processor = BatchProcessor(lake.engine_context(owner="setup"))
    for number in (0, 1):
        processor.process(operation, repository, number)

    def first() -> Operation:
        return lake.ledger.fold(operation.id)

    def second() -> Operation:
        processor.process(operation, repository, 2)
        return lake.ledger.fold(operation.id)

    def check(outcomes: list[Ended]) -> None:
        for outcome in outcomes:
            assert outcome.acknowledged, outcome.error
        final = lake.ledger.load(operation.id)[0]
        assert final.done == 3 and final.counters.deleted == len(PATHS), final
        assert _left(lake) == ["e/1"]

    return [first, second], check


def expiring_leases(scheduler: Scheduler, blocks: BlockStore) -> tuple[Operations, Check]:
    """Two servers whose leases keep expiring take the operation over from each other."""
    lake = _lake(scheduler, blocks, lease_time=2.0, ticking=True)
    operation = _create(lake)
    engines = [local_engine(lake.engine_context(owner=f"server-{n}")) for n in range(2)]

    def runner(engine: BulkDeleteDriver) -> Callable[[], Operation]:
        return lambda: engine.run(operation.id, threading.Event())

    def check(outcomes: list[Ended]) -> None:
        for outcome in outcomes:
            assert outcome.acknowledged, outcome.error
        final = lake.ledger.load(operation.id)[0]
        if not final.finished:  # both lost their lease at the end: a later pass finishes
            final = local_engine(lake.engine_context(owner="later")).run(
                operation.id, threading.Event()
            )
        assert final.status == "completed", final
        c = final.counters
        assert (c.enumerated, c.deleted, c.failed, c.skipped) == (len(PATHS), len(PATHS), 0, 0)
        assert _left(lake) == ["e/1"]

    return [runner(engines[0]), runner(engines[1])], check


def cancel_while_running(scheduler: Scheduler, blocks: BlockStore) -> tuple[Operations, Check]:
    """A cancel racing the engine stops it at a batch boundary; counters match the data."""
    lake = _lake(scheduler, blocks)
    operation = _create(lake)
    engine = local_engine(lake.engine_context(owner="server"))

    def cancel() -> Operation:
        return lake.bulk_deletes.cancel(operation.id, user="alice", admin=False)

    def check(outcomes: list[Ended]) -> None:
        assert outcomes[0].acknowledged, outcomes[0].error
        final = lake.ledger.load(operation.id)[0]
        assert final.status in ("completed", "cancelled"), final
        if not outcomes[1].acknowledged:  # the cancel came after the end: 409, its status
            assert isinstance(outcomes[1].error, ConflictError), outcomes[1].error
            assert final.status == "completed" and "'completed'" in str(outcomes[1].error)
        left = [p for p in _left(lake) if p.startswith("d/")]
        assert final.counters.deleted == len(PATHS) - len(left)
        if final.status == "cancelled":
            # A boundary: whole batches, in order (2 paths each), were deleted.
            assert left == PATHS[final.done * 2 :]
            assert msgspec.structs.asdict(final.counters)["failed"] == 0

    return [lambda: engine.run(operation.id, threading.Event()), cancel], check


def _orphans(lake: Lake) -> set[str]:
    """Blobs under data/ that no entry of main (staged or committed) references and no
    pending deletion names: what the blind tombstones must never leave behind."""
    repo = lake.graveler.get_repository("repo1")
    describe = lake.engine_context(owner="check").describe
    referenced = {describe(value).address for _, value in lake.graveler.list(repo, "main")}
    head = lake.graveler.get_branch(repo, "main").commit_id
    for ref in (head, f"{head}~1"):
        referenced |= {describe(value).address for _, value in lake.graveler.list(repo, ref)}
    log = lake.deletion_log
    logged = {
        due.record.address
        for number in range(log.partition_count())
        for due in log.scan(number)
        if due.record is not None
    }
    blobs = set(lake.blockstore.list_keys(repo.storage_namespace, "data/"))
    return blobs - referenced - logged


def upload_races_bulk_delete(scheduler: Scheduler, blocks: BlockStore) -> tuple[Operations, Check]:
    """An upload under the prefix while the bulk delete runs: refused, or its path skipped,
    or deleted after it landed with its blob logged; never replaced unlogged."""
    _, operations, check = _upload_race(scheduler, blocks)
    return operations, check


def deep_copy_races_bulk_delete(
    scheduler: Scheduler, blocks: BlockStore
) -> tuple[Operations, Check]:
    """A deep copy (a new blob) onto a path under the prefix: as an upload."""
    _, operations, check = _upload_race(scheduler, blocks, writer="deep_copy")
    return operations, check


def link_races_bulk_delete(scheduler: Scheduler, blocks: BlockStore) -> tuple[Operations, Check]:
    """A direct upload's link (linkPhysicalAddress) under the prefix: as an upload."""
    _, operations, check = _upload_race(scheduler, blocks, writer="link")
    return operations, check


LINK_KEY = b"k" * 32


def _writer(lake: Lake, repo: Repository, writer: str) -> Callable[[], object]:
    """A write of a new blob at d/0 (first batch, nothing staged there: its tombstone is
    a blind write), prepared outside the schedule: `upload`, `deep_copy`, `link` or `stage`."""
    if writer == "upload":
        return lambda: lake.catalog.upload(repo, "main", "d/0", io.BytesIO(b"racing"))
    if writer == "deep_copy":
        lake.catalog.upload(repo, "main", "e/src", io.BytesIO(b"source"))
        return lambda: lake.catalog.copy_object(repo, "main", "e/src", "main", "d/0", shallow=False)
    if writer == "link":
        links = lake.catalog.direct_uploads(LINK_KEY)
        address, _ = links.issue(repo, "main", "d/0")
        lake.blockstore.put(repo.storage_namespace, address, b"racing")
        return lambda: links.link(
            repo, "main", "d/0", address, size=6, checksum="c", content_type="x", metadata={}
        )
    # stageObject over a blob another path holds (a blob of its own would be the client's,
    # in the namespace before the stage: nothing kvlake could orphan).
    source = lake.catalog.upload(repo, "main", "e/src", io.BytesIO(b"source"))
    full = f"{repo.storage_namespace}/{source.address}"
    return lambda: lake.catalog.links.link(
        repo, "main", "d/0", full, size=6, checksum="c", content_type="x", metadata={}
    )


def _upload_race(
    scheduler: Scheduler,
    blocks: BlockStore,
    *,
    writer: str = "upload",
    clock: Callable[[], float] | None = None,
    purge: bool = True,
) -> tuple[Lake, Operations, Check]:
    lake = _lake(scheduler, blocks, clock=clock)
    repo = lake.graveler.get_repository("repo1")
    lake.catalog.upload(repo, "main", "d/3", io.BytesIO(b"staged"))  # a staged value to replace
    upload = _writer(lake, repo, writer)
    operation = _create(lake, purge=purge)
    engine = local_engine(lake.engine_context(owner="server"))

    def check(outcomes: list[Ended]) -> None:
        assert outcomes[0].acknowledged, outcomes[0].error
        if not outcomes[1].acknowledged:
            assert isinstance(outcomes[1].error, LockedError), outcomes[1].error
        final = lake.ledger.load(operation.id)[0]
        c = final.counters
        assert c.deleted + c.failed + c.skipped == c.enumerated
        assert not _orphans(lake), f"blobs replaced unlogged: {_orphans(lake)}"

    return lake, [lambda: engine.run(operation.id, threading.Event()), upload], check


def _ranged_lake(scheduler: Scheduler, blocks: BlockStore) -> tuple[Lake, Repository]:
    """A lake whose main holds 12,000 committed objects under d/: several whole ranges."""
    lake = _lake(scheduler, blocks)
    repo = lake.graveler.get_repository("repo1")
    entry = encode_value(
        to_value(ObjectEntry(address="data/x", size=1, checksum="c", mtime=1.0, content_type="x"))
    )
    token = lake.graveler.get_branch(repo, "main").staging_token
    paths = (f"d/{i:05d}".encode() for i in range(12_000))
    lake.store.set_many(staging_partition(token), ((path, entry) for path in paths))
    lake.graveler.commit(repo, "main", committer="t", message="filled")
    return lake, repo


def _range_batch(lake: Lake, operation: Operation) -> int:
    """The number of the operation's first range batch."""
    final = _enumerated(lake, operation)
    for number in range(final.batches):
        if isinstance(lake.ledger.read_batch(operation.id, number), RangeBatch):
            return number
    raise AssertionError(f"operation {operation.id} has no range batch")


def _records(lake: Lake, repo: Repository) -> list[RangeTombstone]:
    tombstone_tokens = lake.graveler.get_branch(repo, "main").tombstone_tokens
    tombstones = lake.graveler._staging.range_tombstones(
        repo.storage_namespace, tombstone_tokens, tombstone_tokens
    )
    return [
        record
        for token in tombstone_tokens
        for record in (tombstones.records(token) if tombstones else ())
    ]


def two_bulk_deletes_from_two_commits(
    scheduler: Scheduler, blocks: BlockStore
) -> tuple[Operations, Check]:
    _, operations, check = _two_deletes(scheduler, blocks)
    return operations, check


def _two_deletes(scheduler: Scheduler, blocks: BlockStore) -> tuple[Lake, Operations, Check]:
    """Two bulk deletes over d/, one started before a commit that changed a range and one
    after it, hide their ranges at once (two servers): whatever the interleaving, the
    branch's records never overlap, the branch still commits, and nothing is left."""
    lake, repo = _ranged_lake(scheduler, blocks)
    first = _create(lake)
    first_batch = _range_batch(lake, first)
    lake.graveler.set(repo, "main", b"d/06000x", lake.graveler.get(repo, "main", b"d/00000"))
    lake.graveler.commit(repo, "main", committer="t", message="a range changes")
    second = _create(lake)
    second_batch = _range_batch(lake, second)
    processor = BatchProcessor(lake.engine_context(owner="setup"))

    def process(operation: Operation, number: int) -> Callable[[], Outcome]:
        return lambda: processor.process(lake.ledger.load(operation.id)[0], repo, number)

    def check(outcomes: list[Ended]) -> None:
        for outcome in outcomes:
            assert outcome.acknowledged, outcome.error
        records = _records(lake, repo)
        for before, after in itertools.pairwise(records):
            assert before.max_key < after.min_key, f"overlapping records: {before}, {after}"
        for operation in (first, second):  # the rest of both, as their engines would
            local_engine(lake.engine_context(owner="setup")).run(operation.id, threading.Event())
        lake.graveler.commit(repo, "main", committer="t", message="deleted")
        assert _left(lake) == ["e/1"], _left(lake)

    return lake, [process(first, first_batch), process(second, second_batch)], check


SCENARIOS = {
    "upload_races_bulk_delete": upload_races_bulk_delete,
    "deep_copy_races_bulk_delete": deep_copy_races_bulk_delete,
    "link_races_bulk_delete": link_races_bulk_delete,
    "two_processors_fold": two_processors_fold,
    "expiring_leases": expiring_leases,
    "cancel_while_running": cancel_while_running,
}


SCHEDULES = ((150, 10, 20), (12, 3, 10))
"""(limit, shuffled, at least this many ran): every case, sample; 160 schedules, each with a lake
of its own, cost 14 to 19 s a scenario through moto (2 to 5 s on a local folder), so S3
runs a sample, as test_lake.py does."""


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_no_interleaving_double_counts_or_loses_a_batch(name: str, lake_blocks: BlockStore) -> None:
    scenario = partial(SCENARIOS[name], blocks=lake_blocks)
    limit, shuffled, least = budget(lake_blocks, *SCHEDULES)
    assert explore(scenario, seed=3, limit=limit, shuffled=shuffled) > least


@pytest.mark.parametrize("writer", ["upload", "deep_copy", "link", "stage"])
def test_a_new_blob_landing_between_the_tombstone_read_and_write_is_never_orphaned(
    lake_blocks: BlockStore, writer: str
) -> None:
    """The one window the delete lock closes, reached on purpose: the bulk delete has read
    the batch's staged entries (one range read, or get_many) and not yet written its blind
    tombstones (set_many) when a whole write of a new blob runs (an upload, a deep copy, a direct
    upload's link, a stageObject). It must be refused (the delete lock) or its path
    skipped; without the lock its entry would be replaced, its blob unlogged."""
    solo = Scheduler()
    lake, operations, _ = _upload_race(solo, lake_blocks, writer=writer)
    store = lake.store
    assert isinstance(store, SteppingStore)
    base = len(store.calls)
    solo.run(operations, [0] * 10_000)  # the bulk delete alone, first: its calls come first
    bulk_calls = store.calls[base : base + solo.trace.count(0)]
    staging = [(call.partition or b"").startswith(b"staging/") for call in bulk_calls]
    writes = [
        step for step, call in enumerate(bulk_calls) if staging[step] and call.op == "set_many"
    ]
    assert writes, "the bulk delete wrote no blind tombstones"
    # The batch's read: a range read of its span (scan) or lookups (get_many), the last
    # staging read before the blind write (the listing's scans come before it).
    reads = [
        step
        for step, call in enumerate(bulk_calls[: writes[0]])
        if staging[step] and call.op in ("scan", "get_many")
    ]
    assert reads, "the bulk delete read no staged entries"
    scheduler = Scheduler()
    _, operations, check = _upload_race(scheduler, lake_blocks, writer=writer)
    # The first step of an operation runs it to its first call; step n+1 makes call n.
    # So reads[-1] + 2 steps have made the read and parked before the tombstone write.
    check(scheduler.run(operations, [0] * (reads[-1] + 2) + [1] * 10_000))


RACING_DELETES = {"local": (12, 2, 12), "s3": (4, 1, 4)}
"""(limit, shuffled, at least this many ran): each schedule fills a lake of 12,000 objects
and runs both operations to their end, about a second each on a local folder."""


def test_two_bulk_deletes_from_two_commits_never_stage_overlapping_records(
    lake_blocks: BlockStore,
) -> None:
    """Issue 22 #4: a check of the token's records, then a write, let both deletes pass the
    check and leave overlapping records (every commit of the branch failed after that)."""
    scenario = partial(two_bulk_deletes_from_two_commits, blocks=lake_blocks)
    limit, shuffled, least = RACING_DELETES[lake_blocks.scheme]
    assert explore(scenario, seed=3, limit=limit, shuffled=shuffled) >= least


def test_a_bulk_delete_run_whole_at_each_staging_write_of_another_is_refused(
    lake_blocks: BlockStore,
) -> None:
    """The windows reached on purpose: the first delete is parked before each of its
    staging writes (tombstones, the token's guard, its records) while the second runs
    whole. A check of the token's records, then a write, let both write (their records
    overlapped); so does a guard written without compare-and-swap."""
    solo = Scheduler()
    lake, operations, _ = _two_deletes(solo, lake_blocks)
    store = lake.store
    assert isinstance(store, SteppingStore)
    base = len(store.calls)
    solo.run(operations, [0] * 10_000)  # the first alone, first: its calls come first
    calls = store.calls[base : base + solo.trace.count(0)]
    writes = [
        step
        for step, call in enumerate(calls)
        if call.op in ("set", "set_if", "set_many")
        and (call.partition or b"").startswith(b"staging/")
    ]
    assert len(writes) >= 2, "the first delete staged neither tombstones nor records"
    for write in writes:
        scheduler = Scheduler()
        _, operations, check = _two_deletes(scheduler, lake_blocks)
        # Step n+1 makes call n: so the first is parked just before this write.
        check(scheduler.run(operations, [0] * (write + 1) + [1] * 10_000 + [0] * 10_000))


def test_a_delete_lock_lapsing_mid_batch_is_renewed_before_the_blind_write(
    lake_blocks: BlockStore,
) -> None:
    """The batch has read its write locks when its delete lock's time runs out (a long
    batch), then reads the staged entries; an upload comes in then. The batch must see
    the lapse before its blind tombstone write, renew the lock and read the write locks
    again: the upload is refused or its path skipped, never replaced unlogged.

    purge=false: the batch marks its blobs shared between the two reads, a KV call at
    which the lapse is injected (the check runs after it, before the writer flow)."""
    locks_read = _first_call(lake_blocks, "scan", b"locks/")
    # Where the batch reads its staged entries when the lapse comes after its write-lock
    # read (renewing and reading the write locks again come first, if the code does).
    # (one range read of the batch's span, or lookups where it has one key).
    staged_read = _first_call(
        lake_blocks, ("scan", "get_many"), b"staging/", lapse_after=locks_read
    )
    clock = FakeClock()
    scheduler = Scheduler()
    lake, operations, check = _upload_race(scheduler, lake_blocks, clock=clock, purge=False)
    lease = lake.settings.operations.lease_time
    lapse = [lambda: clock.advance(lease + 1)]  # no store call: it runs whole in one step
    # The first step of an operation runs it to its first call; step n+1 makes call n.
    schedule = [0] * (locks_read + 2) + [2] + [0] * (staged_read - locks_read) + [1] * 10_000
    check(scheduler.run([*operations, *lapse], schedule))


def _first_call(
    blocks: BlockStore,
    op: str | tuple[str, ...],
    partition: bytes,
    *,
    lapse_after: int | None = None,
) -> int:
    """The index of the bulk delete's first `op` call (or one of `op`) on a `partition...`
    partition (after call `lapse_after`, where the lease-and-a-second lapse is injected, if
    given), run alone, then the upload."""
    clock = FakeClock()
    solo = Scheduler()
    lake, operations, _ = _upload_race(solo, blocks, clock=clock, purge=False)
    lease = lake.settings.operations.lease_time
    store = lake.store
    assert isinstance(store, SteppingStore)
    base = len(store.calls)
    if lapse_after is None:
        solo.run(operations, [0] * 10_000)
    else:
        lapse = [lambda: clock.advance(lease + 1)]
        solo.run([*operations, *lapse], [0] * (lapse_after + 2) + [2] + [0] * 10_000)
    bulk_calls = store.calls[base : base + solo.trace.count(0)]
    after = -1 if lapse_after is None else lapse_after
    return next(
        step
        for step, call in enumerate(bulk_calls)
        if step > after
        and call.op in ((op,) if isinstance(op, str) else op)
        and (call.partition or b"").startswith(partition)
    )


# -- a bulk delete's batches against a commit and a merge into its branch (issue 22) ------


def _blobs(lake: Lake) -> set[str]:
    repo = lake.graveler.get_repository("repo1")
    return set(lake.blockstore.list_keys(repo.storage_namespace, "data/"))


def _referenced_anywhere(lake: Lake) -> set[str]:
    """Addresses any commit of any branch's history, or any token of a branch (staging or
    sealed, shadowed entries included), references."""
    repo = lake.graveler.get_repository("repo1")
    describe = lake.engine_context(owner="check").describe
    graveler = lake.graveler
    branches = [branch for _, branch in graveler.list_branches(repo)]
    seen: set[str] = set()
    todo = [branch.commit_id for branch in branches]
    while todo:
        commit_id = todo.pop()
        if commit_id and commit_id not in seen:
            seen.add(commit_id)
            todo.extend(graveler.get_commit(repo, commit_id).parents)
    found = {describe(value).address for c in seen for _, value in graveler.list(repo, c)}
    for branch in branches:
        for token in branch.tokens():
            for page in graveler.references.staged_pages(token):
                found |= {describe(value).address for _, value in page if value is not None}
    return found


def _writer_race(
    scheduler: Scheduler, blocks: BlockStore, *, intruder: str
) -> tuple[Lake, Operations, Check]:
    """The bulk delete of d/ (enumerated first: three batches of two paths, and the staged
    d/3 and d/8 with real blobs) processes its batches while a commit of main, or a merge
    of a feature branch (d/2 replaced, d/9 new, real blobs) into main, runs.

    Whatever the interleaving: the operation completes and counts every object once; no
    blob is orphaned (each is referenced by a commit or a token, or logged); once the
    deletion worker drained the log, every blob a commit or a token references is still
    there; and the branch is not wedged: it commits, and only what the delete did not
    enumerate is left under d/."""
    lake = _lake(scheduler, blocks)
    repo = lake.graveler.get_repository("repo1")
    catalog = lake.catalog
    if intruder == "merge":
        lake.graveler.create_branch(repo, "feature", "main")
        catalog.upload(repo, "feature", "d/2", io.BytesIO(b"feature's d/2"))
        catalog.upload(repo, "feature", "d/9", io.BytesIO(b"feature's d/9"))
        lake.graveler.commit(repo, "feature", committer="bob", message="feature")
    else:
        catalog.upload(repo, "main", "d/3", io.BytesIO(b"staged over d/3"))
        catalog.upload(repo, "main", "d/8", io.BytesIO(b"staged d/8"))
    operation = _enumerated(lake, _create(lake))
    engine = local_engine(lake.engine_context(owner="setup"))  # the enumeration's lease
    graveler = lake.graveler

    def intrude() -> object:
        if intruder == "merge":
            return graveler.merges.merge(repo, "feature", "main", committer="bob")
        return graveler.commit(repo, "main", committer="bob", message="racing")

    def check(outcomes: list[Ended]) -> None:
        assert outcomes[0].acknowledged, outcomes[0].error
        error = outcomes[1].error
        # A merge needs a clean head: the delete's tombstones may have come first.
        assert error is None or isinstance(error, DirtyBranchError), error
        final = lake.ledger.load(operation.id)[0]
        c = final.counters
        assert final.status == "completed", final
        assert c.deleted + c.failed + c.skipped == c.enumerated and c.failed == 0, c
        orphans = _blobs(lake) - _referenced_anywhere(lake) - logged_addresses(lake)
        assert not orphans, f"blobs neither referenced nor logged: {orphans}"
        try:
            graveler.commit(repo, "main", committer="t", message="after")  # not wedged
        except NoChangesError:
            pass
        left = set(_left(lake))
        assert "e/1" in left and left <= {"e/1", "d/9"}, left
        worker = lake.deletion_worker(owner="check")
        for _ in range(5):
            worker.run_once()
        gone = _referenced_anywhere(lake) - _blobs(lake) - _fake_addresses()
        assert not gone, f"referenced blobs deleted: {gone}"

    return lake, [lambda: engine.run(operation.id, threading.Event()), intrude], check


def _fake_addresses() -> set[str]:
    """The addresses `_lake` commits its entries at without blobs behind them."""
    return {f"data/{path}" for path in [*PATHS, "e/1"]}


WRITERS_EVERY = {"local": 1, "s3": 4}
"""Which steps the intruder comes at, by blockstore: every one on a local folder, every
fourth through moto (a lake and a whole run per step cost ten times as much there)."""


@pytest.mark.parametrize("intruder", ["commit", "merge"])
def test_a_commit_or_merge_at_every_step_of_a_bulk_delete_loses_and_wedges_nothing(
    lake_blocks: BlockStore, intruder: str
) -> None:
    """Issue 22: the bulk delete's batches (tombstones, their blobs logged) against a
    commit and a merge into the branch. The intruder runs whole before each KV call of
    the batches, and the batches run whole before each KV call of the intruder."""
    solo = Scheduler()
    _, operations, check = _writer_race(solo, lake_blocks, intruder=intruder)
    check(solo.run(operations, []))
    steps = [solo.trace.count(0), solo.trace.count(1)]
    assert min(steps) > 3, steps
    every = WRITERS_EVERY[lake_blocks.scheme]
    for first, second in ((0, 1), (1, 0)):
        for k in sorted({*range(0, steps[first] + 1, every), steps[first]}):
            scheduler = Scheduler()
            _, operations, check = _writer_race(scheduler, lake_blocks, intruder=intruder)
            # Step n+1 makes call n: k steps park `first` before its call k - 1.
            try:
                check(scheduler.run(operations, [first] * k + [second] * 10_000))
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n(schedule: {first} x {k}, then {second})") from exc
