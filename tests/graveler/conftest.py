"""Fixtures for graveler: real stores and blockstore, and a clock tests move.

`graveler` runs on the memory store (`kv`) over each blockstore in turn (a local
folder, then S3); `any_graveler` on each KV driver in turn (`any_store`), each
paired with a blockstore (tests/support/backends.py `PAIRED`), for the data-safety tests
that must hold on every one. `namespace` is the repository's storage namespace on
the run's blockstore.
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.cleaner import Cleaner
from kvlake.kv import Store
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler
from tests.support import FakeClock, backends


@pytest.fixture
def namespace(lake_blocks: BlockStore) -> str:
    return backends.namespace(lake_blocks, "repo")


@pytest.fixture
def graveler(kv: MemoryStore, clock: FakeClock, lake_blocks: BlockStore) -> Graveler:
    return make_graveler(kv, clock, lake_blocks)


@pytest.fixture
def cleaner(graveler: Graveler) -> Cleaner:
    return Cleaner(graveler)


@pytest.fixture
def any_graveler(any_store: Store, clock: FakeClock, lake_blocks: BlockStore) -> Graveler:
    return make_graveler(any_store, clock, lake_blocks)
