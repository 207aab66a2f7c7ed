"""The runner: several operations at once per process, handed out fairly between creators."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator

import pytest

from kvlake import ids
from kvlake.config import load_settings
from kvlake.errors import ConfigError
from kvlake.kv.memory import MemoryStore
from kvlake.operations import (
    BulkDeleteOptions,
    EngineContext,
    Ledger,
    Operation,
    OperationRunner,
    register_engine,
)
from kvlake.operations.runner import fair_order
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
