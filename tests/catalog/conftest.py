"""A catalog over a real blockstore and the memory KV store: the catalog tests run on a
local folder and on S3 (moto's server on loopback, reset for each test).

The write races that must hold on every KV driver take `any_store` (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.catalog import Catalog
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support.s3server import lake_bucket_url

BLOCKSTORES: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "local": lambda request, tmp: f"local://{tmp}/blocks",
    "s3": lambda request, tmp: lake_bucket_url(request),
}


@pytest.fixture(params=sorted(BLOCKSTORES))
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Catalog]:
    blocks = open_blockstore(BLOCKSTORES[request.param](request, tmp_path))
    store = MemoryStore()
    graveler = Graveler(
        store, CommittedManager(blocks), check_namespace=blocks.check_namespace, token_drop_delay=0
    )
    graveler.create_repository("repo1", storage_namespace=f"{blocks.scheme}://lake/repo1")
    yield Catalog(graveler, blocks)
    store.close()
    blocks.close()


@pytest.fixture(params=["mem", "s3"])
def lake(request: pytest.FixtureRequest) -> Iterator[DeletionLake]:
    """The whole lake (catalog, deletion log, workers) on the memory blockstore or on S3."""
    if request.param == "mem":
        blocks: BlockStore = MemoryBlockStore()
    else:
        blocks = open_blockstore(lake_bucket_url(request))
    with MemoryStore() as store, blocks:
        yield DeletionLake(store, blocks, namespace=f"{blocks.scheme}://lake/repo1")
