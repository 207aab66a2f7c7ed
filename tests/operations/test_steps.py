"""`drive`: the one claim, heartbeat, cancel and finish every kind given by its steps gets
(refs dumps and restores, imports, GC commits preparations).

Steps here are small real classes; the store is real; time is a fake clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import msgspec
import pytest

from kvlake.errors import InvalidInputError
from kvlake.kv import Store
from kvlake.operations import (
    INTERNAL_ERROR,
    Cancelled,
    Driver,
    Ledger,
    Operation,
    Stopped,
    drive,
)
from tests.support import FakeClock, wait_until

OPERATION_ID = "01m8a1b2c3d4e5f6g7h8j9k0m3"


class Recorded:
    """Steps that run `body` and count their calls."""

    def __init__(self, body: Callable[[Operation, Driver], None]) -> None:
        self.body = body
        self.calls = 0

    def work(self, operation: Operation, driver: Driver, stop: threading.Event) -> None:
        self.calls += 1
        self.body(operation, driver)


def _setup(store: Store, clock: FakeClock, lease: float = 30.0) -> tuple[Ledger, Driver]:
    ledger = Ledger(store)
    now = clock()
    ledger.create(
        Operation(
            id=OPERATION_ID,
            kind="dump",
            repository="repo1",
            instance_uid="u1",
            created_by="alice",
            created_at=now,
            last_updated_at=now,
        )
    )
    return ledger, Driver(ledger, owner="one", lease_time=lease, clock=clock)


def _raise(error: BaseException) -> Callable[[Operation, Driver], None]:
    def body(_operation: Operation, _driver: Driver) -> None:
        raise error

    return body


@pytest.mark.parametrize(
    ("error", "status", "text"),
    [
        (None, "completed", ""),
        (InvalidInputError("no complete refs dump x"), "failed", "no complete refs dump x"),
        (RuntimeError("secret internals"), "failed", INTERNAL_ERROR),
        (Cancelled(), "cancelled", ""),
    ],
)
def test_the_steps_outcome_ends_the_record(
    any_store: Store,
    clock: FakeClock,
    error: BaseException | None,
    status: str,
    text: str,
) -> None:
    ledger, driver = _setup(any_store, clock)
    steps = Recorded((lambda _o, _d: None) if error is None else _raise(error))
    ended = drive(driver, OPERATION_ID, threading.Event(), steps)
    assert (ended.status, ended.error, ended.owner) == (status, text, "")
    assert steps.calls == 1 and ledger.load(OPERATION_ID)[0] == ended


def test_a_stop_or_a_lost_lease_leaves_the_record_to_the_next_holder(
    any_store: Store, clock: FakeClock
) -> None:
    ledger, driver = _setup(any_store, clock)
    left = drive(driver, OPERATION_ID, threading.Event(), Recorded(_raise(Stopped())))
    assert not left.finished and left.owner == "one"

    def taken_over(operation: Operation, _driver: Driver) -> None:
        clock.advance(31)  # this process stalled past its lease; another took the work
        Driver(ledger, owner="two", lease_time=30, clock=clock).claim(operation.id)
        driver.checkpoint(operation.id, status="in_progress")  # LostLeaseError

    lost = drive(driver, OPERATION_ID, threading.Event(), Recorded(taken_over))
    assert not lost.finished and lost.owner == "two"


def test_a_record_held_finished_or_cancelled_before_the_work_runs_no_steps(
    any_store: Store, clock: FakeClock
) -> None:
    ledger, driver = _setup(any_store, clock)
    other = Driver(ledger, owner="two", lease_time=30, clock=clock)
    other.claim(OPERATION_ID)
    steps = Recorded(lambda _o, _d: None)
    assert drive(driver, OPERATION_ID, threading.Event(), steps).owner == "two"
    other.checkpoint(OPERATION_ID, cancel_requested=True)
    other.finish(OPERATION_ID, "failed", "x")
    assert drive(driver, OPERATION_ID, threading.Event(), steps).status == "failed"
    assert steps.calls == 0

    ledger.update(
        OPERATION_ID,
        lambda op: msgspec.structs.replace(op, status="started", cancel_requested=True),
    )
    cancelled = drive(driver, OPERATION_ID, threading.Event(), steps)
    assert cancelled.status == "cancelled" and steps.calls == 0


def test_steps_longer_than_a_lease_keep_it_by_the_heartbeat(
    any_store: Store, clock: FakeClock
) -> None:
    ledger, driver = _setup(any_store, clock, lease=0.03)

    def long_step(operation: Operation, _driver: Driver) -> None:
        claimed = ledger.load(operation.id)[0].lease_expires
        clock.advance(100)  # the claim's lease has lapsed by the fake clock
        wait_until(
            lambda: ledger.load(operation.id)[0].lease_expires > claimed + 99,
            timeout=30,
            message="the heartbeat to renew the lease while the step runs",
        )
        other = Driver(ledger, owner="two", lease_time=30, clock=clock)
        assert other.claim(operation.id).owner == "one"

    assert drive(driver, OPERATION_ID, threading.Event(), Recorded(long_step)).status == (
        "completed"
    )
