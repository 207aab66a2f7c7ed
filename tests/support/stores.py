"""Every KV driver, by name: the contract and the data-safety tests run on each in turn.

A new driver adds one line to STORES: a function from the test's request and temporary folder
to the URL of a fresh, empty store. PostgreSQL gets a table of its own, dropped afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

STORES: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "mem": lambda request, tmp: "mem://",
    "postgres": lambda request, tmp: str(request.getfixturevalue("postgres_url")),
    "sqlite": lambda request, tmp: f"sqlite://{tmp}/kv.db",
}
_MARKS: dict[str, list[pytest.MarkDecorator]] = {"postgres": [pytest.mark.postgres]}


def store_marks(name: str) -> list[pytest.MarkDecorator]:
    """The marks a run on driver `name` carries (`postgres` for PostgreSQL)."""
    return _MARKS.get(name, [])


def store_params(*names: str) -> list[object]:
    """Parameters for `store_url` (or `any_store`), to narrow a test to some drivers indirectly."""
    return [pytest.param(name, marks=store_marks(name)) for name in names]
