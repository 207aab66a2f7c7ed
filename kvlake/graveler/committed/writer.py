"""Cutting sorted entries into content-defined ranges and storing them by content.

`RangeWriter` receives entries in ascending key order (one at a time, in bulk, as
`ChangeBatch` columns, or as whole ranges passed by reference) and closes a range after a key whose
hash hits the modulus, or at a size cap (see `Chunking`). It protects two
invariants: the ranges of a metarange are sorted and disjoint (keys must come
strictly ascending, or nothing is returned), and a range is only ever passed by
reference at a boundary, so every range ends where the chunking rule would have
ended it and an unchanged region is cut exactly as before. Files are put only
when absent: content addressing makes a second put of the same id redundant.
A closed range is encoded, hashed and stored in a background thread while the next
ranges are cut (`PUTS_IN_FLIGHT`; Parquet encoding, hashing and the disk release the
GIL); `finish` waits for all of them, so a metarange never names a file not yet durable.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from itertools import accumulate, islice
from operator import add, attrgetter, itemgetter, lt
from typing import Any, Final, cast
from zlib import crc32

from kvlake.blockstore.store import BlockStore
from kvlake.errors import InvalidInputError
from kvlake.graveler.committed.batches import ChangeBatch
from kvlake.graveler.committed.columns import RangeRows
from kvlake.graveler.committed.parquet import encode_metarange, encode_range_pieces
from kvlake.graveler.committed.reader import CommittedStats
from kvlake.graveler.committed.records import FILE_PREFIX, Chunking, RangeInfo, file_id
from kvlake.graveler.records import Value

BATCH: Final = 4096
"""`add_all` turns its input into columns this many entries at a time."""
PUTS_IN_FLIGHT: Final = 4
"""Range files one writer encodes and stores at a time in background threads while it goes
on cutting the next ranges. Encoding, hashing and a put's writes and fsyncs release the GIL
for most of their time, so a big commit's cutting no longer waits for them, and puts into
one folder share its fsync.
"""
_POOL_THREADS: Final = 8
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()

_first, _second = itemgetter(0), itemgetter(1)
_identity, _data = attrgetter("identity"), attrgetter("data")


def store_file(
    blockstore: BlockStore, namespace: str, data: bytes, stats: CommittedStats
) -> tuple[str, bool]:
    """Store a range or metarange file under its content address unless already there.

    Returns the id and whether a new blob was written. Concurrent writers of the
    same id write the same bytes, and a put is atomic, so the race is harmless.
    """
    new_id = file_id(data)
    return new_id, _store(blockstore, namespace, new_id, data, stats)


def _store(
    blockstore: BlockStore, namespace: str, new_id: str, data: bytes, stats: CommittedStats
) -> bool:
    key = FILE_PREFIX + new_id
    if blockstore.exists(namespace, key):
        stats.count("files_already_present")
        return False
    blockstore.put(namespace, key, data)
    stats.count("files_written")
    return True


def _encode_and_store(
    blockstore: BlockStore,
    namespace: str,
    pieces: list[Any],
    min_key: bytes,
    max_key: bytes,
    count: int,
    stats: CommittedStats,
) -> RangeInfo:
    """Encode a closed range's pieces as its file, store it, and describe it."""
    data = encode_range_pieces(pieces)
    range_id, _ = store_file(blockstore, namespace, data, stats)
    return RangeInfo(id=range_id, min_key=min_key, max_key=max_key, count=count, size=len(data))


def _put_pool() -> ThreadPoolExecutor:
    """The process's threads for range puts, started on first use."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_POOL_THREADS, thread_name_prefix="kvlake-range-put")
        return _pool


def _forget_pool_in_child() -> None:
    """A forked child (a Spark Python worker) has none of the parent's threads: an inherited
    executor would queue puts that never run, so the child starts a pool of its own."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)


def store_metarange(
    blockstore: BlockStore, namespace: str, ranges: list[RangeInfo], stats: CommittedStats
) -> str:
    """Store a metarange listing `ranges` (sorted, disjoint) and return its id."""
    metarange_id, _ = store_file(blockstore, namespace, encode_metarange(ranges), stats)
    return metarange_id


class RangeWriter:
    """Accumulates ascending entries and stores a range each time the chunking rule says.

    Not thread-safe: one writer serves one metarange being built. Range files are stored
    in the background (`PUTS_IN_FLIGHT`, 0 to store each in the caller's thread), and
    `finish`/`finish_open` return only once every one is durable (or raise the first
    failure): a metarange is never written before the ranges it names.
    """

    def __init__(
        self,
        blockstore: BlockStore,
        namespace: str,
        chunking: Chunking,
        stats: CommittedStats,
        *,
        puts_in_flight: int = PUTS_IN_FLIGHT,
    ) -> None:
        self._blockstore = blockstore
        self._namespace = namespace
        self._stats = stats
        self._mask = chunking.target_entries - 1
        self._max_entries = chunking.max_entries
        self._max_bytes = chunking.max_bytes
        # The range being built, as consecutive pieces: Arrow slices of ranges
        # read (`add_rows`), and lists the other calls append to (`_lists`).
        self._pieces: list[Any] = []
        self._lists: tuple[list[bytes], list[bytes], list[bytes]] | None = None
        self._count = 0
        self._bytes = 0
        self._min_key = self._max_key = b""
        # Keys are non-empty, so b"" sorts before the first; this check
        # (strictly ascending) is what keeps every range sorted and disjoint.
        self._last_key = b""
        self._ranges: list[RangeInfo | Future[RangeInfo]] = []
        """Closed ranges in key order; a future while its file is encoded and stored."""
        self._puts_in_flight = puts_in_flight
        self._puts: deque[Future[RangeInfo]] = deque()

    @property
    def at_boundary(self) -> bool:
        """Whether the last entry closed a range: only then may a range pass by reference."""
        return not self._count

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
        keys, identities, datas = self._lists or self._open_lists()
        keys.append(key)
        identities.append(identity)
        datas.append(data)
        if not self._count:
            self._min_key = key
        self._max_key = key
        self._count += 1
        self._bytes += len(key) + len(identity) + len(data)
        # The same rule as `_extend`, for one row.
        if (
            not crc32(key) & self._mask
            or self._count >= self._max_entries
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

        The hot path of large commits: entries are taken a batch at a time and
        split into columns by comprehensions, so the per-entry work runs in C.

        Raises:
            InvalidInputError: a key is empty or out of order, or a value is None
                and `deletions` is false.
        """
        pending = iter(entries)
        while batch := list(islice(pending, BATCH)):
            keys = list(map(_first, batch))
            self._check_ascending(keys)
            self._last_key = keys[-1]
            values = list(map(_second, batch))
            if None in values:
                if not deletions:
                    key = keys[values.index(None)]
                    raise InvalidInputError(f"entry {key!r} has no value; pass a Value")
                keys = [key for key, value in batch if value is not None]
                values = [value for value in values if value is not None]
            if keys:
                present = cast(list[Value], values)
                self._extend_lists(keys, list(map(_identity, present)), list(map(_data, present)))

    def add_rows(self, rows: RangeRows, start: int, stop: int) -> None:
        """Append rows [start, stop) of a range read: `add` for each, but in bulk.

        Rows of a range file are ascending (they were checked when it was
        written), so only the first is compared with the previous key; they
        are copied as Arrow slices, never made into Python values.
        """
        if start >= stop:
            return
        keys = rows.keys
        if keys[start] <= self._last_key:
            raise _unsorted(keys[start], self._last_key)
        self._last_key = keys[stop - 1]
        self._append_rows(rows, start, stop)

    def add_batch(self, batch: ChangeBatch) -> None:
        """Append a batch of changes: `add` for each value and `skip` for each deletion,
        but in bulk. The hot path of large commits: the rows stay Arrow slices of the
        batch's arrays from here to the Parquet encoder.

        Raises:
            InvalidInputError: a key is empty or out of order (deletions included).
        """
        if not batch.keys:
            return
        if batch.keys[0] <= self._last_key or not batch.ascending():
            self._check_ascending(batch.keys)  # raises, naming the first key out of order
        self._last_key = batch.keys[-1]
        present = batch.present()
        if present.keys:
            self._append_rows(RangeRows(present.arrays(), present.keys), 0, len(present.keys))

    def _append_rows(self, rows: RangeRows, start: int, stop: int) -> None:
        """Append rows [start, stop), already checked to come in order, as Arrow slices."""

        def append(first: int, end: int) -> None:
            self._lists = None
            self._pieces.append(rows.slice(first, end))

        self._extend(rows.keys, rows.offsets, append, start, stop)

    def add_changed_rows(self, rows: RangeRows, changes: list[tuple[bytes, Value | None]]) -> None:
        """Append all `rows` with `changes` (None deletes a key) applied, in bulk.

        Every change key is checked, deletions included, as `add` and `skip` would.

        Raises:
            InvalidInputError: a change key is empty, out of order, or not above
                the previous key.
        """
        if changes:
            keys = [key for key, _ in changes]
            self._check_ascending(keys)
            rows = rows.with_changes(changes)
        self.add_rows(rows, 0, len(rows.keys))
        if changes and keys[-1] > self._last_key:  # the last change deleted the last row
            self._last_key = keys[-1]

    def add_range(self, info: RangeInfo) -> None:
        """Pass a stored range through by reference, without opening it.

        The caller must check `at_boundary` first: a range appended mid-range
        would leave boundaries the chunking rule did not choose.
        """
        if self._count:
            raise RuntimeError("a range may pass by reference only at a boundary")
        if info.min_key <= self._last_key:
            raise _unsorted(info.min_key, self._last_key)
        self._last_key = info.max_key
        self._ranges.append(info)
        self._stats.count("ranges_reused")

    def finish(self) -> list[RangeInfo]:
        """Store the last, partial range and return all ranges in key order, all stored."""
        if self._count:
            self._flush()
        return self._stored_ranges()

    def finish_open(self) -> tuple[list[RangeInfo], list[tuple[bytes, bytes, bytes]]]:
        """The ranges closed by the chunking rule, and the open range's entries, unwritten.

        For a piece of a metarange (`Piece`): its last range is completed by the
        entries of the next piece. Only entries added as values (`add`, `add_all`).
        """
        tail: list[tuple[bytes, bytes, bytes]] = []
        for piece in self._pieces:
            if not isinstance(piece, tuple):
                raise RuntimeError("finish_open takes entries added as values, not rows read")
            tail.extend(zip(*piece, strict=True))
        return self._stored_ranges(), tail

    def _extend_lists(self, keys: list[bytes], identities: list[bytes], datas: list[bytes]) -> None:
        """Append ascending rows given as lists, closing ranges where `add` would."""
        row_sizes = map(add, map(add, map(len, keys), map(len, identities)), map(len, datas))

        def append(first: int, end: int) -> None:
            open_keys, open_identities, open_datas = self._open_lists()
            open_keys.extend(keys[first:end])
            open_identities.extend(identities[first:end])
            open_datas.extend(datas[first:end])

        self._extend(keys, list(accumulate(row_sizes, initial=0)), append, 0, len(keys))

    def _extend(
        self,
        keys: list[bytes],
        offsets: list[int],
        append: Callable[[int, int], None],
        start: int,
        stop: int,
    ) -> None:
        """Append rows [start, stop), closing ranges exactly where `add` would, row by row.

        `offsets[j]` counts the bytes in rows before j; `append(a, b)` moves
        rows [a, b) into the range being built.
        """
        # hashes[j - start] == 0: the rule ends a range after row j.
        hashes = list(map(self._mask.__and__, map(crc32, keys[start:stop])))
        position = start
        while position < stop:
            end = min(stop, position + self._max_entries - self._count)
            try:
                end = hashes.index(0, position - start, end - start) + start + 1
            except ValueError:
                pass
            # The row at which the byte cap is reached, if before `end`.
            wanted = offsets[position] + self._max_bytes - self._bytes
            end = min(end, bisect_left(offsets, wanted, position + 1, end + 1))
            append(position, end)
            self._added(
                end - position, offsets[end] - offsets[position], keys[position], keys[end - 1]
            )
            if (
                not hashes[end - 1 - start]
                or self._count >= self._max_entries
                or self._bytes >= self._max_bytes
            ):
                self._flush()
            position = end

    def _open_lists(self) -> tuple[list[bytes], list[bytes], list[bytes]]:
        """The lists piece at the end of the range being built, started if need be."""
        if self._lists is None:
            self._lists = ([], [], [])
            self._pieces.append(self._lists)
        return self._lists

    def _added(self, count: int, size: int, first: bytes, last: bytes) -> None:
        if not self._count:
            self._min_key = first
        self._max_key = last
        self._count += count
        self._bytes += size

    def _check_ascending(self, keys: list[bytes]) -> None:
        if keys[0] > self._last_key and all(map(lt, keys, islice(keys, 1, None))):
            return
        previous = self._last_key
        for key in keys:
            if key <= previous:
                raise _unsorted(key, previous)
            previous = key

    def _flush(self) -> None:
        """Close the range being built: encode and store it in a put thread (at most
        `puts_in_flight` at a time), so cutting the next ranges overlaps both."""
        job = partial(
            _encode_and_store,
            self._blockstore,
            self._namespace,
            self._pieces,
            self._min_key,
            self._max_key,
            self._count,
            self._stats,
        )
        if self._puts_in_flight:
            self._wait_for_puts(self._puts_in_flight - 1)
            put = _put_pool().submit(job)
            self._puts.append(put)
            self._ranges.append(put)
        else:
            self._ranges.append(job())
        self._pieces, self._lists = [], None
        self._count = self._bytes = 0

    def _stored_ranges(self) -> list[RangeInfo]:
        """Every range closed so far, once all are stored, in key order."""
        self._wait_for_puts(0)
        return [r.result() if isinstance(r, Future) else r for r in self._ranges]

    def _wait_for_puts(self, at_most: int) -> None:
        """Wait until at most `at_most` puts are in flight, oldest first; raise a failed one's
        error (the rest still finish in the background: content-addressed files are harmless)."""
        while len(self._puts) > at_most:
            self._puts.popleft().result()


def _unsorted(key: bytes, previous: bytes) -> InvalidInputError:
    if not key:
        return InvalidInputError("an entry has an empty key; keys must be non-empty bytes")
    return InvalidInputError(
        f"key {key!r} comes after {previous!r}; pass entries and changes sorted "
        f"strictly ascending by key, each key once"
    )
