"""Blockstore fixtures: every adapter runs the same contract through one parametrized fixture.

A new adapter adds one line to ADAPTERS: a function from a temporary folder to
the blockstore URL that opens it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.blockstore.local import LocalBlockStore

ADAPTERS: dict[str, Callable[[Path], str]] = {
    "local": lambda tmp: f"local://{tmp}/blocks",
    "mem": lambda tmp: "mem://",
}


@pytest.fixture(params=sorted(ADAPTERS))
def blockstore(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlockStore]:
    with open_blockstore(ADAPTERS[request.param](tmp_path)) as store:
        yield store


@pytest.fixture
def namespace(blockstore: BlockStore) -> str:
    return f"{blockstore.scheme}://lake/repo1"


@pytest.fixture
def local_store(tmp_path: Path) -> Iterator[LocalBlockStore]:
    with LocalBlockStore.from_url(f"local://{tmp_path}/root") as store:
        yield store
