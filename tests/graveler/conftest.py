"""Fixtures for graveler: real memory store and blockstore, and a clock tests move."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.graveler.cleaner import Cleaner
from kvlake.graveler.graveler import Graveler
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import FakeClock, make_graveler


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def kv() -> Iterator[MemoryStore]:
    with MemoryStore() as store:
        yield store


@pytest.fixture
def graveler(kv: MemoryStore, clock: FakeClock) -> Graveler:
    return make_graveler(kv, clock)


@pytest.fixture
def cleaner(graveler: Graveler) -> Cleaner:
    return Cleaner(graveler)
