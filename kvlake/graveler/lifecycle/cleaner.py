"""The cleaner: removes what deleted repositories and finished commits left behind.

One pass (`clean_once`) does four jobs, each safe to re-run after a crash at
any point and each moving on to the next item when one fails:
- abandons repositories stuck `initial` by crashed creations (found through
  their creation markers; every record is read on a process's first pass only);
- for every `graveler_deleted` entry, drops the staging partitions of each
  branch BEFORE deleting the branch record that names them (so a crash never
  hides a staging partition from the next pass), then the instance partition,
  then what layers above keep per instance (`instance_cleanups`: action runs),
  then the entry;
- drops queued staging tokens once due, after a fresh check that no branch
  still references them;
- every `sweep_interval` seconds, sweeps partitions nothing references any more
  (orphans.py: stray keys of stalled writers and creations);
- removes the tombstones of cleaned instances once nothing needs them
  (tombstones.py: queued when the instance is cleaned, due `tombstone_grace` on).

Queues are read in bounded batches, so a pass's memory does not grow with them.

Blobs are not graveler's business, but they lose references here: `CleanerHooks`
lets a layer above (kvlake/deletion) log them before a staging partition of a
live repository goes, and act once a deleted instance's metadata is gone. A
hook that raises keeps the token (or the deleted-instance entry) for the next
pass, so what it must log is never lost.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Final, Protocol

import msgspec

from kvlake.errors import KvlakeError, PreconditionFailedError, RepositoryNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.orphans import SWEEP_GRACE, SWEEP_SLICE, OrphanSweep
from kvlake.graveler.lifecycle.tombstones import TOMBSTONE_GRACE, Tombstones
from kvlake.graveler.records import (
    DeletedRepository,
    DroppedToken,
    Repository,
    decode_branch,
    decode_deleted_repository,
    decode_dropped_token,
)
from kvlake.kv import Store

log = logging.getLogger(__name__)

BATCH: Final = 1000
"""Queue entries a pass reads at a time."""
SWEEP_INTERVAL: Final = 600.0
"""Seconds between two sweeps for orphaned partitions (each lists every partition)."""


class CleanerReport(msgspec.Struct, kw_only=True):
    """What one pass did; `failures` lists each item that failed, with its error."""

    abandoned_creations: int = 0
    repositories_cleaned: int = 0
    tokens_dropped: int = 0
    orphans_noted: int = 0
    orphans_dropped: int = 0
    tombstones_expired: int = 0
    failures: list[str] = msgspec.field(default_factory=list)


class CleanerHooks(Protocol):
    """Called by the cleaner where staged or stored data loses its last reference."""

    def before_token_drop(self, repository: Repository, token: str, queued: float) -> None:
        """Runs before an unreferenced staging token of a live repository is dropped.

        `queued` is the time the token was due for dropping (stable across
        retries). Raising keeps the token queued; the hook runs again next pass.
        """

    def after_instance_cleaned(self, entry: DeletedRepository) -> None:
        """Runs after a deleted instance's metadata is gone, before its entry is removed.

        Raising keeps the entry; the instance is cleaned (a no-op) and the hook
        runs again next pass.
        """


InstanceCleanup = Callable[[DeletedRepository], None]
"""Removes what a layer above keeps per repository instance (its action runs), after the
instance's own keys and before its entry goes; raising keeps the entry for the next pass,
so it must be safe to run again."""


class Cleaner:
    """Runs cleaning passes over one KV store; several may run at once (idempotent)."""

    def __init__(
        self,
        graveler: Graveler,
        *,
        hooks: CleanerHooks | None = None,
        instance_cleanups: Sequence[InstanceCleanup] = (),
        sweep_interval: float = SWEEP_INTERVAL,
        sweep_grace: float = SWEEP_GRACE,
        sweep_slice: int = SWEEP_SLICE,
        tombstone_grace: float = TOMBSTONE_GRACE,
    ) -> None:
        self._graveler = graveler
        self._store = graveler.store
        self._hooks = hooks
        self._instance_cleanups = tuple(instance_cleanups)
        self._sweep = OrphanSweep(
            graveler.store,
            graveler._refs,
            clock=graveler.clock,
            before_token_drop=hooks.before_token_drop if hooks is not None else None,
            grace=sweep_grace,
            slice_size=sweep_slice,
        )
        self._tombstones = Tombstones(graveler.store, clock=graveler.clock, grace=tombstone_grace)
        self._sweep_interval = sweep_interval
        self._last_sweep = float("-inf")
        self._read_every_record = False

    def clean_once(self) -> CleanerReport:
        report = CleanerReport()
        self._abandon_stale_creations(report)
        self._clean_deleted_repositories(report)
        self._drop_due_tokens(report)
        self._expire_tombstones(report)
        now = self._graveler.clock()
        if now - self._last_sweep >= self._sweep_interval:
            self._last_sweep = now
            swept = self._sweep.run()
            report.orphans_noted, report.orphans_dropped = swept.noted, swept.dropped
            report.failures.extend(swept.failures)
        return report

    def run(self, stop: threading.Event, *, interval: float = 10.0) -> None:
        """Clean every `interval` seconds until `stop` is set."""
        while not stop.is_set():
            report = self.clean_once()
            if report.failures:
                log.warning(
                    "cleaner pass had %d failures: %s", len(report.failures), report.failures
                )
            stop.wait(interval)

    def _abandon_stale_creations(self, report: CleanerReport) -> None:
        repositories = self._graveler._repositories
        # The first pass of a process reads every record once, for `initial` records
        # written before creations left markers; later passes read the markers only.
        every_record, self._read_every_record = not self._read_every_record, True
        for repository, predicate in repositories.stale_creations(every_record=every_record):
            try:
                repositories.abandon(repository, predicate)
                report.abandoned_creations += 1
            except PreconditionFailedError:
                continue  # someone else moved it meanwhile
            except KvlakeError as exc:
                report.failures.append(f"abandon {repository.name}: {exc}")

    def _expire_tombstones(self, report: CleanerReport) -> None:
        try:
            self._tombstones.queue_older()
            report.tombstones_expired += self._tombstones.expire_due()
        except KvlakeError as exc:
            report.failures.append(f"tombstones: {exc}")

    def _clean_deleted_repositories(self, report: CleanerReport) -> None:
        for key, raw in _in_batches(self._store, keys.DELETED_REPOSITORIES):
            entry = decode_deleted_repository(raw)
            try:
                self.clean_instance(entry.name, entry.instance_uid)
                # A deletion cut short between its tombstone and its unlisting left the key.
                self._store.delete(
                    keys.LIVE_REPOSITORIES, keys.live_repository_key(entry.name, entry.instance_uid)
                )
                # Its partitions are gone: the orphan sweep needs its name no more (before
                # the entry, so a crash between leaves the entry to do it again).
                self._store.delete(keys.INSTANCES, entry.instance_uid.encode())
                for cleanup in self._instance_cleanups:
                    cleanup(entry)
                if self._hooks is not None:
                    self._hooks.after_instance_cleaned(entry)
                # Before the entry, so its tombstone is always queued (once: a pass whose
                # cleanup fails queues nothing); kept while the entry is left by a crash here.
                self._tombstones.queue(entry.name, entry.instance_uid)
                self._store.delete(keys.DELETED_REPOSITORIES, key)
                report.repositories_cleaned += 1
            except KvlakeError as exc:
                log.warning(
                    "cleaning repository %s/%s failed: %s", entry.name, entry.instance_uid, exc
                )
                report.failures.append(f"repository {entry.name}/{entry.instance_uid}: {exc}")

    def clean_instance(self, name: str, instance_uid: str) -> None:
        """Remove every key of a repository instance: staging first, then its records."""
        partition = keys.instance_partition(name, instance_uid)
        with self._store.scan(partition, keys.BRANCH_PREFIX) as scan:
            for key, raw in scan:
                if not key.startswith(keys.BRANCH_PREFIX):
                    break
                branch = decode_branch(raw)
                for token in (branch.staging_token, *branch.sealed_tokens):
                    self._graveler._staging.drop(token)
                self._store.delete(partition, key)
        self._store.drop_partition(keys.visible_branches_partition(name, instance_uid))
        self._store.drop_partition(keys.open_pulls_partition(name, instance_uid))
        self._store.drop_partition(partition)  # last: a pass cut short finds the instance again

    def _drop_due_tokens(self, report: CleanerReport) -> None:
        now = self._graveler.clock()
        start = b""
        while True:
            due: dict[tuple[str, str], list[tuple[bytes, DroppedToken]]] = defaultdict(list)
            with self._store.scan(keys.DROPPED_TOKENS, start, batch_size=BATCH) as scan:
                for key, raw in itertools.islice(scan, BATCH):
                    if keys.due_time(key) > now:
                        break
                    entry = decode_dropped_token(raw)
                    due[entry.repository, entry.instance_uid].append((key, entry))
                    start = key + b"\0"
            if not due:
                return
            self._drop_batch(due, report)

    def _drop_batch(
        self,
        due: dict[tuple[str, str], list[tuple[bytes, DroppedToken]]],
        report: CleanerReport,
    ) -> None:
        for (name, instance_uid), entries in due.items():
            try:
                live, referenced = self._referenced_tokens(name, instance_uid, entries)
                for key, entry in entries:
                    # A token still referenced will be queued again by whoever stops
                    # referencing it (commit, reset, branch deletion): forget this entry.
                    if entry.token not in referenced:
                        if live is not None and self._hooks is not None:
                            self._hooks.before_token_drop(live, entry.token, keys.due_time(key))
                        self._graveler._staging.drop(entry.token)
                        report.tokens_dropped += 1
                    # The index entry first (a crash leaves the queue entry, settled again
                    # next pass); guarded: the token queued again since keeps its newer one.
                    self._store.delete_if(keys.DROPPED_BY_TOKEN, entry.token.encode(), key)
                    self._store.delete(keys.DROPPED_TOKENS, key)
            except KvlakeError as exc:
                report.failures.append(f"tokens of {name}/{instance_uid}: {exc}")

    def _referenced_tokens(
        self, name: str, instance_uid: str, entries: list[tuple[bytes, DroppedToken]]
    ) -> tuple[Repository | None, set[str]]:
        """The live instance and which of the entries' tokens a branch still names;
        (None, empty) if the instance is gone.

        An entry that names its branch is checked against that branch's record alone
        (one `get_many` for the batch): a token is only ever named by the branch it
        was made or sealed for, so no other record can name it. Entries queued before
        entries named their branch cost one scan of the branches for the batch.
        Scanning every branch for every batch made a pass cost the repository's
        branches, however few tokens it dropped (issue 33, item 3).
        """
        try:
            repository, _ = self._graveler._repositories.load(name)
        except RepositoryNotFoundError:
            return None, set()
        if repository.instance_uid != instance_uid or repository.state in ("deleting", "deleted"):
            return None, set()
        refs = self._graveler._refs
        referenced: set[str] = set()
        if any(not entry.branch for _, entry in entries):
            staging, sealed = refs.referenced_tokens(repository)
            referenced |= staging | sealed
        named = sorted({entry.branch for _, entry in entries if entry.branch})
        for branch in refs.get_branches(repository, named).values():
            referenced.update(branch.tokens())
        return repository, referenced


def _in_batches(store: Store, partition: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Every entry of a queue, read `BATCH` at a time: the entries a caller deletes
    meanwhile are not read again, and no more than a batch is held at once."""
    start = b""
    while True:
        with store.scan(partition, start, batch_size=BATCH) as scan:
            page = list(itertools.islice(scan, BATCH))
        yield from page
        if len(page) < BATCH:
            return
        start = page[-1][0] + b"\0"
