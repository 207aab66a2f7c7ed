"""Uids are fixed-width base32 and time-sortable; due keys are fixed-width, ordered and clamped."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvlake import ids
from kvlake.errors import InvalidInputError

# Seconds from before the epoch to past the last representable millisecond.
times = st.floats(min_value=-1e6, max_value=2e10, allow_nan=False)


def test_new_uids_have_the_fixed_width_and_alphabet() -> None:
    made = {ids.new_uid() for _ in range(1000)}
    assert len(made) == 1000
    assert all(len(uid) == ids.UID_LENGTH == 26 for uid in made)
    assert all(set(uid) <= set(ids.UID_ALPHABET) for uid in made)
    assert all(ids.is_uid(uid) for uid in made)


def test_new_uids_sort_by_creation_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    for ms in (1, 2, 1_750_000_000_000, 1_750_000_000_001, 2**48 - 1):
        monkeypatch.setattr(time, "time_ns", lambda ms=ms: ms * 1_000_000)
        made.append(ids.new_uid())
    assert made == sorted(made)
    assert made[0].startswith("0000000001")  # 48 bits of ms are the first 10 of 26 digits


def test_encode_uid_is_zero_padded_base32_of_the_whole_range() -> None:
    assert ids.encode_uid(0) == "0" * 26
    assert ids.encode_uid(31) == "0" * 25 + "z"
    assert ids.encode_uid(32) == "0" * 24 + "10"
    assert ids.encode_uid(2**ids.UID_BITS - 1) == "z" * 26
    for number in (-1, 2**ids.UID_BITS):
        with pytest.raises(InvalidInputError, match="uid number"):
            ids.encode_uid(number)


@given(st.integers(0, 2**ids.UID_BITS - 1), st.integers(0, 2**ids.UID_BITS - 1))
def test_encode_uid_keeps_number_order(a: int, b: int) -> None:
    assert (ids.encode_uid(a) < ids.encode_uid(b)) == (a < b)


def test_is_uid_refuses_other_widths_and_letters() -> None:
    uid = ids.new_uid()
    assert not ids.is_uid(uid[:-1])
    assert not ids.is_uid(uid + "0")
    assert not ids.is_uid(uid[:-1] + "i")  # Crockford leaves out i, l, o, u
    assert not ids.is_uid(uid.upper().replace("0", "A"))


def test_due_key_is_milliseconds_in_thirteen_digits() -> None:
    assert ids.due_key(1_750_000_000.5) == b"1750000000500"
    assert ids.due_key(0) == b"0" * 13
    assert ids.due_of(b"1750000000500/any-suffix") == 1_750_000_000.5


def test_due_keys_clamp_at_both_ends_of_the_range() -> None:
    assert ids.due_key(-5) == b"0000000000000"
    assert ids.due_key(-1e12) == b"0000000000000"
    assert ids.due_key(ids.MAX_DUE_MS / 1000) == b"9999999999999"
    assert ids.due_key(1e20) == b"9999999999999"
    assert ids.due_of(ids.due_key(1e20)) == ids.MAX_DUE_MS / 1000


@given(times)
def test_due_keys_have_one_width_and_give_the_time_back(due: float) -> None:
    key = ids.due_key(due)
    assert len(key) == ids.DUE_WIDTH
    clamped = min(max(due, 0), ids.MAX_DUE_MS / 1000)
    assert clamped - 0.0011 < ids.due_of(key) <= clamped  # milliseconds, truncated


@given(times, times)
def test_due_keys_sort_in_time_order(a: float, b: float) -> None:
    if a <= b:
        assert ids.due_key(a) <= ids.due_key(b)
    else:
        assert ids.due_key(a) >= ids.due_key(b)
