"""Fixtures for graveler: real stores and blockstore, and a clock tests move.

`graveler` runs on the memory store (`kv`); `any_graveler` on each KV driver in
turn (`any_store`), for the data-safety tests that must hold on every one.
"""

from __future__ import annotations

import pytest

from kvlake.graveler.cleaner import Cleaner
from kvlake.graveler.graveler import Graveler
from kvlake.kv import Store
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler
from tests.support import FakeClock


@pytest.fixture
def graveler(kv: MemoryStore, clock: FakeClock) -> Graveler:
    return make_graveler(kv, clock)


@pytest.fixture
def cleaner(graveler: Graveler) -> Cleaner:
    return Cleaner(graveler)


@pytest.fixture
def any_graveler(any_store: Store, clock: FakeClock) -> Graveler:
    return make_graveler(any_store, clock)
