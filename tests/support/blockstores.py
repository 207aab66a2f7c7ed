"""The blockstores every test that stores blobs runs on: a local folder and S3.

A function from the test's request and temporary folder to the URL of a fresh,
empty blockstore whose namespaces are `<scheme>://lake/<path>`: for local, a
folder with a `lake` folder inside; for S3, the bucket `lake` of the session's
moto server, reset for the test (see `tests/support/s3server.py`). The memory
adapter is not here: it is nobody's production store, and its own contract run
(tests/blockstore) covers it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore
from tests.support.stores import store_marks


def _s3(request: pytest.FixtureRequest, tmp: Path) -> str:
    from tests.support.s3server import lake_bucket_url  # moto and boto3 load only for S3

    return lake_bucket_url(request)


BLOCKSTORES: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "local": lambda request, tmp: f"local://{tmp}/blocks",
    "s3": _s3,
}

PAIRS = {"mem": "local", "sqlite": "local", "postgres": "s3"}
"""The blockstore each KV driver runs with in a test that takes both: a laptop's SQLite
file with a local folder, production's PostgreSQL with S3, and the memory store (fastest)
with a local folder. Three runs meet every driver and every blockstore."""


def paired_params(*drivers: str) -> list[object]:
    """Parameters for (`store_url` or a driver fixture, `lake_blocks`), indirectly: each
    driver with its blockstore of PAIRS, ids like `postgres-s3`."""
    return [
        pytest.param(name, PAIRS[name], id=f"{name}-{PAIRS[name]}", marks=store_marks(name))
        for name in drivers
    ]


def examples(blocks: BlockStore, on_local: int) -> int:
    """How many generated examples a test runs on `blocks`: `on_local` on a local folder, a
    tenth (at least ten) on S3, where every range file an example writes costs a round trip
    through moto, ten times a local write."""
    return on_local if blocks.scheme == "local" else max(10, on_local // 10)
