"""Sweeping partitions nothing references: the leaks no other cleaning job can see.

Two races leave keys where no record points any more:
- a writer that read a branch, stalled past its token's drop, and then wrote,
  re-creates the dropped staging partition with one stray key (it re-reads the
  branch and writes again to the live token, so its write is not lost);
- a repository creation that stalled past the abandonment timeout writes its
  commit and branch into an instance partition the cleaner already removed.

So the cleaner lists the partitions now and then, a slice of `SWEEP_SLICE` a
sweep going on where the last one stopped (a cursor kept in the KV, so a
restarted process goes on too), and finds orphans: a staging
partition of a live instance that no branch references and no drop is queued
for, a staging partition of an instance that is neither live nor queued for
cleaning, and an instance partition of such an instance. An orphan is only
noted the first time (`graveler_orphans`, with the time it was found) and
dropped on a later pass, at least `grace` seconds on, if it is an orphan still:
nothing in flight (a creation, a branch record about to name a new token) stays
unreferenced that long. Notes are read and written a batch of partitions at a
time (`get_many`, `set_many`), not a round trip or two per orphan, and so are
the instances the batch's partitions belong to (`_instances`), not every
repository record, and the queued drops of the batch's tokens (`_queued_tokens`,
by the token-keyed index), not the whole queue. A live instance's orphaned staging
partition goes through `CleanerHooks.before_token_drop` first, so the blobs of its stray entries are
logged like those of any dropped token.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Final, Protocol

from kvlake.errors import KeyNotFoundError, KvlakeError
from kvlake.graveler import keys
from kvlake.graveler.lifecycle.liverepos import LiveRepositories
from kvlake.graveler.records import Repository, decode_repository
from kvlake.graveler.refs.store import Refs
from kvlake.kv import Store

SWEEP_GRACE: Final = 3600.0
"""Seconds a partition must stay orphaned between two passes before it is dropped."""

SWEEP_SLICE: Final = 10_000
"""Partitions one sweep looks at; the next sweep goes on after the last, and wraps around.

Listing every partition, reading every repository record, and scanning the
branches of every repository with staged data, on every sweep made a sweep cost
the whole store (issue 33). A
partition is still looked at once per (partitions / slice) sweeps, and an orphan
noted on one visit is dropped on a later one at least `grace` seconds on."""

_BATCH: Final = 1000


class TokenDropHook(Protocol):
    def __call__(self, repository: Repository, token: str, queued: float) -> None: ...


@dataclass
class SweepReport:
    noted: int = 0
    dropped: int = 0
    failures: list[str] = field(default_factory=list)


class OrphanSweep:
    """One pass over every partition of the store. Safe to run from several processes."""

    def __init__(
        self,
        store: Store,
        refs: Refs,
        *,
        clock: Callable[[], float],
        before_token_drop: TokenDropHook | None = None,
        grace: float = SWEEP_GRACE,
        slice_size: int = SWEEP_SLICE,
    ) -> None:
        self._store = store
        self._refs = refs
        self._clock = clock
        self._before_token_drop = before_token_drop
        self._grace = grace
        self._slice = slice_size
        self._names = LiveRepositories(store)
        self._drops_indexed = False

    def run(self) -> SweepReport:
        report = SweepReport()
        now = self._clock()
        referenced: dict[str, set[str]] = {}
        orphans: set[bytes] = set()
        first, last, looked = self._cursor(), b"", 0
        listed = itertools.islice(self._store.partitions(after=first), self._slice)
        for batch in _batches(listed):
            looked += len(batch)
            last = batch[-1]
            live, cleaning = self._instances(batch)
            try:
                queued = self._queued_tokens(batch, now)
            except KvlakeError as exc:  # judged on a later sweep
                report.failures.append(f"queued drops {batch[0]!r} to {batch[-1]!r}: {exc}")
                continue
            found: list[tuple[bytes, Repository | None]] = []
            for partition in batch:
                orphan, owner = self._orphan(partition, live, cleaning, queued, referenced)
                if orphan:
                    orphans.add(partition)
                    found.append((partition, owner))
            try:
                self._note_or_drop(found, now, report)
            except KvlakeError as exc:
                report.failures.append(f"orphans {found[0][0]!r} to {found[-1][0]!r}: {exc}")
        finished = looked < self._slice
        self._forget_notes(orphans, first, None if finished else last)
        if finished:  # the listing ended: start over next time
            self._store.delete(keys.SWEEP, keys.SWEEP_CURSOR)
        else:
            self._store.set(keys.SWEEP, keys.SWEEP_CURSOR, last)
        return report

    def _cursor(self) -> bytes:
        """The last partition the previous sweep (of any process) looked at; b"" to start."""
        try:
            raw, _ = self._store.get(keys.SWEEP, keys.SWEEP_CURSOR)
        except KeyNotFoundError:
            return b""
        return raw

    def _instances(self, partitions: list[bytes]) -> tuple[dict[str, Repository], set[str]]:
        """Of the instances those partitions belong to: the live ones by uid (creations
        and deletions in flight count as live), and the uids queued for the cleaner's
        instance cleaning.

        Point reads of the batch's instances only, three `get_many` in all, not a scan
        of every repository record (issue 33): an instance partition names its
        repository, a staging partition only its uid, whose name the creation indexed
        (`LiveRepositories.names`). A uid not indexed names no instance that holds data.
        """
        named: dict[str, str] = {}  # uid -> name
        unnamed: set[str] = set()
        for partition in partitions:
            staging = keys.parse_staging_partition(partition)
            instance = keys.parse_instance_partition(partition)
            if staging is not None:
                unnamed.add(staging[0])
            elif instance is not None:
                named[instance[1]] = instance[0]
        if unnamed - named.keys():
            named.update(self._names.names(unnamed - named.keys()))
        by_name = {keys.repository_key(name) for name in named.values()}
        records = self._store.get_many(keys.REPOSITORIES, sorted(by_name))
        live: dict[str, Repository] = {}
        for raw in records.values():
            repository = decode_repository(raw)
            if repository.state != "deleted" and repository.instance_uid in named:
                live[repository.instance_uid] = repository
        wanted = {keys.deleted_repository_key(name, uid): uid for uid, name in named.items()}
        entries = self._store.get_many(keys.DELETED_REPOSITORIES, sorted(wanted))
        cleaning = {wanted[key] for key in entries}
        return live, cleaning

    def _queued_tokens(self, partitions: list[bytes], now: float) -> set[str]:
        """The tokens of those staging partitions that are queued for dropping.

        Two `get_many` for the batch: the token-keyed index (`keys.DROPPED_BY_TOKEN`),
        then the queue entries it names, so an index entry left by a crash between
        the two writes of `Graveler.queue_token_drops` counts for nothing. Scanning
        the queue, ordered by due time, made every sweep read all of it (issue 33).
        An index entry whose queue entry has not appeared `grace` after its due time
        was left by such a crash: it is removed (guarded, so a newer one is kept).
        """
        tokens = {
            staging[1].encode()
            for staging in map(keys.parse_staging_partition, partitions)
            if staging is not None
        }
        if not tokens:
            return set()
        self._index_older_drops()
        index = self._store.get_many(keys.DROPPED_BY_TOKEN, sorted(tokens))
        present = self._store.get_many(keys.DROPPED_TOKENS, sorted(set(index.values())))
        queued: set[str] = set()
        for token, key in index.items():
            if key in present:
                queued.add(token.decode())
            elif now - keys.due_time(key) > self._grace:
                self._store.delete_if(keys.DROPPED_BY_TOKEN, token, key)
        return queued

    def _index_older_drops(self) -> None:
        """Index the queue entries written before the index (once per store: a marker says
        it was done; read once per process)."""
        if self._drops_indexed:
            return
        built = self._store.get_many(keys.INDEXES, [keys.DROPPED_INDEX_BUILT])
        if not built:
            with self._store.scan(keys.DROPPED_TOKENS) as scan:
                self._store.set_many(
                    keys.DROPPED_BY_TOKEN,
                    ((keys.dropped_token_of(key).encode(), key) for key, _ in scan),
                )
            self._store.set(keys.INDEXES, keys.DROPPED_INDEX_BUILT, b"")
        self._drops_indexed = True

    def _orphan(
        self,
        partition: bytes,
        live: dict[str, Repository],
        cleaning: set[str],
        queued: set[str],
        referenced: dict[str, set[str]],
    ) -> tuple[bool, Repository | None]:
        """Whether `partition` is an orphan, and the live instance whose staging partition
        it is (its blobs must be logged; None for a dead instance's)."""
        staging = keys.parse_staging_partition(partition)
        if staging is not None:
            uid, token = staging
            if uid in cleaning or token in queued:
                return False, None  # the cleaner's other jobs will drop it
            repository = live.get(uid)
            if repository is None:
                return True, None
            if repository.state != "active":
                return False, None  # being created or deleted: not ours to judge
            if uid not in referenced:
                current, sealed = self._refs.referenced_tokens(repository)
                referenced[uid] = current | sealed
            return token not in referenced[uid], repository
        instance = keys.parse_instance_partition(partition)
        if instance is None:
            return False, None
        _, uid = instance
        return uid not in live and uid not in cleaning, None

    def _note_or_drop(
        self, found: list[tuple[bytes, Repository | None]], now: float, report: SweepReport
    ) -> None:
        """Note the batch's orphans seen for the first time; drop those noted `grace` ago."""
        if not found:
            return
        noted = self._notes([partition for partition, _ in found])
        fresh = [(partition, b"%.3f" % now) for partition, _ in found if partition not in noted]
        self._store.set_many(keys.ORPHANS, fresh)
        report.noted += len(fresh)
        for partition, owner in found:
            at = noted.get(partition)
            if at is None or now - at < self._grace:
                continue
            try:
                if owner is not None and self._before_token_drop is not None:
                    token = partition[len(keys.STAGING_PREFIX) :].decode()
                    self._before_token_drop(owner, token, at)
                self._store.drop_partition(partition)
                self._store.delete(keys.ORPHANS, partition)
                report.dropped += 1
            except KvlakeError as exc:
                report.failures.append(f"orphan {partition!r}: {exc}")

    def _notes(self, partitions: list[bytes]) -> dict[bytes, float]:
        """When each of those partitions was noted, for those that were: one `get_many`."""
        found = self._store.get_many(keys.ORPHANS, partitions)
        return {partition: float(raw) for partition, raw in found.items()}

    def _forget_notes(self, orphans: set[bytes], after: bytes, through: bytes | None) -> None:
        """Drop notes of partitions in the slice looked at (after `after`, through
        `through` or to the end) that are referenced again or gone."""
        stale = []
        start = after + b"\0" if after else b""
        # Pages no longer than a slice: the notes past it are not read.
        with self._store.scan(keys.ORPHANS, start, batch_size=min(self._slice, _BATCH) + 1) as scan:
            for key, _ in scan:
                if through is not None and key > through:
                    break
                if key not in orphans:
                    stale.append(key)
        self._store.delete_many(keys.ORPHANS, stale)


def _batches(partitions: Iterator[bytes]) -> Iterator[list[bytes]]:
    batch: list[bytes] = []
    for partition in partitions:
        batch.append(partition)
        if len(batch) >= _BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
