"""The harness itself: schedules replay exactly, and it finds a race it is shown."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import EntryNotFoundError, NoChangesError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import encode
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler, value
from tests.interleavings.scheduler import (
    Check,
    Outcome,
    Scheduler,
    SteppingBlockStore,
    SteppingStore,
    explore,
    schedules,
)
from tests.support import FakeClock, backends
from tests.support.backends import budget


def test_a_schedule_decides_the_order_of_store_calls() -> None:
    scheduler = Scheduler()
    store = SteppingStore(MemoryStore(), scheduler)
    seen: list[str] = []

    def operation(name: str) -> Callable[[], None]:
        def run() -> None:
            for n in range(3):
                store.set(b"p", b"k", f"{name}{n}".encode())
                seen.append(f"{name}{n}")

        return run

    # A step runs an operation up to its next store call, then makes that call when the
    # operation is next chosen: a's first step only reaches its first set.
    scheduler.run([operation("a"), operation("b")], [0, 1, 1, 0])
    assert seen == ["b0", "a0", "a1", "a2", "b1", "b2"]
    assert scheduler.trace == [0, 1, 1, 0, 0, 0, 1, 1]


def test_schedules_start_with_both_serial_orders_and_are_reproducible() -> None:
    first = list(schedules([2, 3], seed=7, limit=10, shuffled=3))
    assert first[0] == [0, 0, 1, 1, 1] and first[1] == [1, 1, 1, 0, 0]
    assert first == list(schedules([2, 3], seed=7, limit=10, shuffled=3))
    assert len(first) == 13


def _write_without_re_read(graveler: Graveler, key: bytes) -> None:
    """A writer missing invariant 2's re-read: its write can land in a sealed token."""
    repository = graveler.get_repository("repo1")
    token = graveler.get_branch(repository, "main").staging_token
    graveler.store.set(keys.staging_partition(token), key, encode(value("w")))


def _race(
    write: Callable[[Graveler, bytes], None], blocks: BlockStore
) -> Callable[[Scheduler], tuple[Sequence[Callable[[], object]], Check]]:
    """A write racing a commit. Every run has a fresh store and a namespace of its own on
    `blocks`, so it finds no file an earlier run left and takes the same blob calls."""

    def scenario(scheduler: Scheduler) -> tuple[Sequence[Callable[[], object]], Check]:
        clock = FakeClock()
        graveler = make_graveler(
            SteppingStore(MemoryStore(), scheduler), clock, SteppingBlockStore(blocks, scheduler)
        )
        namespace = backends.namespace(blocks, uuid.uuid4().hex)
        repository = graveler.create_repository("repo1", storage_namespace=namespace)
        graveler.set(repository, "main", b"base", value("b"))

        def commit() -> None:
            try:
                graveler.commit(repository, "main", committer="t", message="m")
            except NoChangesError:
                pass

        def check(outcomes: list[Outcome]) -> None:
            assert outcomes[0].acknowledged
            commit()
            head = graveler.get_branch(repository, "main").commit_id
            try:
                found = graveler.get(repository, head, b"w")
            except EntryNotFoundError:
                raise AssertionError("acknowledged write lost") from None
            assert found == value("w")

        return [lambda: write(graveler, b"w"), commit], check

    return scenario


def test_the_harness_finds_a_write_lost_to_a_commit(lake_blocks: BlockStore) -> None:
    with pytest.raises(AssertionError, match="acknowledged write lost"):
        explore(_race(_write_without_re_read, lake_blocks), limit=200)


def test_the_writer_flow_survives_the_same_schedules(lake_blocks: BlockStore) -> None:
    def write(graveler: Graveler, key: bytes) -> None:
        graveler.set(graveler.get_repository("repo1"), "main", key, value("w"))

    # 200 schedules, each committing to a namespace of its own, cost 23 s through moto
    # (3 s on a local folder): S3 runs a sample, as the scenarios of test_lake.py do.
    limit, least = budget(lake_blocks, (200, 20), (16, 10))
    assert explore(_race(write, lake_blocks), limit=limit) > least
