"""Staging: uncommitted writes, one KV partition per staging token.

A write puts the encoded value under the object's key in the branch's current
token; a delete puts a tombstone (an empty value). Sealed tokens keep their
writes visible while a commit turns them into ranges. Readers consult the
current token, then the sealed ones newest first, then the commit: the first
hit wins. `overlay` is that rule as a streaming k-way merge. A token may also
hold range tombstones (kvlake/graveler/staging/range_tombstones.py): tombstones at every key
of a committed range, which the token's own entries override.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import TypeVar

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.committed import ChangeBatch, CommittedManager, batched
from kvlake.graveler.records import Value, decode_value, encode
from kvlake.graveler.staging.range_tombstones import (
    FIRST_PATH,
    RECORD_PREFIX,
    RangeTombstone,
    RangeTombstones,
)
from kvlake.graveler.staging.range_tombstones import TOMBSTONE as TOMBSTONE
from kvlake.kv import Store

_T = TypeVar("_T")
_first, _second = itemgetter(0), itemgetter(1)


def overlay(sources: Sequence[Iterable[tuple[bytes, _T]]]) -> Iterator[tuple[bytes, _T]]:
    """Merge sorted sources by key; on equal keys the earliest source wins."""
    if len(sources) == 1:
        return iter(sources[0])  # the common case: no merge layer per entry
    return _merge(sources)


def overlay_two(
    first: Iterable[tuple[bytes, _T]], second: Iterable[tuple[bytes, _T]]
) -> Iterator[tuple[bytes, _T]]:
    """`overlay([first, second])` for two sources that each hold a key at most once (a
    listing's staged entries over its commit's), without a heap: two-way compares, and
    once one side runs out the other passes through whole (a branch with nothing
    staged lists at the speed of its commit)."""
    firsts, seconds = iter(first), iter(second)
    a, b = next(firsts, None), next(seconds, None)
    while a is not None and b is not None:
        if a[0] < b[0]:
            yield a
            a = next(firsts, None)
        elif b[0] < a[0]:
            yield b
            b = next(seconds, None)
        else:  # the same key: the first source's wins
            yield a
            a, b = next(firsts, None), next(seconds, None)
    if a is not None:
        yield a
        yield from firsts
    elif b is not None:
        yield b
        yield from seconds


def _merge(sources: Sequence[Iterable[tuple[bytes, _T]]]) -> Iterator[tuple[bytes, _T]]:
    tagged = [_ranked(source, rank) for rank, source in enumerate(sources)]
    previous = None
    for key, _, item in heapq.merge(*tagged):
        if key != previous:
            previous = key
            yield key, item


def _ranked(source: Iterable[tuple[bytes, _T]], rank: int) -> Iterator[tuple[bytes, int, _T]]:
    for key, item in source:
        yield key, rank, item


class StagedRead:
    """What tokens of one branch state stage, read as one: the newest staged state of each
    key, the tombstones of the tokens' range tombstones included.

    Every reader of staged entries takes one (`Staging.read`) instead of the tokens and
    the records apart, so no reader can forget the records. Thread-safe; it holds no
    entries, only the tokens, so it reads what they hold when asked.
    """

    def __init__(
        self, store: Store, tokens: Sequence[str], tombstones: RangeTombstones | None
    ) -> None:
        self._store = store
        self.tokens = tuple(tokens)
        """The tokens read, newest first."""
        self._tombstones = tombstones

    def get(self, key: bytes, *, known: Mapping[str, bytes] | None = None) -> Value | None:
        """The newest staged state of `key`: a Value, or None for a tombstone (staged, or
        of a range tombstone).

        `known` is the raw value of `key` in each of these tokens that holds it, read
        already (`BranchRead.staged_values`, in the statement that read the branch
        naming exactly these tokens): the store is not asked again.

        Raises:
            KeyNotFoundError: no token stages anything for the key.
        """
        for token in self.tokens:
            if known is not None:
                raw = known.get(token)
            else:
                try:
                    raw, _ = self._store.get(keys.staging_partition(token), key)
                except KeyNotFoundError:
                    raw = None
            if raw is None:
                if self.hides(token, key):
                    return None
                continue
            return decode_value(raw) if raw else None
        raise KeyNotFoundError(f"key {key!r} is not staged")

    def scan(self, start: bytes = b"") -> Iterator[tuple[bytes, Value | None]]:
        """Staged entries from `start` on, all tokens merged (the newest wins), tombstones
        (and the keys range tombstones hide) as None."""
        return overlay([self._scan_one(token, start) for token in self.tokens])

    def batches(self) -> Iterator[ChangeBatch]:
        """Every staged entry, as `scan` gives them, a KV page at a time as a `ChangeBatch`:
        what a commit applies. One token without range tombstones (a commit's usual case)
        is read page by page, its values split into columns without a Python step per entry
        (`ChangeBatch.from_encoded`)."""
        if len(self.tokens) != 1 or self.hides_any(self.tokens[0]):
            yield from batched(self.scan())
            return
        partition = keys.staging_partition(self.tokens[0])
        with self._store.scan(partition, FIRST_PATH) as scan:
            for page in scan.batches():
                yield ChangeBatch.from_encoded(list(map(_first, page)), list(map(_second, page)))

    def hides_any(self, token: str) -> bool:
        """Whether `token` may hold range tombstones."""
        return self._tombstones is not None and token in self._tombstones.tokens

    def hides(self, token: str, key: bytes) -> bool:
        """Whether a range tombstone of `token` holds a tombstone at `key`."""
        return self._tombstones is not None and self._tombstones.hides(token, key)

    def without(self, range_ids: Collection[str]) -> StagedRead:
        """This read, but the records of `range_ids` hide nothing: a commit that drops
        those ranges whole (`wholly_tombstoned`) must not also read them key by key."""
        tombstones = None if self._tombstones is None else self._tombstones.without(range_ids)
        return StagedRead(self._store, self.tokens, tombstones)

    def wholly_tombstoned(
        self, metarange_id: str, start: bytes = b"", stop: bytes | None = None
    ) -> frozenset[str]:
        """The ids of the ranges of `metarange_id` (a commit's base, a listed branch's
        commit) whose every key the tokens delete through one range tombstone alone: a
        commit drops those ranges without reading their keys, and a listing skips them
        (the metarange is read only if there are records). With `start` and `stop`, only
        ranges lying wholly in [start, stop): a listing of a window reads only the
        records there (and every record that could overlap one of them).

        A record qualifies when it covers its whole range with no `keep`, no other
        record of any token overlaps its span (unless it hides the same range whole
        too), and no token stages any entry inside the span: another record's
        tombstones or an entry there would fall into a range left out unread, so
        such ranges go key by key, as before. One KV read per record and token, and
        the records held in memory: the cost follows the ranges tombstoned, not their keys.
        """
        tombstones = self._tombstones
        if tombstones is None:
            return frozenset()
        base = {info.id: info for info in tombstones.metarange(metarange_id)}
        records = sorted(
            (
                record
                for token in self.tokens
                if token in tombstones.tokens
                for record in _until(tombstones.records(token, start), stop)
            ),
            key=lambda record: record.min_key,
        )
        overlapped = _overlapping(records)
        dropped: set[str] = set()
        for index, record in enumerate(records):
            info = base.get(record.range_id)
            if (
                info is None
                or record.min_key < start
                or (stop is not None and record.max_key >= stop)
                or record.keep
                or (record.min_key, record.max_key) != (info.min_key, info.max_key)
                or index in overlapped
                or self._stages_within(info.min_key, info.max_key)
            ):
                continue
            dropped.add(info.id)
        return frozenset(dropped)

    def _stages_within(self, low: bytes, high: bytes) -> bool:
        """Whether any token stages an entry (a value or a tombstone) in [low, high]."""
        for token in self.tokens:
            with self._store.scan(keys.staging_partition(token), low, batch_size=1) as scan:
                found = next(scan, None)
            if found is not None and found[0] <= high:
                return True
        return False

    def _scan_one(self, token: str, start: bytes) -> Iterator[tuple[bytes, Value | None]]:
        entries = self._entries(token, start)
        if self._tombstones is None or token not in self._tombstones.tokens:
            return entries
        tombstones = ((key, None) for key in self._tombstones.keys(token, start))
        return overlay([entries, tombstones])  # the token's own entries win

    def _entries(self, token: str, start: bytes) -> Iterator[tuple[bytes, Value | None]]:
        with self._store.scan(keys.staging_partition(token), max(start, FIRST_PATH)) as scan:
            for page in scan.batches():
                for key, raw in page:
                    yield key, (decode_value(raw) if raw else None)


class Staging:
    """Reads and writes staging partitions. Thread-safe; values are graveler Values."""

    def __init__(self, store: Store, committed: CommittedManager) -> None:
        self._store = store
        self._committed = committed

    def read(
        self, namespace: str, tokens: Sequence[str], tombstone_tokens: Sequence[str]
    ) -> StagedRead:
        """The staged state of `tokens` (newest first) of a branch whose `tombstone_tokens`
        lists the tokens that may hold range tombstones (only those of `tokens` are read)."""
        return StagedRead(
            self._store, tokens, self.range_tombstones(namespace, tokens, tombstone_tokens)
        )

    def range_tombstones(
        self, namespace: str, tokens: Sequence[str], tombstone_tokens: Sequence[str]
    ) -> RangeTombstones | None:
        """The range tombstones of those of `tokens` that a branch's `tombstone_tokens` lists, to
        change them (a reset, a repair); None when there are none to read."""
        listed = [token for token in tombstone_tokens if token in tokens]
        if not listed:
            return None
        return RangeTombstones(self._store, self._committed, namespace, listed)

    def set_many(self, token: str, entries: Iterable[tuple[bytes, Value | None]]) -> None:
        """Write many entries (None: a tombstone) in batches, not atomically: for a token
        no branch references yet, which becomes visible later in one swap."""
        self._store.set_many(
            keys.staging_partition(token),
            ((key, TOMBSTONE if value is None else encode(value)) for key, value in entries),
        )

    def is_empty(self, token: str) -> bool:
        """No entry and no range tombstone (a tombstone guard alone changes nothing)."""
        with self._store.scan(keys.staging_partition(token), RECORD_PREFIX, batch_size=1) as scan:
            return next(scan, None) is None

    def drop(self, token: str) -> None:
        self._store.drop_partition(keys.staging_partition(token))


def _until(records: Iterator[RangeTombstone], stop: bytes | None) -> Iterator[RangeTombstone]:
    """One token's records (in key order: they never overlap) up to the first that starts
    at or after `stop`."""
    for record in records:
        if stop is not None and record.min_key >= stop:
            return
        yield record


def _overlapping(records: Sequence[RangeTombstone]) -> set[int]:
    """The indexes of the records (sorted by `min_key`) that another record overlaps, apart
    from records hiding the same range whole. Each overlapping pair is seen once, from its
    first record, whose forward look stops at the first record starting past its span:
    O(records + overlapping pairs), where comparing every pair was quadratic (12,200
    records for 50M objects)."""
    overlapped: set[int] = set()
    for index, record in enumerate(records):
        for later in range(index + 1, len(records)):
            other = records[later]
            if other.min_key > record.max_key:
                break
            if other.range_id != record.range_id or other.keep:
                overlapped.add(index)
            if other.range_id != record.range_id or record.keep:
                overlapped.add(later)
    return overlapped
