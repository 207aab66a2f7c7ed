"""Range tombstones: tombstones for every key of a committed range, staged as one record.

A bulk delete over a prefix that holds millions of committed objects would
stage one tombstone per object: one KV write each. Whole ranges of the commit
lie under such a prefix, and a range file's keys never change (its id is the
hash of its bytes), so one staged record can say "a tombstone at each key of
range R, except these": `RangeTombstone`. It is exactly the tombstones it stands
for, in the token it is staged in, so every reader keeps the staging rule
(docs/design.md "Range tombstones"):

- within a token, a key's own staged entry wins over a record that hides it
  (the record's tombstones are written once, entries staged later are newer);
- across tokens, the newest token that says anything about a key wins, as
  for any staged entry;
- a key the range does not hold is never hidden, whatever the record's span:
  an object created under the prefix while the delete ran stays.

Records live in the token's own staging partition under keys below every
path (`\\x00h<max key>\\x00<range id>`: paths hold no NUL), so they are sealed,
committed, dropped and reset with the token and make it non-empty (a branch
holding one is dirty). Readers that scan a partition start at `FIRST_PATH`.
A branch lists the tokens that may hold records (`Branch.tombstone_tokens`), set before
the first record is written, so reads of a branch without any pay nothing.
The records of one token never overlap, so the tombstoned keys of a token are the
records' keys in order. Ranges of one metarange never overlap (or are the same
range, under the same key), so a token takes records of one metarange only: its
guard (`GUARD_KEY`, below the records) names it, written once by
compare-and-swap on absence before the first record. Of two bulk deletes from
different commits racing into one token (two servers), exactly one names the
guard; the other is refused whatever the interleaving, and stages tombstones
instead. A check of the records already there could not do that: both writers
can check before either writes (issue 22, finding 4).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterator, Sequence
from typing import Final

import msgspec

from kvlake.errors import ConflictError, KeyNotFoundError, PreconditionFailedError
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager, RangeInfo
from kvlake.kv import Store

RECORD_PREFIX: Final = b"\x00h"
"""Staging keys of range tombstones: below every path, since paths hold no NUL (the "h"
is of their first name, hidden ranges: records already stored keep being found)."""
GUARD_KEY: Final = b"\x00g"
"""The token's guard: the metarange whose ranges its records hide (below the records)."""
TOMBSTONE: Final = b""
"""The staged value of a deleted key. No encoded Value is empty, so it cannot be confused."""
FIRST_PATH: Final = b"\x01"
"""The smallest possible path: scans of staged entries start here, past the records."""


class RangeTombstone(msgspec.Struct, frozen=True, kw_only=True):
    """Tombstones at every key of committed range `range_id` except those in `keep`.

    `min_key` and `max_key` are the range's first and last keys (its span);
    `keep` is sorted.
    """

    range_id: str
    min_key: bytes
    max_key: bytes
    keep: tuple[bytes, ...] = ()


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(RangeTombstone)


def record_key(record: RangeTombstone) -> bytes:
    return RECORD_PREFIX + record.max_key + b"\0" + record.range_id.encode()


def encode_record(record: RangeTombstone) -> bytes:
    return _encoder.encode(record)


def is_record_key(key: bytes) -> bool:
    return key < FIRST_PATH


class RangeTombstones:
    """The keys range tombstones hide, for the tokens of one branch read.

    `tokens` are those the branch lists as holding records; the others are
    never read. Range files come through the committed manager's cache.
    """

    def __init__(
        self, store: Store, committed: CommittedManager, namespace: str, tokens: Collection[str]
    ) -> None:
        self._store = store
        self._committed = committed
        self._namespace = namespace
        self.tokens = frozenset(tokens)
        self._left_out: frozenset[str] = frozenset()

    def without(self, range_ids: Collection[str]) -> RangeTombstones:
        """These keys, but those of the records of `range_ids`: a commit that drops those
        ranges whole (`StagedRead.wholly_tombstoned`) must not also read them key by key."""
        copy = RangeTombstones(self._store, self._committed, self._namespace, self.tokens)
        copy._left_out = self._left_out | frozenset(range_ids)
        return copy

    def metarange(self, metarange_id: str) -> list[RangeInfo]:
        """The ranges of a metarange of the namespace the records' ranges are in."""
        return self._committed.ranges(self._namespace, metarange_id)

    def hides(self, token: str, key: bytes) -> bool:
        """Whether a record of `token` holds a tombstone at `key`."""
        if token not in self.tokens:
            return False
        partition = keys.staging_partition(token)
        with self._store.scan(partition, RECORD_PREFIX + key, batch_size=1) as scan:
            found = next(scan, None)
        if found is None or not is_record_key(found[0]):
            return False
        record = _decoder.decode(found[1])
        if record.range_id in self._left_out:
            return False
        return record.min_key <= key and self._holds(record, key)

    def keys(self, token: str, start: bytes = b"") -> Iterator[bytes]:
        """The keys `token`'s records hide, ascending, from `start` on."""
        if token not in self.tokens:
            return
        for record in self.records(token, start):
            if record.range_id not in self._left_out:
                yield from self._tombstoned_by(record, start)

    def records(self, token: str, start: bytes = b"") -> Iterator[RangeTombstone]:
        """`token`'s records whose span ends at or after `start`, in key order."""
        partition = keys.staging_partition(token)
        with self._store.scan(partition, RECORD_PREFIX + start) as scan:
            for page in scan.batches():
                for key, raw in page:
                    if not is_record_key(key):
                        return
                    yield _decoder.decode(raw)

    def lift(self, token: str, start: bytes, stop: bytes | None) -> None:
        """Stop `token`'s records tombstone_tokens keys in [start, stop): a reset of those keys.

        A record inside the window goes; one that straddles it adds the range's
        keys in the window to its `keep` (at most one range of keys each).
        """
        partition = keys.staging_partition(token)
        for record in list(self.records(token, start)):
            if stop is not None and record.min_key >= stop:
                break
            key = record_key(record)
            if record.min_key >= start and (stop is None or record.max_key < stop):
                self._store.delete(partition, key)
                continue
            range_keys = self._range_keys(record)
            low = bisect_left(range_keys, start)
            high = len(range_keys) if stop is None else bisect_left(range_keys, stop)
            keep = tuple(sorted({*record.keep, *range_keys[low:high]}))
            if keep != record.keep:
                updated = msgspec.structs.replace(record, keep=keep)
                self._store.set(partition, key, encode_record(updated))

    def untangle(self, token: str) -> int:
        """Rewrite `token`'s records that overlap another as tombstones; return how many.

        Overlapping records (staged before the guard existed) break every reader's
        merge and so every commit of the branch. Records are kept greedily in key
        order (each ending first that clears the last kept); each other record
        becomes a tombstone at each key it hides where the token stages nothing
        (compare-and-swap on absence: a racing writer's entry is newer and wins, as
        it did over the record), then goes. Every step leaves the keys the token
        hides unchanged, so a crash or a racing reader loses nothing; run it again
        to finish.
        """
        partition = keys.staging_partition(token)
        last: bytes | None = None
        rewritten = 0
        for record in list(self.records(token)):
            if last is None or record.min_key > last:
                last = record.max_key
                continue
            for key in self._tombstoned_by(record):
                try:
                    self._store.set_if(partition, key, TOMBSTONE, None)
                except PreconditionFailedError:
                    continue  # the token stages this key itself: its entry wins
            self._store.delete(partition, record_key(record))
            rewritten += 1
        return rewritten

    def _tombstoned_by(self, record: RangeTombstone, start: bytes = b"") -> Iterator[bytes]:
        """The keys `record` hides from `start` on: its range's keys in its span, but `keep`."""
        range_keys = self._range_keys(record)
        low = bisect_left(range_keys, max(start, record.min_key))
        high = bisect_right(range_keys, record.max_key)
        for key in range_keys[low:high]:
            if not record.keep or not _contains(record.keep, key):
                yield key

    def _holds(self, record: RangeTombstone, key: bytes) -> bool:
        if record.keep and _contains(record.keep, key):
            return False
        return _contains(self._range_keys(record), key)

    def _range_keys(self, record: RangeTombstone) -> list[bytes]:
        return self._committed.range_columns(self._namespace, record.range_id).key_list()


def _contains(sorted_keys: Sequence[bytes], key: bytes) -> bool:
    index = bisect_left(sorted_keys, key)
    return index < len(sorted_keys) and sorted_keys[index] == key


def stage_records(
    store: Store, token: str, records: Sequence[RangeTombstone], *, metarange_id: str
) -> None:
    """Write `records`, ranges of metarange `metarange_id`, into `token`'s staging
    partition; a record already there is kept.

    Raises:
        ConflictError: the token holds records of another metarange (a bulk delete
            from another commit), which these could overlap: nothing is written.
    """
    partition = keys.staging_partition(token)
    claim_guard(store, partition, metarange_id)
    wanted = {record_key(record): record for record in records}
    present = store.get_many(partition, list(wanted))
    fresh = [(key, encode_record(record)) for key, record in wanted.items() if key not in present]
    if fresh:
        store.set_many(partition, sorted(fresh))


def claim_guard(store: Store, partition: bytes, metarange_id: str) -> None:
    """Make the partition's guard name `metarange_id`, or raise ConflictError if it names
    another metarange (or is missing where records are: written before guards existed)."""
    for _ in range(2):
        try:
            raw, _ = store.get(partition, GUARD_KEY)
        except KeyNotFoundError:
            with store.scan(partition, RECORD_PREFIX, batch_size=1) as scan:
                found = next(scan, None)
            if found is not None and is_record_key(found[0]):
                raise _refusal("another bulk delete") from None
            try:
                # The one atomic step: of racing writers, one names the guard.
                store.set_if(partition, GUARD_KEY, metarange_id.encode(), None)
                return
            except PreconditionFailedError:
                continue  # a racing writer named it first: compare with theirs
        if raw.decode() != metarange_id:
            raise _refusal(f"a bulk delete from metarange {raw.decode()}")
        return
    raise _refusal("another bulk delete")


def _refusal(other: str) -> ConflictError:
    return ConflictError(
        f"the staging token already holds range tombstones of {other}, which ranges of another"
        " commit could overlap (one metarange per token); stage tombstones instead, or"
        " retry after the branch's next commit"
    )
