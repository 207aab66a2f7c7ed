"""Fixtures for committed data: a real blockstore (a local folder, then S3) and a manager
cutting small ranges.

Every test here stores its ranges on `blockstore` (or, for test_apply.py, on a local
folder). The few that write hundreds of small range files, where an S3 round trip per
file would cost many seconds (test_apply.py with its module-wide `large` metarange, the
property test of test_apply_properties.py, three tests marked `local_only`), run on the
local folder only; each names the S3 test that covers the same code.
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
