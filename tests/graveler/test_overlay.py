"""`overlay`: staged entries over the commit, the newest token first, merged by key."""

from __future__ import annotations

import pytest

from kvlake.graveler.staging.store import overlay


@pytest.mark.parametrize("count", [2, 3])
def test_sources_merge_in_key_order_and_the_earliest_wins_a_shared_key(count: int) -> None:
    sources = [
        [(b"b", "new"), (b"d", "new")],
        [(b"a", "old"), (b"b", "old"), (b"c", "old"), (b"e", "old"), (b"f", "old")],
        [(b"a", "oldest"), (b"g", "oldest")],
    ][:count]
    merged = list(overlay(sources))
    expected = [(b"a", "old"), (b"b", "new"), (b"c", "old"), (b"d", "new"), (b"e", "old")]
    expected += [(b"f", "old")] + ([(b"g", "oldest")] if count == 3 else [])
    assert merged == expected


def test_a_source_that_runs_out_leaves_the_rest_of_the_other() -> None:
    assert list(overlay([[], [(b"a", 1), (b"b", 2)]])) == [(b"a", 1), (b"b", 2)]
    assert list(overlay([[(b"a", 1), (b"z", 2)], [(b"b", 3)]])) == [
        (b"a", 1),
        (b"b", 3),
        (b"z", 2),
    ]
    assert list(overlay([[(b"a", 1)], []])) == [(b"a", 1)]
