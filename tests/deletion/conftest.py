"""Fixtures for deletion: a lake on the memory KV store, and on the memory blockstore or S3
(moto's server on loopback), so the whole deletion flow also runs against DeleteObjects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support.s3server import lake_bucket_url


@pytest.fixture(params=["mem", "s3"])
def lake(request: pytest.FixtureRequest) -> Iterator[DeletionLake]:
    blocks: BlockStore = (
        MemoryBlockStore() if request.param == "mem" else open_blockstore(lake_bucket_url(request))
    )
    with MemoryStore() as store, blocks:
        yield DeletionLake(store, blocks, namespace=f"{blocks.scheme}://lake/repo1")
