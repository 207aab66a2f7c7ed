"""Writers racing to overwrite the same objects while commits, the cleaner and a worker run.

Four writers overwrite (and sometimes delete) three paths, a committer commits
in a loop, and the cleaner and a deletion worker run beside them; nothing waits
for anything, except time: the clock moves past the send delay only between
uploads. That is the one timing assumption of the design (a writer does not
stall for longer than the send delay inside one write; readers likewise), and
the test makes it exact instead of hoping for it. Commits get no such help: a
commit in flight is detected from the KV alone. Afterwards, once the cleaner
and workers have run to completion, the blobs on disk must be exactly those a
staging token or a commit references: none deleted early, none left behind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore
from kvlake.config import DeletionSettings
from kvlake.deletion import GcMarks, WorkerReport, log_candidates
from kvlake.errors import EntryNotFoundError, NoChangesError
from kvlake.kv import open_store
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support import FakeClock

WRITERS = 4
WRITES_EACH = 80
PATHS = ("hot/a", "hot/b", "hot/c")
SEND_DELAY = 60.0


class Time:
    """A clock that moves only while no write is in flight (writers wait while it moves)."""

    def __init__(self, clock: FakeClock) -> None:
        self._clock = clock
        self._changed = threading.Condition()
        self._writing = 0
        self._moving = False

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._moving)
            self._writing += 1
        try:
            yield
        finally:
            with self._changed:
                self._writing -= 1
                self._changed.notify_all()

    def pass_send_delay(self) -> None:
        with self._changed:
            self._moving = True
            self._changed.wait_for(lambda: self._writing == 0)
            self._clock.advance(SEND_DELAY + 1)
            self._moving = False
            self._changed.notify_all()


# Each driver and each blockstore once, in two runs (as tests/conftest.py's PAIRS do).
@pytest.mark.parametrize(
    ("kv", "lake_blocks"), [("mem", "local"), ("sqlite", "s3")], indirect=["lake_blocks"]
)
def test_racing_overwrites_and_commits_end_with_exactly_the_referenced_blobs(
    kv: str, lake_blocks: BlockStore, tmp_path: Path
) -> None:
    store = MemoryStore() if kv == "mem" else open_store(f"sqlite://{tmp_path}/kv.db")
    lake = DeletionLake(store, lake_blocks, settings=DeletionSettings(send_delay=SEND_DELAY))
    time = Time(lake.clock)
    done = threading.Event()
    errors: list[BaseException] = []
    worked = WorkerReport()

    def guarded(body: Callable[[], None]) -> threading.Thread:
        def run() -> None:
            try:
                body()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
                errors.append(exc)

        return threading.Thread(target=run)

    written = threading.Condition()
    writes = [0]

    def writer(number: int) -> None:
        for i in range(WRITES_EACH):
            with written:
                writes[0] += 1
                written.notify_all()
            path = PATHS[(number + i) % len(PATHS)]
            with time.write():
                if i % 9 == 8:
                    try:
                        lake.catalog.delete_object(lake.repository, "main", path)
                    except EntryNotFoundError:
                        pass  # another writer deleted it first
                else:
                    lake.upload(path, f"{number}-{i}".encode())

    def committer() -> None:
        seen = [0]

        def enough() -> bool:
            return writes[0] >= seen[0] + 7 or done.is_set()

        while not done.is_set():
            with written:  # commit after every few writes, so commits also pause at times
                written.wait_for(enough)
                seen[0] = writes[0]
            try:
                lake.commit()
            except NoChangesError:
                pass

    def background() -> None:
        worker = lake.worker(owner="racing")
        while not done.is_set():
            time.pass_send_delay()
            lake.cleaner.clean_once()
            worked.add(worker.run_once())

    writers = [guarded(lambda n=n: writer(n)) for n in range(WRITERS)]  # type: ignore[misc]
    others = [guarded(committer), guarded(background)]
    for thread in writers + others:
        thread.start()
    for thread in writers:
        thread.join()
    with written:
        done.set()
        written.notify_all()
    for thread in others:
        thread.join()
    assert not errors, errors
    assert lake.referenced() <= lake.data_blobs()
    settled = lake.settle()  # commits stopped: what waited for them goes now
    # A write that raced a seal is re-written to the new token with its address marked
    # shared (it may be committed from the sealed one), so replacing it later leaves the
    # blob to garbage collection: only shared addresses may be left, and a GC run takes them.
    left = lake.data_blobs() - lake.referenced()
    shared = lake.shared_addresses()
    assert left <= shared
    GcMarks(lake.store).save("gc1", lake.referenced())
    log_candidates(lake.log, lake.repository, "gc1", left, started=lake.clock())
    lake.settle()
    assert lake.data_blobs() == lake.referenced()
    # Workers ran during the race; whether anything was left for after it depends
    # on scheduling (settled.batches may be 0), and the equality above holds either way.
    assert worked.batches > 0
    assert settled.failures == []
    store.close()
