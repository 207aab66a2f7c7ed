"""A catalog over a real local blockstore in a temporary folder and the memory KV store.

The write races that must hold on every KV driver take `any_store` (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import open_blockstore
from kvlake.catalog import Catalog
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.kv.memory import MemoryStore

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
