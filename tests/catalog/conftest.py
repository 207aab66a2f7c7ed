"""A catalog over a real local blockstore in a temporary folder and the memory KV store.

`any_store` gives a fresh store of each KV driver in turn, for the tests of
write races that must hold on every one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import open_blockstore
from kvlake.catalog import Catalog
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.kv import Store, open_store
from kvlake.kv.memory import MemoryStore
from tests.kv.conftest import STORES, store_params

NAMESPACE = "local://lake/repo1"


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    blocks = open_blockstore(f"local://{tmp_path}/blocks")
    store = MemoryStore()
    graveler = Graveler(
        store, CommittedManager(blocks), check_namespace=blocks.check_namespace, token_drop_delay=0
    )
    graveler.create_repository("repo1", storage_namespace=NAMESPACE)
    yield Catalog(graveler, blocks)
    store.close()
    blocks.close()


@pytest.fixture(params=store_params(*sorted(STORES)))
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store of each driver in turn (memory, PostgreSQL, SQLite)."""
    with open_store(STORES[request.param](request, tmp_path)) as opened:
        yield opened
