"""set_if is a true compare-and-swap under contention: between threads, and between processes.

Each worker increments one counter with the optimistic loop every upper layer uses (get, then
set_if with the predicate, retry on PreconditionFailedError); a lost update shows as a short total.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from kvlake.errors import PreconditionFailedError
from kvlake.kv import Store, open_store
from tests.support import store_params

P = b"counters"
KEY = b"counter"
THREADS = 8
INCREMENTS = 200
PROCESSES = 2
PROCESS_THREADS = 2


def increment(store: Store, times: int, start: threading.Barrier | None = None) -> int:
    """Add 1 to the counter `times` times; return how many attempts lost a race."""
    if start is not None:
        start.wait()
    conflicts = 0
    for _ in range(times):
        while True:
            value, predicate = store.get(P, KEY)
            try:
                store.set_if(P, KEY, b"%d" % (int(value) + 1), predicate)
                break
            except PreconditionFailedError:
                conflicts += 1
    return conflicts


def increment_in_threads(store: Store, threads: int, times: int) -> int:
    start = threading.Barrier(threads)
    with ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(increment, store, times, start) for _ in range(threads)]
        return sum(future.result() for future in futures)


def increment_in_a_process(url: str, threads: int, times: int, start: threading.Barrier) -> None:
    """A child process's work: its own store on the same URL, several threads hammering it."""
    with open_store(url) as store:
        start.wait()
        increment_in_threads(store, threads, times)


def test_threads_incrementing_one_counter_lose_no_update(store: Store) -> None:
    store.set_if(P, KEY, b"0", None)
    increment_in_threads(store, THREADS, INCREMENTS)
    assert store.get(P, KEY)[0] == b"%d" % (THREADS * INCREMENTS)


def test_threads_racing_to_create_a_key_have_exactly_one_winner(store: Store) -> None:
    start = threading.Barrier(THREADS)

    def create(name: int) -> bool:
        start.wait()
        try:
            store.set_if(P, b"leader", b"%d" % name, None)
            return True
        except PreconditionFailedError:
            return False

    with ThreadPoolExecutor(THREADS) as pool:
        won = list(pool.map(create, range(THREADS)))
    assert won.count(True) == 1
    assert store.get(P, b"leader")[0] == b"%d" % won.index(True)


@pytest.mark.parametrize("store_url", store_params("postgres", "sqlite"), indirect=True)
def test_processes_incrementing_one_counter_lose_no_update(store: Store, store_url: str) -> None:
    store.set_if(P, KEY, b"0", None)
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(PROCESSES)
    workers = [
        context.Process(
            target=increment_in_a_process, args=(store_url, PROCESS_THREADS, INCREMENTS, start)
        )
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=240)
    exit_codes = [worker.exitcode for worker in workers]
    for worker in workers:
        if worker.exitcode is None:
            worker.kill()
            worker.join()
        worker.close()
    assert exit_codes == [0] * PROCESSES
    assert store.get(P, KEY)[0] == b"%d" % (PROCESSES * PROCESS_THREADS * INCREMENTS)
