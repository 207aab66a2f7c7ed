"""The measuring wrappers (CountingStore, MeteredStore) pass `delete_if` and `swap_many`
through and count them."""

from __future__ import annotations

from kvlake.kv import CountingStore, MeteredStore, open_store

P = b"part"


def test_counting_store_counts_delete_if_and_passes_its_answer_through() -> None:
    with open_store("mem://") as inner:
        inner.set(P, b"k", b"v")
        store = CountingStore(inner)
        assert store.delete_if(P, b"k", b"other") is False
        assert store.delete_if(P, b"k", b"v") is True
        assert store.calls["delete_if"] == 2
        assert store.round_trips == 2
        assert list(inner.partitions()) == []


def test_metered_store_reports_delete_if_and_passes_its_answer_through() -> None:
    seen: list[tuple[str, bool]] = []
    with open_store("mem://") as inner:
        inner.set(P, b"k", b"v")
        store = MeteredStore(inner, lambda call, seconds, failed: seen.append((call, failed)))
        assert store.delete_if(P, b"k", b"other") is False
        assert store.delete_if(P, b"k", b"v") is True
        assert seen == [("delete_if", False), ("delete_if", False)]
        assert list(inner.partitions()) == []


def test_the_measuring_wrappers_pass_swap_many_through_as_one_call() -> None:
    seen: list[tuple[str, bool]] = []
    with open_store("mem://") as inner:
        inner.set_many(P, [(b"a", b"1"), (b"b", b"2")])
        counting = CountingStore(inner)
        assert counting.swap_many(P, [(b"a", b"1", b"x"), (b"b", b"other", b"y")]) == [b"b"]
        assert counting.calls["swap_many"] == 1
        assert counting.calls["set_if"] == 0
        metered = MeteredStore(inner, lambda call, seconds, failed: seen.append((call, failed)))
        assert metered.swap_many(P, [(b"a", b"x", b"z")]) == []
        assert seen == [("swap_many", False)]
        assert dict(inner.scan(P)) == {b"a": b"z", b"b": b"2"}
