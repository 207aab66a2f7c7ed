"""The runner: several operations at once per process, handed out fairly between creators."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

import msgspec
import pytest

from kvlake import ids
from kvlake.config import load_settings
from kvlake.errors import ConfigError, KeyNotFoundError
from kvlake.kv.counting import CountingStore
from kvlake.kv.memory import MemoryStore
from kvlake.operations import (
    BulkDeleteOptions,
    EngineContext,
    Failure,
    Ledger,
    Operation,
    OperationRunner,
    PathBatch,
    register_engine,
)
from kvlake.operations.runner import EXPIRY_INTERVAL, fair_order
from tests.operations import gated_engine
from tests.support import FakeClock, wait_until

try:
    register_engine("gated", "tests.operations.gated_engine:GatedEngine")
except ConfigError:
    pass  # registered by an earlier import of this module


_IDS: list[str] = []


def _operation(creator: str) -> Operation:
    """A record whose id sorts after every earlier one's (uids made in one millisecond
    need not)."""
    uid = ids.new_uid()
    while _IDS and uid <= _IDS[-1]:
        uid = ids.new_uid()
    _IDS.append(uid)
    return Operation(
        id=uid,
        kind="bulk-delete",
        repository="repo1",
        instance_uid="u1",
        branch="main",
        options=BulkDeleteOptions(engine="gated"),
        created_by=creator,
        created_at=0.0,
        last_updated_at=0.0,
    )


def test_free_threads_go_round_robin_the_least_busy_creator_first() -> None:
    alice = [_operation("alice") for _ in range(3)]
    bob, carol = _operation("bob"), _operation("carol")
    order = fair_order([*alice, bob, carol], Counter())
    assert [op.id for op in order] == [alice[0].id, bob.id, carol.id, alice[1].id, alice[2].id]
    # Alice already runs one here: the others' go first, whatever their age.
    busy = fair_order([*alice[1:], bob, carol], Counter({"alice": 1}))
    assert [op.id for op in busy] == [bob.id, carol.id, alice[1].id, alice[2].id]


@pytest.fixture
def gate() -> Iterator[None]:
    gated_engine.STARTED.clear()
    gated_engine.GATE.clear()
    yield
    gated_engine.GATE.set()


@pytest.mark.usefixtures("gate")
def test_a_runner_runs_up_to_its_concurrency_at_once_fairly(kv: MemoryStore) -> None:
    """One user's three operations and another's one, two threads: the first pass starts
    one of each; the rest wait for a free thread, then all finish."""
    ledger = Ledger(kv)
    settings = load_settings({"KVLAKE_OPERATIONS_CONCURRENCY": "2"}).operations
    alice = [_operation("alice") for _ in range(3)]
    bob = _operation("bob")
    for operation in (*alice, bob):
        ledger.create(operation)
    context = EngineContext(
        graveler=None,  # type: ignore[arg-type]  # the gated engine reads only the ledger
        ledger=ledger,
        locks=None,  # type: ignore[arg-type]
        deletion=None,
        describe=None,  # type: ignore[arg-type]
        settings=settings,
        owner="runner-1",
        clock=FakeClock(),
    )
    runner = OperationRunner(context, concurrency=settings.concurrency)
    stop = threading.Event()
    first = runner.dispatch(stop, 60)  # one pass, as `run` makes them
    try:
        assert [thread.name for thread in first] == [
            f"kvlake-operation-{alice[0].id}",
            f"kvlake-operation-{bob.id}",  # not alice's second
        ]
        assert runner.dispatch(stop, 60) == []  # both threads busy: nothing more starts
        with gated_engine.ARRIVED:
            assert gated_engine.ARRIVED.wait_for(lambda: len(gated_engine.STARTED) == 2, 30)
    finally:
        gated_engine.GATE.set()
    for thread in first:
        thread.join(30)
    loop = threading.Thread(target=runner.run, args=(stop,), kwargs={"interval": 60})
    loop.start()
    try:
        wait_until(
            lambda: all(op.status == "completed" for op in ledger.list()),
            message=lambda: f"every operation to finish: {list(ledger.list())}",
        )
        assert gated_engine.STARTED[2:] == [alice[1].id, alice[2].id]
    finally:
        stop.set()
        runner.wake()
        loop.join(30)


@pytest.mark.parametrize("value", ["0", "257", "-1", "many"])
def test_a_concurrency_out_of_range_is_refused_naming_the_setting(value: str) -> None:
    with pytest.raises(ConfigError, match="KVLAKE_OPERATIONS_CONCURRENCY"):
        load_settings({"KVLAKE_OPERATIONS_CONCURRENCY": value})


def _cleaning_runner(
    ledger: Ledger, clock: FakeClock, environ: dict[str, str] | None = None
) -> OperationRunner:
    """A runner that only cleans (it starts nothing), with the operations settings of
    `environ`: enough for what a pass reads and drops."""
    context = EngineContext(
        graveler=None,  # type: ignore[arg-type]  # cleaning reads only the ledger
        ledger=ledger,
        locks=None,  # type: ignore[arg-type]
        deletion=None,
        describe=None,  # type: ignore[arg-type]
        settings=load_settings(environ or {}).operations,
        owner="runner-1",
        clock=clock,
    )
    runner = OperationRunner(context, concurrency=1)
    runner.concurrency = 0
    return runner


def test_an_idle_pass_reads_no_finished_operation() -> None:
    """Issue 33 item 5: finished records kept for their retention are not read by the
    runner's idle passes (only by its hourly look for expired ones), so a pass reads the
    same rows beside 10 finished operations and beside 1,000."""
    rows = []
    for finished_count in (10, 1000):
        store = CountingStore(MemoryStore())
        ledger, clock = Ledger(store), FakeClock()
        for _ in range(finished_count):  # finished now: kept for the retention
            ledger.create(
                msgspec.structs.replace(
                    _operation("a"), status="completed", last_updated_at=clock()
                )
            )
        ledger.create(_operation("b"))  # one still running
        runner = _cleaning_runner(ledger, clock)
        runner.dispatch(threading.Event(), 60)  # cleans the finished ones once
        clock.advance(60)
        store.reset()
        runner.dispatch(threading.Event(), 60)  # an idle pass
        rows.append((store.rows_read, store.round_trips))
    assert rows[0] == rows[1]


def test_finished_operations_lose_their_leftover_batches_then_expire(kv: MemoryStore) -> None:
    """A crash between an operation's end and its batches' drop leaves them: the next pass
    drops them (and never a running operation's); past the retention the record and its
    failures go too."""
    ledger = Ledger(kv)
    clock = FakeClock()
    finished, running = _operation("alice"), _operation("bob")
    ledger.create(msgspec.structs.replace(finished, status="completed", last_updated_at=clock()))
    ledger.create(running)
    for operation in (finished, running):
        ledger.write_batch(operation.id, 0, PathBatch(paths=["a/1"]))
        ledger.write_failures(operation.id, [("a/2", Failure(outcome="skipped", reason="locked"))])
    runner = _cleaning_runner(ledger, clock, {"KVLAKE_OPERATIONS_RETENTION": "100"})

    clock.advance(99)
    runner.dispatch(threading.Event(), 60)
    with pytest.raises(KeyNotFoundError):
        ledger.read_batch(finished.id, 0)
    assert ledger.load(finished.id)[0].cleaned
    assert ledger.failures(finished.id).failures  # kept: the report, within its retention
    assert ledger.read_batch(running.id, 0) == PathBatch(paths=["a/1"])  # running: untouched

    clock.advance(1)  # past the retention, but the process looked for expired ones at 99
    runner.dispatch(threading.Event(), 60)
    assert finished.id in [op.id for op in ledger.list()]
    clock.advance(EXPIRY_INTERVAL)  # its next look
    runner.dispatch(threading.Event(), 60)
    assert [op.id for op in ledger.list()] == [running.id]
    assert not ledger.failures(finished.id).failures
    assert ledger.read_batch(running.id, 0) == PathBatch(paths=["a/1"])
    assert ledger.failures(running.id).failures


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_retention_that_is_not_a_positive_time_is_refused(value: str) -> None:
    with pytest.raises(ConfigError, match="KVLAKE_OPERATIONS_RETENTION"):
        load_settings({"KVLAKE_OPERATIONS_RETENTION": value})


def test_a_completed_bulk_delete_with_free_storage_starts_one_garbage_collection(
    kv: MemoryStore,
) -> None:
    """Only a completed one (not a cancelled or failed one, not one without the option),
    once, whatever the passes."""
    ledger = Ledger(kv)
    clock = FakeClock()
    settings = load_settings({}).operations
    freeing, cancelled, plain = _operation("alice"), _operation("alice"), _operation("bob")
    for operation, status, free in (
        (freeing, "completed_with_errors", True),
        (cancelled, "cancelled", True),
        (plain, "completed", False),
    ):
        options = msgspec.structs.replace(operation.options, free_storage=free)
        ledger.create(
            msgspec.structs.replace(
                operation, status=status, options=options, last_updated_at=clock()
            )
        )
    context = EngineContext(
        graveler=None,  # type: ignore[arg-type]  # cleaning reads only the ledger
        ledger=ledger,
        locks=None,  # type: ignore[arg-type]
        deletion=None,
        describe=None,  # type: ignore[arg-type]
        settings=settings,
        owner="runner-1",
        clock=clock,
    )
    runner = OperationRunner(context, concurrency=1)
    runner.concurrency = 0  # clean only: start nothing
    for _ in range(2):
        runner.dispatch(threading.Event(), 60)
    runs = [op for op in ledger.list() if op.kind == "gc-run"]
    assert len(runs) == 1
    (run,) = runs
    assert ledger.load(freeing.id)[0].follow_up == run.id
    assert run.gc is not None and run.gc.run_id == run.id and run.status == "not_started"
    assert (run.repository, run.created_by) == ("repo1", "alice")
    assert not ledger.load(cancelled.id)[0].follow_up
    assert not ledger.load(plain.id)[0].follow_up


def test_a_store_written_before_the_live_index_gets_it_on_first_use() -> None:
    """Records an older kvlake wrote have no live key: the first `unfinished` indexes the
    unfinished and uncleaned ones (once), so a runner still resumes them."""
    from kvlake.operations import keys
    from kvlake.operations.records import encode

    store = MemoryStore()
    running = _operation("a")
    cleaned = msgspec.structs.replace(_operation("a"), status="completed", cleaned=True)
    for operation in (running, cleaned):  # as the older ledger wrote them: the record only
        store.set(keys.OPERATIONS, keys.operation_key(operation.id), encode(operation))

    assert [op.id for op in Ledger(store).unfinished()] == [running.id]
    assert store.get(keys.OPERATIONS, keys.LIVE_INDEX_BUILT)[0] == b""
    assert [op.id for op in Ledger(store).unfinished()] == [running.id]  # built once
