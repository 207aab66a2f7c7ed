"""StagedRead.batches: the pages a commit applies say what the entry-by-entry scan says."""

from __future__ import annotations

from kvlake.graveler import keys
from kvlake.graveler.records import Value, encode
from kvlake.graveler.staging.store import TOMBSTONE, StagedRead
from kvlake.kv.memory import MemoryStore


def _stage(store: MemoryStore, token: str, entries: dict[bytes, Value | None]) -> None:
    store.set_many(
        keys.staging_partition(token),
        sorted((key, TOMBSTONE if v is None else encode(v)) for key, v in entries.items()),
    )


def _batched(read: StagedRead) -> list[tuple[bytes, Value | None]]:
    return [change for batch in read.batches() for change in batch.changes()]


def test_one_token_is_read_in_pages_with_its_tombstones() -> None:
    store = MemoryStore()
    staged: dict[bytes, Value | None] = {
        b"data/%06d" % i: None if i % 5 == 0 else Value(identity=b"%d" % i, data=b"x" * (i % 9))
        for i in range(40_000)  # several KV pages
    }
    _stage(store, "t1", staged)
    read = StagedRead(store, ["t1"], None)
    assert _batched(read) == list(read.scan()) == sorted(staged.items())
    assert len(list(read.batches())) > 2


def test_many_tokens_are_merged_the_newest_winning() -> None:
    store = MemoryStore()
    older: dict[bytes, Value | None] = {
        b"a": Value(identity=b"1", data=b""),
        b"b": Value(identity=b"1", data=b""),
    }
    newer: dict[bytes, Value | None] = {b"b": None, b"c": Value(identity=b"2", data=b"d")}
    _stage(store, "old", older)
    _stage(store, "new", newer)
    read = StagedRead(store, ["new", "old"], None)
    expected = [(b"a", older[b"a"]), (b"b", None), (b"c", newer[b"c"])]
    assert _batched(read) == list(read.scan()) == expected
