"""Fixtures for graveler: real stores and blockstore, and a clock tests move.

`graveler` runs on the memory store; `any_graveler` on each KV driver in turn,
for the data-safety tests that must hold on every one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.graveler.cleaner import Cleaner
from kvlake.graveler.graveler import Graveler
from kvlake.kv import Store, open_store
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import FakeClock, make_graveler
from tests.kv.conftest import STORES, store_params


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


@pytest.fixture(params=store_params(*sorted(STORES)))
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store of each driver in turn (memory, PostgreSQL, SQLite)."""
    with open_store(STORES[request.param](request, tmp_path)) as opened:
        yield opened


@pytest.fixture
def any_graveler(any_store: Store, clock: FakeClock) -> Graveler:
    return make_graveler(any_store, clock)
