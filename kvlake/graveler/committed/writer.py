"""Cutting sorted entries into content-defined ranges and storing them by content.

`RangeWriter` receives entries in ascending key order, one at a time or as
whole ranges passed by reference, and closes a range after a key whose hash
hits the modulus (or at a size cap; see `Chunking`). It protects two
invariants: the ranges of a metarange are sorted and disjoint (keys must come
strictly ascending, or nothing is returned), and a range is only ever passed by
reference at a boundary, so every range ends where the chunking rule would have
ended it and an unchanged region is cut exactly as before. Files are put only
when absent: content addressing makes a second put of the same id redundant.
"""

from __future__ import annotations

from collections.abc import Iterable
from zlib import crc32

from kvlake.blockstore.store import BlockStore
from kvlake.errors import InvalidInputError
from kvlake.graveler.committed.parquet import encode_metarange, encode_range
from kvlake.graveler.committed.reader import CommittedStats
from kvlake.graveler.committed.records import FILE_PREFIX, Chunking, RangeInfo, file_id
from kvlake.graveler.records import Value


def store_file(
    blockstore: BlockStore, namespace: str, data: bytes, stats: CommittedStats
) -> tuple[str, bool]:
    """Store a range or metarange file under its content address unless already there.

    Returns the id and whether a new blob was written. Concurrent writers of the
    same id write the same bytes, and a put is atomic, so the race is harmless.
    """
    new_id = file_id(data)
    key = FILE_PREFIX + new_id
    if blockstore.exists(namespace, key):
        stats.count("files_already_present")
        return new_id, False
    blockstore.put(namespace, key, data)
    stats.count("files_written")
    return new_id, True


def store_metarange(
    blockstore: BlockStore, namespace: str, ranges: list[RangeInfo], stats: CommittedStats
) -> str:
    """Store a metarange listing `ranges` (sorted, disjoint) and return its id."""
    metarange_id, _ = store_file(blockstore, namespace, encode_metarange(ranges), stats)
    return metarange_id


class RangeWriter:
    """Accumulates ascending entries and stores a range each time the chunking rule says.

    Not thread-safe: one writer serves one metarange being built.
    """

    def __init__(
        self, blockstore: BlockStore, namespace: str, chunking: Chunking, stats: CommittedStats
    ) -> None:
        self._blockstore = blockstore
        self._namespace = namespace
        self._stats = stats
        self._mask = chunking.target_entries - 1
        self._max_entries = chunking.max_entries
        self._max_bytes = chunking.max_bytes
        self._keys: list[bytes] = []
        self._identities: list[bytes] = []
        self._datas: list[bytes] = []
        self._bytes = 0
        # Keys are non-empty, so b"" sorts before the first; this check
        # (strictly ascending) is what keeps every range sorted and disjoint.
        self._last_key = b""
        self._ranges: list[RangeInfo] = []

    @property
    def at_boundary(self) -> bool:
        """Whether the last entry closed a range: only then may a range pass by reference."""
        return not self._keys

    def closes_at(self, info: RangeInfo) -> bool:
        """Whether the chunking rule surely ends a range at `info`'s last key.

        False for a range that ended where its input ended (or at the byte cap,
        which `RangeInfo` does not record): only then can appended keys join it.
        """
        return not crc32(info.max_key) & self._mask or info.count >= self._max_entries

    def add(self, key: bytes, identity: bytes, data: bytes) -> None:
        """Append one entry; close the range if its key is a boundary or a cap is reached.

        Raises:
            InvalidInputError: `key` is empty or not above the previous key.
        """
        if key <= self._last_key:
            raise _unsorted(key, self._last_key)
        self._last_key = key
        keys = self._keys
        keys.append(key)
        self._identities.append(identity)
        self._datas.append(data)
        self._bytes += len(key) + len(identity) + len(data)
        if (
            not crc32(key) & self._mask
            or len(keys) >= self._max_entries
            or self._bytes >= self._max_bytes
        ):
            self._flush()

    def skip(self, key: bytes) -> None:
        """Note a deleted key: nothing is written, but it must still come in order."""
        if key <= self._last_key:
            raise _unsorted(key, self._last_key)
        self._last_key = key

    def add_all(self, entries: Iterable[tuple[bytes, Value | None]], *, deletions: bool) -> None:
        """Append many entries: `add` for each (`skip` for a None value if `deletions`).

        The hot path of large commits, so the per-entry work runs on local names.

        Raises:
            InvalidInputError: a key is empty or out of order, or a value is None
                and `deletions` is false.
        """
        keys, identities, datas = self._keys, self._identities, self._datas
        mask, max_entries, max_bytes = self._mask, self._max_entries, self._max_bytes
        last, size = self._last_key, self._bytes
        try:
            for key, value in entries:
                if key <= last:
                    raise _unsorted(key, last)
                last = key
                if value is None:
                    if deletions:
                        continue
                    raise InvalidInputError(f"entry {key!r} has no value; pass a Value")
                identity, data = value.identity, value.data
                keys.append(key)
                identities.append(identity)
                datas.append(data)
                size += len(key) + len(identity) + len(data)
                if not crc32(key) & mask or len(keys) >= max_entries or size >= max_bytes:
                    self._flush()
                    size = 0
        finally:
            self._last_key, self._bytes = last, size

    def add_columns(
        self, keys: list[bytes], identities: list[bytes], datas: list[bytes], start: int, stop: int
    ) -> None:
        """Append rows [start, stop) of parallel columns (a decoded range): `add` for each."""
        own_keys, own_identities, own_datas = self._keys, self._identities, self._datas
        mask, max_entries, max_bytes = self._mask, self._max_entries, self._max_bytes
        last, size = self._last_key, self._bytes
        rows = zip(keys[start:stop], identities[start:stop], datas[start:stop], strict=True)
        try:
            for key, identity, data in rows:
                if key <= last:
                    raise _unsorted(key, last)
                last = key
                own_keys.append(key)
                own_identities.append(identity)
                own_datas.append(data)
                size += len(key) + len(identity) + len(data)
                if not crc32(key) & mask or len(own_keys) >= max_entries or size >= max_bytes:
                    self._flush()
                    size = 0
        finally:
            self._last_key, self._bytes = last, size

    def add_range(self, info: RangeInfo) -> None:
        """Pass a stored range through by reference, without opening it.

        The caller must check `at_boundary` first: a range appended mid-range
        would leave boundaries the chunking rule did not choose.
        """
        if self._keys:
            raise RuntimeError("a range may pass by reference only at a boundary")
        if info.min_key <= self._last_key:
            raise _unsorted(info.min_key, self._last_key)
        self._last_key = info.max_key
        self._ranges.append(info)
        self._stats.count("ranges_reused")

    def finish(self) -> list[RangeInfo]:
        """Store the last, partial range and return all ranges in key order."""
        if self._keys:
            self._flush()
        return self._ranges

    def _flush(self) -> None:
        keys = self._keys
        data = encode_range(keys, self._identities, self._datas)
        range_id, _ = store_file(self._blockstore, self._namespace, data, self._stats)
        self._ranges.append(
            RangeInfo(
                id=range_id, min_key=keys[0], max_key=keys[-1], count=len(keys), size=len(data)
            )
        )
        # Cleared, not replaced: `add_all` holds these very lists.
        keys.clear()
        self._identities.clear()
        self._datas.clear()
        self._bytes = 0


def _unsorted(key: bytes, previous: bytes) -> InvalidInputError:
    if not key:
        return InvalidInputError("an entry has an empty key; keys must be non-empty bytes")
    return InvalidInputError(
        f"key {key!r} comes after {previous!r}; pass entries and changes sorted "
        f"strictly ascending by key, each key once"
    )
