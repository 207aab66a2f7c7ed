"""`overlay_two`, the listing's two-way merge, against `overlay`'s heap merge."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kvlake.graveler.staging.store import overlay, overlay_two

_keys = st.sets(st.binary(max_size=3), max_size=30)


@given(_keys, _keys)
def test_two_sources_merge_as_overlay_does(first_keys: set[bytes], second_keys: set[bytes]) -> None:
    first = [(key, ("first", key)) for key in sorted(first_keys)]
    second = [(key, ("second", key)) for key in sorted(second_keys)]
    assert list(overlay_two(first, second)) == list(overlay([first, second]))


def test_the_first_source_wins_a_shared_key_and_either_may_run_out_first() -> None:
    first = [(b"b", 1), (b"d", 1)]
    second = [(b"a", 2), (b"b", 2), (b"c", 2), (b"e", 2), (b"f", 2)]
    merged = [(b"a", 2), (b"b", 1), (b"c", 2), (b"d", 1), (b"e", 2), (b"f", 2)]
    assert list(overlay_two(first, second)) == merged
    assert list(overlay_two(second, first)) == [(b"a", 2), (b"b", 2), (b"c", 2), (b"d", 1)] + [
        (b"e", 2),
        (b"f", 2),
    ]
    assert list(overlay_two([], second)) == second
    assert list(overlay_two(first, [])) == first
