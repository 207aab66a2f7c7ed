"""The driver: one claim, lease, checkpoint and finish for operation records of every kind.

Two drivers are two processes over one store (their owners differ); time is a fake clock.
Records of two kinds (a bulk delete and a GC run) go through the same steps.
"""

from __future__ import annotations

import pytest

from kvlake.kv import Store
from kvlake.operations import (
    Driver,
    GcRunRequest,
    Heartbeat,
    Ledger,
    LostLeaseError,
    Operation,
)
from tests.support import FakeClock, wait_until

LEASE = 30.0
IDS = {"bulk-delete": "01m8a1b2c3d4e5f6g7h8j9k0m1", "gc-run": "01m8a1b2c3d4e5f6g7h8j9k0m2"}


def record(kind: str, clock: FakeClock) -> Operation:
    now = clock()
    if kind == "gc-run":
        return Operation(
            id=IDS[kind],
            kind="gc-run",
            repository="repo1",
            instance_uid="u1",
            gc=GcRunRequest(run_id=IDS[kind]),
            created_by="alice",
            created_at=now,
            last_updated_at=now,
        )
    return Operation(
        id=IDS[kind],
        kind="bulk-delete",
        repository="repo1",
        instance_uid="u1",
        branch="main",
        prefix="data/",
        created_by="alice",
        created_at=now,
        last_updated_at=now,
    )


@pytest.mark.parametrize("kind", sorted(IDS))
def test_one_holder_at_a_time_and_a_lapsed_lease_is_taken_over(
    any_store: Store, clock: FakeClock, kind: str
) -> None:
    ledger = Ledger(any_store)
    first, second = (
        Driver(ledger, owner=name, lease_time=LEASE, clock=clock) for name in ("one", "two")
    )
    operation = record(kind, clock)
    ledger.create(operation)

    claimed = first.claim(operation.id)
    assert (claimed.owner, claimed.status) == ("one", "started")
    assert claimed.lease_expires == clock() + LEASE
    clock.advance(LEASE - 1)
    assert second.claim(operation.id).owner == "one"  # live: left alone
    renewed = first.checkpoint(operation.id, phase="mark", status="in_progress")
    assert (renewed.phase, renewed.lease_expires) == ("mark", clock() + LEASE)
    clock.advance(LEASE - 1)
    assert second.claim(operation.id).owner == "one"  # the checkpoint renewed it

    clock.advance(2)  # the first process stopped renewing
    taken = second.claim(operation.id)
    assert (taken.owner, taken.status) == ("two", "in_progress")
    with pytest.raises(LostLeaseError):
        first.checkpoint(operation.id, phase="sweep")
    with pytest.raises(LostLeaseError):
        first.renewed(ledger.load(operation.id)[0])
    assert ledger.load(operation.id)[0].phase == "mark"  # the loser wrote nothing


@pytest.mark.parametrize("kind", sorted(IDS))
def test_finish_lets_the_lease_go_and_the_first_end_wins(
    any_store: Store, clock: FakeClock, kind: str
) -> None:
    ledger = Ledger(any_store)
    driver = Driver(ledger, owner="one", lease_time=LEASE, clock=clock)
    operation = record(kind, clock)
    ledger.create(operation)
    driver.claim(operation.id)
    failed = driver.finish(operation.id, "failed", "the store went away")
    assert (failed.status, failed.error, failed.owner, failed.lease_expires) == (
        "failed",
        "the store went away",
        "",
        0.0,
    )
    assert driver.finish(operation.id, "completed").status == "failed"
    assert driver.claim(operation.id).owner == ""  # finished: nobody claims it again


def test_a_heartbeat_renews_the_lease_while_its_holder_is_busy_and_stops_once_lost(
    any_store: Store, clock: FakeClock
) -> None:
    """A step that reports nothing for longer than a lease time (a Spark listing, a large
    commit) keeps its operation: the heartbeat renews the lease from its own thread."""
    ledger = Ledger(any_store)
    holder = Driver(ledger, owner="one", lease_time=0.03, clock=clock)
    operation = record("bulk-delete", clock)
    ledger.create(operation)
    claimed = holder.claim(operation.id).lease_expires
    clock.advance(100)  # the claim's lease has lapsed by the fake clock
    with Heartbeat(holder, operation.id):
        wait_until(
            lambda: ledger.load(operation.id)[0].lease_expires > claimed + 99,
            timeout=30,
            message="the heartbeat to renew the lease",
        )
    other = Driver(ledger, owner="two", lease_time=LEASE, clock=clock)
    assert other.claim(operation.id).owner == "one"  # renewed: still held
    clock.advance(1)
    assert other.claim(operation.id).owner == "two"
    with Heartbeat(holder, operation.id):  # lost: it beats once, stops, writes nothing
        clock.advance(0)
    assert ledger.load(operation.id)[0].owner == "two"
