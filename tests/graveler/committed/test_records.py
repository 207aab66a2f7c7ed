"""Chunking settings and file ids are checked before they can do harm."""

from __future__ import annotations

import pytest

from kvlake.errors import InvalidInputError, MetarangeNotFoundError, RangeNotFoundError
from kvlake.graveler.committed import Chunking, RangeInfo
from kvlake.graveler.committed.records import file_id, file_key


@pytest.mark.parametrize(
    "settings",
    [
        {"target_entries": 3000},
        {"target_entries": 0},
        {"max_entries": 0},
        {"max_bytes": -1},
    ],
)
def test_chunking_refuses_bad_settings(settings: dict[str, int]) -> None:
    with pytest.raises(InvalidInputError, match="Chunking"):
        Chunking(**settings)


def test_file_key_is_under_lakefs_for_ids_only() -> None:
    good = file_id(b"some bytes")

    assert file_key("range", good) == f"_lakefs/{good}"
    with pytest.raises(RangeNotFoundError, match="range id '../x' is not an id"):
        file_key("range", "../x")
    with pytest.raises(MetarangeNotFoundError, match="64 lowercase hex"):
        file_key("metarange", good.upper())


def test_range_info_is_frozen() -> None:
    info = RangeInfo(id="a", min_key=b"a", max_key=b"b", count=2, size=10)

    with pytest.raises(AttributeError):
        info.count = 3  # type: ignore[misc]
