"""KV fixtures: the contract runs unchanged on every driver through one parametrized fixture.

The drivers are tests/support/backends.py's STORES; `store_url` and `any_store` are in
tests/conftest.py, shared with the layers above. Here `store` is the store under contract.
"""

from __future__ import annotations

import pytest

from kvlake.kv import Store


@pytest.fixture
def store(any_store: Store) -> Store:
    """A fresh, empty store of each driver in turn; narrow it with `store_url` indirectly."""
    return any_store
