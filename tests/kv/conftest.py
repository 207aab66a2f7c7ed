"""KV fixtures: the contract runs unchanged on every driver through one parametrized fixture.

A new driver adds one line to STORES: a function from the test's request and temporary folder
to the URL of a fresh, empty store. PostgreSQL gets a table of its own, dropped afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kvlake.kv import Store, open_store

STORES: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "mem": lambda request, tmp: "mem://",
    "postgres": lambda request, tmp: str(request.getfixturevalue("postgres_url")),
    "sqlite": lambda request, tmp: f"sqlite://{tmp}/kv.db",
}
MARKS: dict[str, list[pytest.MarkDecorator]] = {"postgres": [pytest.mark.postgres]}


def store_params(*names: str) -> list[object]:
    """Parameters for `store_url` (or `store`), to narrow a test to some drivers indirectly."""
    return [pytest.param(name, marks=MARKS.get(name, [])) for name in names]


@pytest.fixture(params=store_params(*sorted(STORES)))
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh, empty store of each driver in turn."""
    return STORES[request.param](request, tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with open_store(store_url) as opened:
        yield opened
