"""Fixtures for committed data: a memory blockstore and a manager cutting small ranges."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler.committed import CommittedManager

from .helpers import SMALL


@pytest.fixture
def blockstore() -> Iterator[MemoryBlockStore]:
    with MemoryBlockStore() as store:
        yield store


@pytest.fixture
def manager(blockstore: MemoryBlockStore) -> CommittedManager:
    """A manager cutting small ranges, so that tests cross many range boundaries."""
    return CommittedManager(blockstore, chunking=SMALL)
