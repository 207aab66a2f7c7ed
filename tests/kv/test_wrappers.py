"""The measuring wrappers (CountingStore, MeteredStore) pass `delete_if` through and count it."""

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
