"""`update` and `get_or_none`: the one read-modify-write loop every record goes through."""

from __future__ import annotations

import pytest

from kvlake.errors import InvalidInputError, TooManyTriesError
from kvlake.kv import Store, get_or_none, update

P, K = b"p", b"k"


def test_get_or_none_tells_an_absent_key_from_a_present_one(store: Store) -> None:
    assert get_or_none(store, P, K) is None
    store.set(P, K, b"v")
    loaded = get_or_none(store, P, K)
    assert loaded is not None and loaded[0] == b"v"


def test_an_absent_record_is_created_from_none(store: Store) -> None:
    seen: list[bytes | None] = []

    def change(current: bytes | None) -> bytes:
        seen.append(current)
        return b"new"

    assert update(store, P, K, change, what="creating k") == b"new"
    assert seen == [None]
    assert store.get(P, K)[0] == b"new"


def test_a_change_that_returns_none_writes_nothing(store: Store) -> None:
    store.set(P, K, b"as is")
    assert update(store, P, K, lambda current: None, what="keeping k") == b"as is"
    assert store.get(P, K)[0] == b"as is"


def test_a_lost_race_applies_the_change_again_to_the_winners_value(store: Store) -> None:
    store.set(P, K, b"1")

    def add_one(current: bytes | None) -> bytes:
        assert current is not None
        if current == b"1":
            store.set(P, K, b"10")  # another writer lands between the read and the write
        return str(int(current) + 1).encode()

    assert update(store, P, K, add_one, what="counting") == b"11"
    assert store.get(P, K)[0] == b"11"


def test_a_record_deleted_during_the_change_is_written_as_created(store: Store) -> None:
    store.set(P, K, b"old")

    def change(current: bytes | None) -> bytes:
        if current is not None:
            store.delete(P, K)
        return b"from " + (current or b"nothing")

    assert update(store, P, K, change, what="rewriting k") == b"from nothing"


def test_always_losing_gives_up_after_the_bound_naming_the_change(store: Store) -> None:
    calls = 0

    def always_raced(current: bytes | None) -> bytes:
        nonlocal calls
        calls += 1
        store.set(P, K, str(calls).encode())
        return b"mine"

    with pytest.raises(TooManyTriesError, match="renaming k kept racing other writers; retry"):
        update(store, P, K, always_raced, what="renaming k", tries=3)
    assert calls == 3
    assert store.get(P, K)[0] == b"3"


def test_a_refusal_from_the_change_propagates_and_writes_nothing(store: Store) -> None:
    def refuse(current: bytes | None) -> bytes:
        raise InvalidInputError("no")

    with pytest.raises(InvalidInputError):
        update(store, P, K, refuse, what="refusing")
    assert get_or_none(store, P, K) is None
