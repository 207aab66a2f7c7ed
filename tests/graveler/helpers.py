"""Shared test helpers for graveler: a clock tests move, values, a real graveler."""

from __future__ import annotations

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Value
from kvlake.kv import Store

NAMESPACE = "mem://lake/repo"


class FakeClock:
    """Time that moves only when a test says so (starts at a fixed, realistic epoch)."""

    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def value(text: str) -> Value:
    """A graveler value whose identity and data are derived from `text`."""
    return Value(identity=text.encode(), data=text.encode())


def make_graveler(
    store: Store, clock: FakeClock, blocks: MemoryBlockStore | None = None
) -> Graveler:
    blocks = blocks or MemoryBlockStore()
    return Graveler(
        store,
        CommittedManager(blocks),
        check_namespace=blocks.check_namespace,
        clock=clock,
        token_drop_delay=0,
    )


def all_keys(store: Store) -> dict[bytes, list[bytes]]:
    """Every key of every partition: what a test expects to be left behind."""
    return {p: [k for k, _ in store.scan(p)] for p in store.partitions()}
