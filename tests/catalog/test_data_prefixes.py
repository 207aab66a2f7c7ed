"""The time slices of the object address layout, which garbage collection lists by."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import MAX_DATA_HOURS, data_prefixes
from kvlake.errors import InvalidInputError
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.support import FakeClock

HOUR = 3600.0
T0 = 1_700_000_000.0 - 1_700_000_000.0 % HOUR  # 2023-11-14T22:00Z


def test_each_hour_the_slice_touches_is_one_prefix() -> None:
    assert data_prefixes(T0, T0 + HOUR) == ["data/20231114T22/"]
    assert data_prefixes(T0 + 1, T0 + HOUR + 1) == ["data/20231114T22/", "data/20231114T23/"]
    assert data_prefixes(T0, T0 + 3 * HOUR)[-1] == "data/20231115T00/"
    assert data_prefixes(T0, T0) == []


def test_a_bad_slice_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="since must not be after until"):
        data_prefixes(T0 + 1, T0)
    with pytest.raises(InvalidInputError, match=f"at most {MAX_DATA_HOURS} hours"):
        data_prefixes(0, (MAX_DATA_HOURS + 1) * HOUR)


def test_the_slices_list_exactly_the_objects_made_in_them(lake_blocks: BlockStore) -> None:
    clock = FakeClock()
    clock.now = T0 + 10
    lake = DeletionLake(MemoryStore(), lake_blocks, clock=clock)
    made: list[str] = []
    for _ in range(3):
        made.append(lake.upload(f"p{len(made)}").address)
        clock.advance(HOUR)
    links = lake.catalog.direct_uploads(b"k" * 32)
    linked, _ = links.issue(lake.repository, "main", "direct")
    lake.blocks.put(lake.namespace, linked, b"x")
    lake.catalog.copy_object(lake.repository, "main", "p0", "main", "deep", shallow=False)
    listed = lake.blocks.list_blobs(
        lake.namespace, data_prefixes(T0 + HOUR, clock() + 1), parallel=4
    )
    keys = [blob.key for blob in listed]
    assert keys[:2] == made[1:]
    assert sorted(keys[2:]) == sorted(lake.data_blobs() - set(made))
