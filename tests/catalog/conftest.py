"""A catalog over a real blockstore and the memory KV store: the catalog tests run on a
local folder and on S3 (moto's server on loopback, reset for each test).

The write races that must hold on every KV driver take `any_store` (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import Catalog
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support import backends


@pytest.fixture
def catalog(lake_blocks: BlockStore) -> Iterator[Catalog]:
    blocks = lake_blocks
    store = MemoryStore()
    graveler = Graveler(
        store, CommittedManager(blocks), check_namespace=blocks.check_namespace, token_drop_delay=0
    )
    graveler.create_repository("repo1", storage_namespace=backends.namespace(blocks, "repo1"))
    yield Catalog(graveler, blocks)
    store.close()


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[DeletionLake]:
    """The whole lake (catalog, deletion log, workers) on a local folder or on S3."""
    with MemoryStore() as store:
        yield DeletionLake(store, lake_blocks)
