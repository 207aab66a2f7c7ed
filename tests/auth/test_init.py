"""The auth and api packages export a sorted `__all__` of names that exist."""

from __future__ import annotations

from types import ModuleType

import pytest

import kvlake.api
import kvlake.auth


@pytest.mark.parametrize("package", [kvlake.auth, kvlake.api], ids=lambda p: p.__name__)
def test_package_all_is_sorted_and_resolvable(package: ModuleType) -> None:
    exported = list(package.__all__)
    # Sorted as isort does: CONSTANTS, then Classes, then functions.
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    for name in exported:
        assert getattr(package, name) is not None
