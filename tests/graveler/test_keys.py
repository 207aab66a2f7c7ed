"""Graveler's dropped-token keys keep their fixed width, so their due times sort and split."""

from __future__ import annotations

from kvlake import ids
from kvlake.graveler import keys


def test_dropped_token_keys_sort_by_due_time_and_give_both_parts_back() -> None:
    early = keys.dropped_token_key(1_750_000_000.5, "zzz_token")
    late = keys.dropped_token_key(1_750_000_001.0, "aaa_token")
    assert early == b"1750000000500/zzz_token"
    assert early < late
    assert keys.due_time(early) == 1_750_000_000.5
    assert keys.dropped_token_of(early) == "zzz_token"


def test_dropped_token_due_times_are_clamped_at_both_ends() -> None:
    before = keys.dropped_token_key(-5, "t")
    after = keys.dropped_token_key(1e20, "t")
    assert before == b"0000000000000/t"
    assert after == b"9999999999999/t"
    assert keys.dropped_token_of(before) == keys.dropped_token_of(after) == "t"
    assert keys.due_time(before) == 0
    assert keys.due_time(after) == ids.MAX_DUE_MS / 1000
