"""Where a test runs a lake: one `Backend` names the KV driver, the blockstore, how the
test's storage namespaces are spelled, and how much of a repeated scenario runs there.

Every table of backends the suites use is built from it: the drivers (`STORES`), the
blockstores (`BLOCKSTORES`), the three pairs a test taking both runs on (`PAIRED`), the two
servers of the API and gateway suites (`SERVED`). A new driver or blockstore adds one line
to its table here; the fixtures of tests/conftest.py and tests/support/servers.py follow.

The sample rule ("every case on the local folder, a sample on S3") is `Backend.budget`:
a blob call through moto costs about ten times a local one, so a test that repeats a
scenario many times gives the figure for every case and the figure for the sample, and the
backend picks. `budget(blocks, ...)` does the same from an opened blockstore.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from kvlake.blockstore import BlockStore

T = TypeVar("T")

Url = Callable[[pytest.FixtureRequest, Path], str]
"""From the test's request and temporary folder to the URL of a fresh, empty store (a
fixture it asks for may start a server or make a PostgreSQL table of the test's own)."""


def _s3(request: pytest.FixtureRequest, tmp: Path) -> str:
    from tests.support.s3server import lake_bucket_url  # moto and boto3 load only for S3

    return lake_bucket_url(request)


STORES: dict[str, Url] = {
    "mem": lambda request, tmp: "mem://",
    "postgres": lambda request, tmp: str(request.getfixturevalue("postgres_url")),
    "sqlite": lambda request, tmp: f"sqlite://{tmp}/kv.db",
}
"""Every KV driver: the contract and the data-safety tests run on each in turn."""

BLOCKSTORES: dict[str, Url] = {
    "local": lambda request, tmp: f"local://{tmp}/blocks",
    "s3": _s3,
}
"""The blockstores users run, each with a bucket or folder `lake` at its root: a local
folder, and the bucket `lake` of the session's moto server, reset for the test. The memory
adapter is not here: it is nobody's production store, and its own contract run
(tests/blockstore) covers it."""

SAMPLED = frozenset({"s3"})
"""The blockstores that run a sample of a repeated scenario rather than every case."""

_MARKS: dict[str, list[pytest.MarkDecorator]] = {"postgres": [pytest.mark.postgres]}


@dataclass(frozen=True)
class Backend:
    """A KV driver over a blockstore, as a test runs a lake on them."""

    kv: str
    """A key of STORES: mem, postgres or sqlite."""
    blocks: str
    """A key of BLOCKSTORES: local or s3."""

    @property
    def id(self) -> str:
        """The test id of a run on this pair, like `postgres-s3`."""
        return f"{self.kv}-{self.blocks}"

    @property
    def marks(self) -> list[pytest.MarkDecorator]:
        """The marks a run on it carries (`postgres` for PostgreSQL)."""
        return _MARKS.get(self.kv, [])

    @property
    def sampled(self) -> bool:
        """Whether a repeated scenario runs a sample here rather than every case."""
        return self.blocks in SAMPLED

    def kv_url(self, request: pytest.FixtureRequest, tmp: Path) -> str:
        return STORES[self.kv](request, tmp)

    def blocks_url(self, request: pytest.FixtureRequest, tmp: Path) -> str:
        return BLOCKSTORES[self.blocks](request, tmp)

    def namespace(self, path: str) -> str:
        """The storage namespace `path` below the blockstore's `lake`, like `s3://lake/repo1`."""
        return f"{self.blocks}://lake/{path}"

    def budget(self, every: T, sample: T) -> T:
        """`every` on a blockstore that runs every case, `sample` on one that samples."""
        return sample if self.sampled else every


PAIRED = (Backend("mem", "local"), Backend("sqlite", "local"), Backend("postgres", "s3"))
"""The blockstore each KV driver runs with in a test that takes both: the memory store
(fastest) and a laptop's SQLite file with a local folder, production's PostgreSQL with S3.
Three runs meet every driver and every blockstore, where all pairs would take six."""

PAIRS = {backend.kv: backend.blocks for backend in PAIRED}

SERVED = (Backend("sqlite", "local"), Backend("postgres", "s3"))
"""The session servers of the API and gateway suites (ids `sqlite`, `postgres-s3`)."""


def on(blocks: BlockStore | str) -> Backend:
    """The backend of a test that takes a blockstore alone (`lake_blocks`): the memory
    store over that blockstore (an opened one, or its kind)."""
    return Backend("mem", blocks if isinstance(blocks, str) else blocks.scheme)


def namespace(blocks: BlockStore | str, path: str) -> str:
    """The storage namespace `path` on `blocks` (see `Backend.namespace`)."""
    return on(blocks).namespace(path)


def budget(blocks: BlockStore | str, every: T, sample: T) -> T:
    """`every` on a local folder, `sample` on S3 (see `Backend.budget`)."""
    return on(blocks).budget(every, sample)


def examples(blocks: BlockStore, on_local: int) -> int:
    """How many generated examples a test runs on `blocks`: `on_local` on a local folder, a
    tenth (at least ten) on S3, where every range file an example writes is a round trip."""
    return budget(blocks, on_local, max(10, on_local // 10))


def store_params(*drivers: str) -> list[object]:
    """Parameters for `store_url` (or `any_store`), to narrow a test to some drivers."""
    return [pytest.param(name, marks=_MARKS.get(name, [])) for name in drivers]


def paired_params(*drivers: str) -> list[object]:
    """Parameters for (`store_url` or a driver fixture, `lake_blocks`), indirectly: each
    driver with its blockstore of PAIRED, ids like `postgres-s3`."""
    pairs = [Backend(name, PAIRS[name]) for name in drivers]
    return [pytest.param(b.kv, b.blocks, id=b.id, marks=b.marks) for b in pairs]


def served_params(backends: Iterable[Backend] = SERVED) -> list[object]:
    """Parameters for a fixture that starts a server per backend (`request.param` is the
    Backend), ids `sqlite` and `postgres-s3` as CI has always shown them."""
    return [
        pytest.param(b, id=b.kv if b.blocks == "local" else b.id, marks=b.marks) for b in backends
    ]
