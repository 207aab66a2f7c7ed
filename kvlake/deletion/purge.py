"""Repository deletion with purge: every blob of the namespace goes, once nothing can read it.

The order protects invariant 4 end to end:
1. `delete_repository(name, purge=True)` writes a purge request (the intent),
   and only then deletes the repository (metadata starts to go).
2. The cleaner removes the instance's metadata, then calls `log_namespace`,
   which lists the namespace and logs one `purged_repository` record per blob.
   The listing is checkpointed in the request, so a crash resumes it, and record
   keys are derived from the request, so re-logging a chunk writes the same keys.
3. Workers delete the blobs after checking that the instance is gone and that
   no live repository shares the namespace; they count what they did into the
   request, which `kvlake deletion purges` shows as the report.
A writer that still held the repository when it was deleted and uploads after
the listing leaves a blob behind: garbage collection of the namespace finds it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Final, NamedTuple

import msgspec

from kvlake.blockstore import BlockStore, parse_address
from kvlake.deletion import keys
from kvlake.deletion.log import DeletionLog
from kvlake.deletion.records import (
    PendingDelete,
    PurgeCounts,
    PurgeRequest,
    decode_purge,
    decode_purge_counts,
    encode,
)
from kvlake.errors import ConflictError, RepositoryNotFoundError, TooManyTriesError
from kvlake.graveler import DeletedRepository, Graveler, Repository
from kvlake.kv import Predicate, get_or_none, update

log = logging.getLogger(__name__)

CHECKPOINT_EVERY: Final = 1000
"""Blobs logged between two checkpoints of a purge's namespace listing."""


def overlaps(first: str, second: str) -> bool:
    """Whether two namespaces share any blob (equal, or one inside the other), compared in
    the canonical form the blockstore reads, segment by segment."""
    return parse_address(first).overlaps(parse_address(second))


class PurgeReport(NamedTuple):
    """A purge request and what workers did with its records."""

    request: PurgeRequest
    counts: PurgeCounts


class Purges:
    """Purge requests: create them, log their namespaces, count what workers did.

    One per lake: the cleaner's hooks and the deletion workers share it, and it
    names the log, graveler and blockstore they all work on.
    """

    def __init__(self, log: DeletionLog, graveler: Graveler, blockstore: BlockStore) -> None:
        self.log = log
        self.store = log.store
        """The deletion layer's store (the KV the whole lake shares)."""
        self.graveler = graveler
        self.blockstore = blockstore

    def load(self, repository: str, instance_uid: str) -> tuple[PurgeRequest, Predicate] | None:
        loaded = get_or_none(self.store, keys.PURGES, keys.purge_key(repository, instance_uid))
        if loaded is None:
            return None
        return decode_purge(loaded[0]), loaded[1]

    def live_users(self, namespace: str, *, except_uid: str = "") -> Iterator[Repository]:
        """Repositories not yet deleted whose namespace overlaps `namespace`."""
        wanted = self.blockstore.check_namespace(namespace)
        for repository in self.graveler.references.repository_records():
            if repository.state == "deleted" or repository.instance_uid == except_uid:
                continue
            if overlaps(wanted, repository.storage_namespace):
                yield repository

    def delete_repository(self, name: str, *, purge: bool) -> PurgeRequest | None:
        """Delete a repository; with `purge`, first record that its namespace must go.

        Retrying after a crash finishes the deletion (a `deleting` record is accepted).

        Raises:
            RepositoryNotFoundError: no such repository.
            ConflictError: with purge, another repository uses the same storage namespace,
                or it holds the kept data of a repository deleted without purge.
        """
        repository = self.graveler.references.repository_record(name)
        if repository is None or repository.state not in ("active", "deleting"):
            raise RepositoryNotFoundError(f"repository {name!r} not found")
        existing = self.load(name, repository.instance_uid)
        purge = purge or existing is not None  # a retry never takes a purge back
        request = None
        if purge and existing is None:
            self._check_nothing_kept(repository)
        if purge:
            for other in self.live_users(
                repository.storage_namespace, except_uid=repository.instance_uid
            ):
                raise ConflictError(
                    f"repository {name!r} shares storage namespace {repository.storage_namespace!r}"
                    f" with repository {other.name!r}; purging would delete its data, so delete"
                    f" {name!r} without purge"
                )
            request = PurgeRequest(
                repository=name,
                instance_uid=repository.instance_uid,
                storage_namespace=repository.storage_namespace,
                requested=self.log.clock(),
            )
            if existing is None:
                # Invariant 4: the intent is durable before the metadata starts to go.
                self.store.set_if(
                    keys.PURGES,
                    keys.purge_key(name, repository.instance_uid),
                    encode(request),
                    None,
                )
            else:
                request = existing[0]
        self.graveler.delete_repository(name, purge=purge)
        return request

    def _check_nothing_kept(self, repository: Repository) -> None:
        """Refuse to purge a namespace that holds data of an instance deleted without purge.

        A bare repository may take over such a namespace to restore that instance's refs
        (lakeFS's migration path); until it has, those blobs are referenced by no ref of
        its own, and a purge, which deletes every blob of the namespace, would delete them.

        Raises:
            ConflictError: the namespace's claim names kept instances (issue 23 #7).
        """
        claim = self.graveler.references.namespace_owner(repository.storage_namespace)
        if claim is None or claim.instance_uid != repository.instance_uid or not claim.kept:
            return
        raise ConflictError(
            f"repository {repository.name!r} cannot be purged: its storage namespace"
            f" {repository.storage_namespace!r} holds the data of deleted repository"
            f" {claim.describe_kept()}, deleted without purge, whose refs were never restored"
            f" into {repository.name!r}; purging would delete that data. Restore that"
            f" repository's refs dump into {repository.name!r} first, or delete"
            f" {repository.name!r} without purge"
        )

    def log_namespace(self, entry: DeletedRepository) -> int:
        """Log every blob of a cleaned instance's namespace if it was purged; return the count.

        Called by the cleaner after the instance's metadata is gone. Resumes from
        the last checkpoint; a finished request is not logged again.
        """
        loaded = self.load(entry.name, entry.instance_uid)
        if loaded is None:
            return 0
        if loaded[0].state == "logged":  # a retry after a crash: only the release may be left
            self._release_if_finished(loaded[0], self._counts(entry.name, entry.instance_uid))
            return 0
        request, predicate = loaded
        repository = Repository(
            name=request.repository,
            storage_namespace=request.storage_namespace,
            default_branch="",
            creation_date=0.0,
            state="deleted",
            instance_uid=request.instance_uid,
        )
        due = self.due(request)
        chunk: list[PendingDelete] = []
        logged = 0
        for address in self.blockstore.list_keys(request.storage_namespace):
            if address <= request.last_key:
                continue  # logged before a crash: the checkpoint says so
            record_id = keys.stable_record_id("purge", request.instance_uid, address)
            chunk.append(
                self.log.new_record(
                    repository,
                    address,
                    "purged_repository",
                    check_in_use=False,
                    record_id=record_id,
                    due=due,
                )
            )
            if len(chunk) >= CHECKPOINT_EVERY:
                request, predicate = self._checkpoint(request, predicate, chunk, done=False)
                logged += len(chunk)
                chunk = []
        logged += len(chunk)
        request, _ = self._checkpoint(request, predicate, chunk, done=True)
        log.info("purge of %s/%s: %d blobs logged", entry.name, entry.instance_uid, logged)
        self._release_if_finished(request, self._counts(request.repository, request.instance_uid))
        return logged

    def _checkpoint(
        self,
        request: PurgeRequest,
        predicate: Predicate,
        chunk: list[PendingDelete],
        *,
        done: bool,
    ) -> tuple[PurgeRequest, Predicate]:
        self.log.append(chunk)
        updated = msgspec.structs.replace(
            request,
            logged=request.logged + len(chunk),
            last_key=chunk[-1].address if chunk else request.last_key,
            state="logged" if done else "requested",
            logged_at=self.log.clock() if done else 0.0,
        )
        encoded = encode(updated)
        key = keys.purge_key(request.repository, request.instance_uid)
        self.store.set_if(keys.PURGES, key, encoded, predicate)
        return updated, Predicate(encoded)

    def count(
        self, repository: str, instance_uid: str, *, deleted: int, dead_lettered: int
    ) -> None:
        """Add what workers did to the purge's counts (compare-and-swap, retried)."""

        def add(raw: bytes | None) -> bytes:
            # Run again on another worker's total when it counted first.
            counts = PurgeCounts() if raw is None else decode_purge_counts(raw)
            return encode(
                PurgeCounts(
                    deleted=counts.deleted + deleted,
                    dead_lettered=counts.dead_lettered + dead_lettered,
                )
            )

        key = keys.purge_counts_key(repository, instance_uid)
        try:
            counted = update(self.store, keys.PURGES, key, add, what="counting a purge")
        except TooManyTriesError:
            log.warning(
                "purge report of %s/%s: counts lost to racing updates", repository, instance_uid
            )
            return
        loaded = self.load(repository, instance_uid)
        if loaded is not None:
            self._release_if_finished(loaded[0], decode_purge_counts(counted))

    def _release_if_finished(self, request: PurgeRequest, counts: PurgeCounts) -> None:
        """Free the namespace once every logged blob is deleted or dead-lettered.

        The listing and the workers each check after writing their own progress, so
        whichever finishes last sees both and releases.
        """
        if request.state == "logged" and counts.deleted + counts.dead_lettered >= request.logged:
            self.graveler.release_namespace(request.storage_namespace, request.instance_uid)

    def _counts(self, repository: str, instance_uid: str) -> PurgeCounts:
        loaded = get_or_none(
            self.store, keys.PURGES, keys.purge_counts_key(repository, instance_uid)
        )
        return PurgeCounts() if loaded is None else decode_purge_counts(loaded[0])

    def reports(self) -> Iterator[PurgeReport]:
        """Every purge request with what workers did so far, by repository then instance."""
        request: PurgeRequest | None = None
        with self.store.scan(keys.PURGES) as scan:
            for key, raw in scan:
                if key.endswith(b"/counts"):
                    if request is not None and key == keys.purge_counts_key(
                        request.repository, request.instance_uid
                    ):
                        yield PurgeReport(request, decode_purge_counts(raw))
                        request = None
                    continue
                if request is not None:
                    yield PurgeReport(request, PurgeCounts())
                request = decode_purge(raw)
        if request is not None:
            yield PurgeReport(request, PurgeCounts())

    def due(self, request: PurgeRequest) -> float:
        """When the request's logged blobs may be deleted (the deletion log's send delay)."""
        return request.requested + self.log.settings.send_delay

    def latest(self, repository: str) -> PurgeReport | None:
        """The newest purge of a repository named `repository` (instance uids sort by time),
        with what workers did so far; None if none was ever requested."""
        prefix = keys.purge_key(repository, "")
        newest: PurgeRequest | None = None
        with self.store.scan(keys.PURGES, prefix) as scan:
            for key, raw in scan:
                if not key.startswith(prefix):
                    break
                if not key.endswith(b"/counts"):
                    newest = decode_purge(raw)
        if newest is None:
            return None
        return PurgeReport(newest, self._counts(repository, newest.instance_uid))

    def report(self, repository: str, instance_uid: str) -> PurgeReport | None:
        loaded = self.load(repository, instance_uid)
        if loaded is None:
            return None
        return PurgeReport(loaded[0], self._counts(repository, instance_uid))
