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


def _s3(request: pytest.FixtureRequest, tmp: Path) -> str:
    from tests.support.s3server import lake_bucket_url  # moto and boto3 load only for S3

    return lake_bucket_url(request)


BLOCKSTORES: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "local": lambda request, tmp: f"local://{tmp}/blocks",
    "s3": _s3,
}

local_only = pytest.mark.parametrize("lake_blocks", ["local"], indirect=True)
"""Run a `lake_blocks` test on the local folder only: for the few whose S3 run costs many
seconds (thousands of small files through moto) and covers no path that a lighter S3 test
of the same code misses. Each use says which test covers S3 instead."""
