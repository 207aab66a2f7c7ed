"""Pause an operation at one of its KV calls and run another operation there, inline.

Races are tested deterministically: `SteppingStore` sees every driver-level
call of the operation under test (as `FaultyStore` counts them) and runs a
callback before it, in the same thread, so the callback's operation happens
exactly between two KV calls of the paused one. Run a scenario once to learn
how many calls it makes, then once per call index to try every interleaving
point of the intruding operation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kvlake.blockstore import BlockStore
from kvlake.graveler.graveler import Graveler
from kvlake.kv import Store
from kvlake.kv.faults import Call, Fault, FaultyStore
from tests.graveler.helpers import make_graveler
from tests.support import FakeClock

_T = TypeVar("_T")


class SteppingStore(FaultyStore):
    """A store that runs `at_call(call)` before each of its calls (None: just count them)."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.at_call: Callable[[Call], None] | None = None

    def _decide(
        self, op: str, partition: bytes | None, key: bytes | None, size: int | None
    ) -> tuple[Fault | None, Call]:
        fault, call = super()._decide(op, partition, key, size)
        if self.at_call is not None:
            self.at_call(call)
        return fault, call

    def close(self) -> None:
        """The inner store belongs to the test's fixture, which closes it."""


def paused_graveler(
    graveler: Graveler, clock: FakeClock, blocks: BlockStore
) -> tuple[Graveler, SteppingStore]:
    """A second graveler over the same data (`graveler`'s store and committed data, on
    `blocks`, its blockstore) whose KV calls step through a SteppingStore."""
    stepping = SteppingStore(graveler.store)
    return make_graveler(stepping, clock, blocks, committed=graveler.committed), stepping


def run_paused(
    stepping: SteppingStore,
    operation: Callable[[], _T],
    *,
    at_each_call: Callable[[Call], None] | None = None,
    at_call: int | None = None,
    intruder: Callable[[], object] | None = None,
) -> _T:
    """Run `operation`, calling `at_each_call(call)` before every KV call it makes, and
    `intruder` once, before its call number `at_call` (0-based, counted from now); what
    `intruder` returns is ignored.

    The callbacks' own KV calls are not stepped (they may use the same store).
    """
    first = len(stepping.calls)

    def step(call: Call) -> None:
        if call.index - first < 0:
            return
        stepping.at_call = None
        try:
            if at_each_call is not None:
                at_each_call(call)
            if intruder is not None and call.index - first == at_call:
                intruder()
        finally:
            stepping.at_call = step

    stepping.at_call = step
    try:
        return operation()
    finally:
        stepping.at_call = None


def calls_of(stepping: SteppingStore, operation: Callable[[], object]) -> int:
    """How many KV calls `operation` makes (run it on a scenario set up for the purpose)."""
    first = len(stepping.calls)
    operation()
    return len(stepping.calls) - first
