"""A deterministic interleaving harness: operations advance one store call at a time.

Each operation runs in its own thread, but only one runs at any moment: before
every KV call (`SteppingStore`) and every blob call (`SteppingBlockStore`, over
any real blockstore) it parks, and the `Scheduler` lets exactly one parked
operation go, in the order a schedule names. So a schedule is a replayable
interleaving of the operations' store calls, and a test can explore many of
them: nothing depends on thread timing. Calls made outside an operation (set-up,
checks, draining) run freely.

`schedules` yields the interleavings to try: both serial orders, every schedule
with at most two context switches (A runs k steps, B runs j, A finishes, then
B; and the same with B first), and a seeded random sample of fully shuffled
ones; with more than `limit` candidates a seeded sample of them.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from kvlake.blockstore import BlockStore
from kvlake.kv import Store
from kvlake.kv.faults import Call, Fault, FaultyStore
from tests.deletion.blockstores import BlobCall, FaultyBlockStore

PARK_TIMEOUT: Final = 30.0
"""Seconds an operation may run without reaching its next store call: past it, the
operation is blocked on something other than the scheduler (a deadlock in the test)."""


class DeadlockError(AssertionError):
    """An operation neither reached a store call nor finished in time."""


@dataclass
class Outcome:
    """How an operation ended: its value, or the exception it raised."""

    value: object = None
    error: BaseException | None = None

    @property
    def acknowledged(self) -> bool:
        return self.error is None


class Scheduler:
    """Runs operations so that exactly one advances between two store calls."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._go: list[threading.Event] = []
        self._parked: list[threading.Event] = []
        self.trace: list[int] = []
        """Which operation took each step of the last run (for replaying a failure)."""

    def adopt(self, index: int) -> None:
        """Make the calling thread's store calls steps of operation `index`.

        For threads an operation hands its work to (a server's request pool): the
        operation's own thread is bound by `run`.
        """
        self._local.index = index

    def step(self) -> None:
        """Park the calling operation until the scheduler lets it take its next step."""
        index: int | None = getattr(self._local, "index", None)
        if index is None:
            return  # set-up, checks and draining run freely
        self._parked[index].set()
        self._go[index].wait()
        self._go[index].clear()

    def run(
        self, operations: Sequence[Callable[[], object]], schedule: Sequence[int]
    ) -> list[Outcome]:
        """Run the operations, the step order following `schedule` (an operation that
        has finished is skipped), then each unfinished one to its end, in order."""
        count = len(operations)
        self._go = [threading.Event() for _ in range(count)]
        self._parked = [threading.Event() for _ in range(count)]
        self.trace = []
        outcomes = [Outcome() for _ in range(count)]
        done = [False] * count

        def body(index: int) -> None:
            self._local.index = index
            self._go[index].wait()
            self._go[index].clear()
            try:
                outcomes[index].value = operations[index]()
            except BaseException as exc:  # the outcome the test inspects
                outcomes[index].error = exc
            finally:
                done[index] = True
                self._local.index = None
                self._parked[index].set()

        threads = [
            threading.Thread(target=body, args=(i,), daemon=True, name=f"interleaved-{i}")
            for i in range(count)
        ]
        for thread in threads:
            thread.start()

        def advance(index: int) -> None:
            self._parked[index].clear()
            self._go[index].set()
            if not self._parked[index].wait(PARK_TIMEOUT):
                raise DeadlockError(f"operation {index} is blocked outside the store")
            self.trace.append(index)

        for index in schedule:
            if not done[index]:
                advance(index)
        for index in range(count):
            while not done[index]:
                advance(index)
        for thread in threads:
            thread.join()
        return outcomes


class SteppingStore(FaultyStore):
    """A KV store whose every call is a step of the calling operation."""

    def __init__(self, inner: Store, scheduler: Scheduler) -> None:
        super().__init__(inner)
        self._scheduler = scheduler

    def _decide(
        self, op: str, partition: bytes | None, key: bytes | None, size: int | None
    ) -> tuple[Fault | None, Call]:
        self._scheduler.step()
        return super()._decide(op, partition, key, size)


class SteppingBlockStore(FaultyBlockStore):
    """A blockstore (wrapping any adapter: a local folder, S3) whose every blob call is a
    step of the calling operation, taken before the call reaches the inner store. A
    `delete_many` steps once per key; a listing steps when it starts."""

    def __init__(self, inner: BlockStore, scheduler: Scheduler) -> None:
        super().__init__(inner, self._step)
        self._scheduler = scheduler

    def _step(self, call: BlobCall) -> None:
        self._scheduler.step()


def schedules(
    steps: Sequence[int], *, seed: int, limit: int, shuffled: int = 20
) -> Iterator[list[int]]:
    """Interleavings of operations that take `steps[i]` steps when run alone (see module)."""
    rng = random.Random(seed)
    count = len(steps)
    candidates: list[list[int]] = [
        [i for i in order for _ in range(steps[i])]
        for order in (list(range(count)), list(reversed(range(count))))
    ]
    for first in range(count):
        for second in range(count):
            if first == second:
                continue
            for k in range(steps[first] + 1):
                for j in range(1, steps[second] + 1):
                    candidates.append([first] * k + [second] * j + [first] * steps[first])
    if len(candidates) > limit:
        candidates = candidates[:2] + rng.sample(candidates[2:], limit - 2)
    yield from candidates
    for _ in range(shuffled):
        pool = [i for i in range(count) for _ in range(steps[i] * 2)]
        rng.shuffle(pool)
        yield pool


Check = Callable[[list[Outcome]], None]
Scenario = Callable[[Scheduler], tuple[Sequence[Callable[[], object]], Check]]
"""Builds fresh state with stores stepping through the scheduler; returns the
operations to interleave and the check to run on their outcomes afterwards."""


def explore(scenario: Scenario, *, seed: int = 0, limit: int = 60, shuffled: int = 20) -> int:
    """Run the scenario under every schedule of `schedules`; return how many ran.

    Raises:
        AssertionError: a check failed; the message names the schedule to replay.
    """
    scheduler = Scheduler()
    operations, _ = scenario(scheduler)
    scheduler.run(operations, [])
    steps = [scheduler.trace.count(i) for i in range(len(operations))]
    ran = 0
    for schedule in schedules(steps, seed=seed, limit=limit, shuffled=shuffled):
        scheduler = Scheduler()
        operations, check = scenario(scheduler)
        outcomes = scheduler.run(operations, schedule)
        try:
            check(outcomes)
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}\n(seed {seed}; steps taken, by operation: {scheduler.trace};"
                f" outcomes: {outcomes})"
            ) from exc
        ran += 1
    return ran
