"""The committed-data entry point: write, apply to, read and scan metaranges.

A commit points to a metarange id; everything behind that id is immutable and
content-addressed, so a committed view never changes and two commits that
share data share files. `CommittedManager` protects that: it only ever adds
files (never rewrites or deletes one), it returns an id only after the files
it names are stored, and reads of an unknown id fail loudly rather than look
empty.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterable, Iterator
from itertools import takewhile
from typing import Literal
from zlib import crc32

from kvlake.blockstore.store import BlockStore
from kvlake.errors import EntryNotFoundError, MetarangeNotFoundError, RangeNotFoundError
from kvlake.graveler.committed.apply import Change, apply_changes
from kvlake.graveler.committed.batches import ChangeBatch, batched
from kvlake.graveler.committed.columns import RangeColumns
from kvlake.graveler.committed.reader import (
    RANGE_CACHE_BYTES,
    CommittedReader,
    CommittedStats,
    DecodedRange,
)
from kvlake.graveler.committed.records import (
    DEFAULT_CHUNKING,
    Chunking,
    Piece,
    RangeInfo,
    file_key,
)
from kvlake.graveler.committed.writer import RangeWriter, store_metarange
from kvlake.graveler.records import Value


class CommittedManager:
    """Reads and writes the committed data of any storage namespace. Thread-safe.

    Ranges and metaranges are Parquet files under `_lakefs/<sha256>` in the
    storage namespace. Decoded ranges are kept in an LRU cache of
    at most `range_cache_size` ranges and `range_cache_bytes` bytes (about 1 MB
    a range at the default chunking, so the defaults hold a 1M-entry commit).
    The key and identity columns that diffs and merges read (`range_columns`)
    are cached apart, in at most `range_cache_size` ranges and 64 MB.
    `stats` counts files read, written and reused.
    """

    def __init__(
        self,
        blockstore: BlockStore,
        *,
        range_cache_size: int = 1024,
        range_cache_bytes: int = RANGE_CACHE_BYTES,
        chunking: Chunking = DEFAULT_CHUNKING,
    ) -> None:
        self._blockstore = blockstore
        self._chunking = chunking
        self.stats = CommittedStats()
        self._reader = CommittedReader(
            blockstore, range_cache_size, self.stats, range_cache_bytes=range_cache_bytes
        )

    def file(self, namespace: str, kind: Literal["range", "metarange"], file_id: str) -> str:
        """The blob key of a range or metarange file that is there (getMetadataObject).

        Raises:
            RangeNotFoundError, MetarangeNotFoundError: no such file (or not an id).
        """
        key = file_key(kind, file_id)
        if not self._blockstore.exists(namespace, key):
            error = RangeNotFoundError if kind == "range" else MetarangeNotFoundError
            raise error(f"{kind} {file_id!r} is not in storage namespace {namespace!r}")
        return key

    def location(self, namespace: str, kind: Literal["range", "metarange"], file_id: str) -> str:
        """The full address of a range or metarange file (lakeFS's getRange, getMetaRange).

        Raises:
            RangeNotFoundError, MetarangeNotFoundError: no such file (or not an id).
        """
        key = self.file(namespace, kind, file_id)
        return f"{self._blockstore.check_namespace(namespace)}/{key}"

    def empty_metarange(self, namespace: str) -> str:
        """Return the id of the metarange with no ranges, storing it if missing."""
        return store_metarange(self._blockstore, namespace, [], self.stats)

    def write_metarange(self, namespace: str, entries: Iterable[tuple[bytes, Value]]) -> str:
        """Store `entries` as ranges and a metarange; return the metarange id.

        Entries are consumed as a stream: memory holds one range, however many
        there are. Equal entries always give the same id.

        Raises:
            InvalidInputError: keys are empty or not strictly ascending (files
                already stored stay, unreferenced; no id is returned).
        """
        writer = self._writer(namespace)
        writer.add_all(entries, deletions=False)
        return store_metarange(self._blockstore, namespace, writer.finish(), self.stats)

    def write_piece(self, namespace: str, entries: Iterable[tuple[bytes, Value]]) -> Piece:
        """Store the ranges of one sorted interval of a metarange; see `Piece`.

        Entries stream as in `write_metarange`; the piece holds the entries up to
        the first sure boundary and after the last one (about a range each).

        Raises:
            InvalidInputError: keys are empty or not strictly ascending.
        """
        writer = self._writer(namespace)
        mask = self._chunking.target_entries - 1
        head: list[tuple[bytes, bytes, bytes]] = []
        pending = iter(entries)
        for key, value in pending:
            writer.skip(key)  # checks the order; the head is written by whoever joins
            head.append((key, value.identity, value.data))
            if not crc32(key) & mask:  # every writer ends a range here: ours start after it
                break
        else:
            return Piece(head=head, ranges=[], tail=[])
        writer.add_all(pending, deletions=False)
        ranges, tail = writer.finish_open()
        return Piece(head=head, ranges=ranges, tail=tail)

    def join_pieces(self, namespace: str, pieces: Iterable[Piece]) -> str:
        """Store the metarange of pieces given in key order (disjoint); return its id.

        Equal to `write_metarange` of all their entries: the heads and tails are
        cut into ranges here, the pieces' ranges pass by reference.

        Raises:
            InvalidInputError: the pieces' keys are not strictly ascending.
        """
        writer = self._writer(namespace)
        for piece in pieces:
            writer.add_all(_values(piece.head), deletions=False)
            for info in piece.ranges:
                writer.add_range(info)
            writer.add_all(_values(piece.tail), deletions=False)
        return store_metarange(self._blockstore, namespace, writer.finish(), self.stats)

    def apply(
        self,
        namespace: str,
        base: str,
        changes: Iterable[Change],
        *,
        dropped: Collection[str] = frozenset(),
    ) -> str:
        """Apply sorted changes (None deletes a key) to `base`; return the new metarange id.

        Ranges no change falls into are passed by reference, unopened; only
        touched ranges are rewritten; ranges of `dropped` (ids; no change may
        fall into them) are deleted whole, unopened. Deleting an absent key
        changes nothing. Returns `base` itself when nothing changed.

        Raises:
            MetarangeNotFoundError: no metarange `base` in the namespace.
            RangeNotFoundError: a range of `base` that a change falls into is missing.
            InvalidInputError: changes are not strictly ascending by key, or a key is empty.
        """
        return self.apply_batches(namespace, base, batched(changes), dropped=dropped)

    def apply_batches(
        self,
        namespace: str,
        base: str,
        batches: Iterable[ChangeBatch],
        *,
        dropped: Collection[str] = frozenset(),
    ) -> str:
        """`apply`, with the changes given as sorted batches (a commit's staged pages):
        changes outside the base's ranges reach the range files without a Python step
        each.

        Raises:
            The same as `apply`.
        """
        old = self._reader.metarange(namespace, base).ranges
        new = apply_changes(self._reader, self._writer(namespace), namespace, old, batches, dropped)
        if new == old:
            return base
        return store_metarange(self._blockstore, namespace, new, self.stats)

    def get(self, namespace: str, metarange_id: str, key: bytes) -> Value:
        """Return the value under `key` in the metarange.

        Raises:
            EntryNotFoundError: the metarange has no entry under `key`.
            MetarangeNotFoundError, RangeNotFoundError: a file is missing.
        """
        metarange = self._reader.metarange(namespace, metarange_id)
        index = metarange.find(key)
        if index < len(metarange.ranges) and metarange.ranges[index].min_key <= key:
            decoded = self._reader.range(namespace, metarange.ranges[index].id)
            position = bisect_left(decoded.keys, key)
            if position < len(decoded.keys) and decoded.keys[position] == key:
                return Value(identity=decoded.identities[position], data=decoded.datas[position])
        raise EntryNotFoundError(
            f"no entry under key {key.decode(errors='replace')!r}; "
            f"list the commit to see which keys it holds"
        )

    def scan(
        self,
        namespace: str,
        metarange_id: str,
        start: bytes = b"",
        stop: bytes | None = None,
        *,
        skip: Collection[str] = (),
    ) -> Iterator[tuple[bytes, Value]]:
        """Iterate the entries with `start` <= key < `stop` in ascending order, range by range.

        The ranges whose ids are in `skip` are passed over unread (a listing of a branch
        whose range tombstones hide them whole).

        The metarange is read now (an unknown id raises here, not on first
        `next`); each range is read when the scan reaches it, and none that
        starts at or after `stop`. Only the first range is cached, so paging
        through a listing reuses it and a long scan does not evict the ranges
        point reads keep hot.

        Raises:
            MetarangeNotFoundError: no metarange with that id in the namespace.
        """
        metarange = self._reader.metarange(namespace, metarange_id)
        ranges = metarange.ranges[metarange.find(start) :]
        if stop is not None:
            ranges = [info for info in ranges if info.min_key < stop]  # sorted: a prefix
        if skip:
            ranges = [info for info in ranges if info.id not in skip]
        entries = self._scan_ranges(namespace, ranges, start)
        return entries if stop is None else takewhile(lambda entry: entry[0] < stop, entries)

    def ranges(self, namespace: str, metarange_id: str) -> list[RangeInfo]:
        """Return the ranges of a metarange in key order (a new list each call).

        Raises:
            MetarangeNotFoundError: no metarange with that id in the namespace.
        """
        return list(self._reader.metarange(namespace, metarange_id).ranges)

    def scan_range(
        self, namespace: str, range_id: str, start: bytes = b""
    ) -> Iterator[tuple[bytes, Value]]:
        """Iterate the entries of one range with key >= `start`, ascending.

        Raises:
            RangeNotFoundError: no range with that id in the namespace (raised now).
        """
        return _entries(self._reader.range(namespace, range_id), start)

    def range_columns(self, namespace: str, range_id: str) -> RangeColumns:
        """Return one range's key and identity columns, decoding data only when asked.

        For comparisons: `compare_rows` finds the rows two ranges differ in,
        and `RangeColumns.entries` makes values for just those rows.

        Raises:
            RangeNotFoundError: no range with that id in the namespace.
        """
        return self._reader.range_columns(namespace, range_id)

    def _scan_ranges(
        self, namespace: str, ranges: list[RangeInfo], start: bytes
    ) -> Iterator[tuple[bytes, Value]]:
        for index, info in enumerate(ranges):
            decoded = self._reader.range(namespace, info.id, keep=index == 0)
            yield from _entries(decoded, start if index == 0 else b"")

    def _writer(self, namespace: str) -> RangeWriter:
        return RangeWriter(self._blockstore, namespace, self._chunking, self.stats)


def _values(rows: list[tuple[bytes, bytes, bytes]]) -> Iterator[tuple[bytes, Value]]:
    return ((key, Value(identity=identity, data=data)) for key, identity, data in rows)


def _entries(decoded: DecodedRange, start: bytes) -> Iterator[tuple[bytes, Value]]:
    keys, identities, datas = decoded
    first = bisect_left(keys, start) if start else 0
    for index in range(first, len(keys)):
        yield keys[index], Value(identity=identities[index], data=datas[index])
