"""A test that takes a KV store of each driver and a blockstore runs once per driver, on
the blockstore PAIRS gives it (tests/conftest.py's pytest_generate_tests)."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.kv import Store
from tests.support.backends import PAIRS


def test_each_driver_meets_its_paired_blockstore(
    request: pytest.FixtureRequest, any_store: Store, lake_blocks: BlockStore
) -> None:
    driver = request.node.callspec.params["store_url"]
    assert lake_blocks.scheme == PAIRS[driver]
    assert {PAIRS[name] for name in PAIRS} == {"local", "s3"}  # three runs meet both
