"""The package's public surface: a sorted, complete `__all__`."""

from __future__ import annotations

import types

import kvlake.graveler.committed as committed


def test_all_is_sorted_and_complete() -> None:
    public = {
        name
        for name, obj in vars(committed).items()
        if not name.startswith("_")
        and not isinstance(obj, types.ModuleType)
        and name != "annotations"
    }

    assert committed.__all__ == sorted(committed.__all__)
    assert set(committed.__all__) == public
