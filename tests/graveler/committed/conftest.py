"""Fixtures for committed data: a real blockstore (a local folder, then S3) and a manager
cutting small ranges.

The tests that count reads on a cold cache or run many generated examples
(`large`, the property tests) build their own memory blockstore and use
`helpers.NAMESPACE`: they are about the cutting and the cache, not the store, and
an S3 round trip per example would cost minutes.
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.graveler.committed import CommittedManager

from .helpers import SMALL


@pytest.fixture
def blockstore(lake_blocks: BlockStore) -> BlockStore:
    return lake_blocks


@pytest.fixture
def namespace(blockstore: BlockStore) -> str:
    """The storage namespace the tests write ranges to, on `blockstore`."""
    return f"{blockstore.scheme}://lake/repo1"


@pytest.fixture
def manager(blockstore: BlockStore) -> CommittedManager:
    """A manager cutting small ranges, so that tests cross many range boundaries."""
    return CommittedManager(blockstore, chunking=SMALL)
