"""Blockstore fixtures: every adapter runs the same contract through one parametrized fixture.

A new adapter adds one line to ADAPTERS: a function from the test's request and
a temporary folder to the blockstore URL that opens it (a fixture it asks for
may start a server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore, MeteredBlockStore, open_blockstore
from kvlake.blockstore.local import LocalBlockStore
from tests.support import backends
from tests.support.backends import BLOCKSTORES
from tests.support.s3server import MotoS3

ADAPTERS: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "local": BLOCKSTORES["local"],
    "mem": lambda request, tmp: "mem://",
    "s3": lambda request, tmp: str(request.getfixturevalue("s3_url")),
}


METERED = "metered-s3"
"""S3 behind the server's metering wrapper (kvlake/blockstore/metered.py): the contract
holds through it, ETags, conditional reads and batched deletes included."""


@pytest.fixture(params=[*sorted(ADAPTERS), METERED])
def blockstore(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlockStore]:
    if request.param == METERED:
        calls: list[tuple[str, float, str]] = []
        inner = open_blockstore(ADAPTERS["s3"](request, tmp_path))
        with MeteredBlockStore(inner, lambda *call: calls.append(call)) as store:
            yield store
        return
    with open_blockstore(ADAPTERS[request.param](request, tmp_path)) as store:
        yield store


@pytest.fixture
def namespace(blockstore: BlockStore) -> str:
    return backends.namespace(blockstore, "repo1")


@pytest.fixture
def local_store(tmp_path: Path) -> Iterator[LocalBlockStore]:
    with LocalBlockStore.from_url(f"local://{tmp_path}/root") as store:
        yield store


@pytest.fixture
def s3_url(s3_server: MotoS3) -> str:
    """A root serving every bucket, reached through the standard AWS variables alone."""
    return "s3://"
