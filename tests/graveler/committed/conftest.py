"""Fixtures for committed data: a real blockstore (a local folder, then S3) and a manager
cutting small ranges.

Every test here stores its ranges on `blockstore`, so every one runs on both; the
property test of test_apply_properties.py runs a tenth of its examples on S3, where each
range file is a round trip through moto (`tests/support/backends.py` `examples`).
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.graveler.committed import CommittedManager
from tests.support import backends

from .helpers import SMALL


@pytest.fixture
def blockstore(lake_blocks: BlockStore) -> BlockStore:
    return lake_blocks


@pytest.fixture
def namespace(blockstore: BlockStore) -> str:
    """The storage namespace the tests write ranges to, on `blockstore`."""
    return backends.namespace(blockstore, "repo1")


@pytest.fixture
def manager(blockstore: BlockStore) -> CommittedManager:
    """A manager cutting small ranges, so that tests cross many range boundaries."""
    return CommittedManager(blockstore, chunking=SMALL)
