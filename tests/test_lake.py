"""The lake's background jobs survive a failing store and stop when the lake closes."""

from __future__ import annotations

import threading

from kvlake.blockstore import BlockStore
from kvlake.config import Settings
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from tests.support import wait_until


def test_a_failing_pass_is_retried_and_closing_ends_the_jobs(lake_blocks: BlockStore) -> None:
    store = FaultyStore(MemoryStore(), [Fault(op="scan", times=3)])
    lake = Lake(Settings(), store, lake_blocks)
    # Threads of the process's own (a range writer's put pool, started by an earlier test
    # in this worker) are not this lake's jobs.
    before = set(threading.enumerate())
    lake.start_background_jobs(interval=0.01)
    jobs = [t for t in threading.enumerate() if t.name.startswith("kvlake-") and t not in before]
    assert {t.name for t in jobs} == {
        "kvlake-cleaner",
        "kvlake-deletion",
        "kvlake-operations",
        "kvlake-actions",
        "kvlake-upload-lease",  # renews this process's upload lease (operations/leases.py)
    }

    def retried() -> bool:
        assert all(job.is_alive() for job in jobs), "a job thread died on a store failure"
        return len(store.injected) >= 3 and store.count("scan") >= 6

    try:
        wait_until(retried, interval=0.01, message="three failed passes and three good ones")
    finally:
        lake.close()
    assert not any(job.is_alive() for job in jobs)


def test_a_pass_retried_after_a_failed_sweep_does_not_sweep_again_at_once(
    lake_blocks: BlockStore,
) -> None:
    store = FaultyStore(MemoryStore(), [Fault(op="partitions", times=1)])
    lake = Lake(Settings(), store, lake_blocks)
    lake.start_background_jobs(interval=0.01)
    try:
        wait_until(lambda: len(store.injected) == 1 and store.count("scan") >= 20)
    finally:
        lake.close()
    # One cleaner across the retries: its orphan sweep (one listing of the partitions)
    # runs once per sweep interval, not again after each failed pass.
    assert store.count("partitions") == 1
