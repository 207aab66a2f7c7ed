"""Repository records and their lifecycle, correct on a store without transactions.

A repository moves `initial -> active -> deleting -> deleted`, one
compare-and-swap at a time, so no reader ever sees a half-created or
half-deleted repository (invariant 1): only `active` records are usable. A
record left `initial` longer than `initial_timeout` by a crashed creation is
abandoned by the next access. `deleted` is a tombstone that frees the name: a
new creation replaces it by compare-and-swap, so no unguarded delete can ever
remove a newer repository's record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence

import msgspec

from kvlake import ids
from kvlake.errors import (
    ConflictError,
    KvlakeError,
    PreconditionFailedError,
    RepositoryDeletingError,
    RepositoryNotFoundError,
    TooManyTriesError,
)
from kvlake.graveler import keys
from kvlake.graveler.lifecycle.liverepos import LiveRepositories
from kvlake.graveler.records import (
    DeletedRepository,
    Repository,
    decode_repository,
    encode,
)
from kvlake.kv import MAX_TRIES, Predicate, Store, get_or_none

log = logging.getLogger(__name__)

INITIAL_TIMEOUT = 120.0
"""Seconds after which a repository still `initial` counts as a failed creation."""

INSTANCE_MEMORY = 10_000
"""Repository names whose instance uid a process remembers (`Repositories.get_with`)."""


class Repositories:
    """Reads and moves repository records. Safe for many threads and processes."""

    def __init__(
        self, store: Store, *, clock: Callable[[], float], initial_timeout: float = INITIAL_TIMEOUT
    ) -> None:
        self._store = store
        self._clock = clock
        self._initial_timeout = initial_timeout
        self._instances: dict[str, str] = {}
        """Name -> instance uid of the last active record read: only a hint of which
        partition to read beside the record, never served (see `get_with`)."""
        self._live = LiveRepositories(store)

    def load(self, name: str) -> tuple[Repository, Predicate]:
        """The raw record in any state. Raises RepositoryNotFoundError when there is none."""
        loaded = get_or_none(self._store, keys.REPOSITORIES, keys.repository_key(name))
        if loaded is None:
            raise RepositoryNotFoundError(f"repository {name!r} not found")
        return decode_repository(loaded[0]), loaded[1]

    def get(self, name: str) -> Repository:
        """The repository if it is `active`.

        Raises:
            RepositoryNotFoundError: no such repository, or it is still being created.
            RepositoryDeletingError: it is being deleted.
        """
        repository, predicate = self.load(name)
        if repository.state == "active":
            return repository
        if repository.state == "deleting":
            raise RepositoryDeletingError(
                f"repository {name!r} is being deleted; wait for the deletion to finish"
            )
        if repository.state == "initial" and self.is_stale(repository):
            try:
                self.abandon(repository, predicate)
            except PreconditionFailedError:
                pass  # another request moved it first; either way it is gone
        raise RepositoryNotFoundError(f"repository {name!r} not found")

    def get_with(
        self,
        name: str,
        instance_keys: Sequence[bytes],
        *,
        beside: Sequence[bytes] = (),
        beside_key: bytes = b"",
    ) -> tuple[Repository, dict[bytes, bytes], dict[bytes, bytes] | None]:
        """The active repository (as `get`) and those keys of its instance partition that
        exist, read together: one round trip on the SQL drivers once the name is known.

        `beside` names more partitions (a branch's staging tokens, as the caller last
        saw them) whose `beside_key` rides along in the same statement; the third item
        maps each of those partitions holding the key to its value, or is None when
        the statement could not carry them (the uid was not known). What they say is
        only as current as the record read with them: the caller must check that they
        are still the partitions it wants (`Graveler.read_branch` compares the tokens
        with the branch read in the same statement).

        An instance's uid (and so its partition and namespace) never changes, so the
        process remembers the uid of the last active record per name and reads the
        record and the keys in one `Store.get_across`. Nothing is served from memory:
        the record is read every time (invariant 1), and when it is not active or names
        another instance (the name was deleted and re-created, in any process) the
        memory is dropped and the keys are read again from the record's own
        partition. A stale uid costs one more round trip, never a stale answer, so
        read-after-write across processes holds as without it.

        Raises:
            RepositoryNotFoundError, RepositoryDeletingError: as `get`.
        """
        wanted = list(instance_keys)
        uid = self._instances.get(name)
        if uid is not None:
            record_key = keys.repository_key(name)
            partition = keys.instance_partition(name, uid)
            extra = [beside_key] if beside else []
            rows = self._store.get_across(
                [keys.REPOSITORIES, partition, *beside], [record_key, *wanted, *extra]
            )
            raw = rows.get(keys.REPOSITORIES, {}).get(record_key)
            if raw is not None:
                repository = decode_repository(raw)
                if repository.state == "active" and repository.instance_uid == uid:
                    read = rows.get(partition, {})
                    found = {
                        p: rows[p][beside_key] for p in beside if beside_key in rows.get(p, {})
                    }
                    return repository, {key: read[key] for key in wanted if key in read}, found
            self._instances.pop(name, None)  # gone, moving or re-created: read it afresh
        repository = self.get(name)
        if len(self._instances) >= INSTANCE_MEMORY:
            self._instances.clear()  # a bound, not an LRU: refilling costs a round trip each
        self._instances[name] = repository.instance_uid
        partition = keys.instance_partition(name, repository.instance_uid)
        return repository, self._store.get_many(partition, wanted), None

    def list(self, *, after: str = "", prefix: str = "") -> Iterator[Repository]:
        """Active repositories in name order, after `after`, whose names start with `prefix`.

        Read through the live-instance index (liverepos.py), from the prefix on: a page
        costs what it lists, not the names before it nor the deleted ones (issue 33).
        """
        for repository in self._live.records(after=after, prefix=prefix):
            if repository.state == "active":
                yield repository

    def is_stale(self, repository: Repository) -> bool:
        return self._clock() - repository.creation_date > self._initial_timeout

    def is_live(self, name: str, instance_uid: str) -> bool:
        """Whether that instance is active or being created (a stale creation is abandoned)."""
        try:
            repository, predicate = self.load(name)
        except RepositoryNotFoundError:
            return False
        if repository.instance_uid != instance_uid:
            return False
        if repository.state == "initial" and self.is_stale(repository):
            try:
                self.abandon(repository, predicate)
            except PreconditionFailedError:
                return True  # it moved meanwhile (activated?): ask again later
            return False
        return repository.state in ("initial", "active")

    def begin_create(
        self, name: str, *, storage_namespace: str, default_branch: str
    ) -> tuple[Repository, Predicate]:
        """Write a new `initial` record, replacing a tombstone or an abandoned creation.

        Raises:
            ConflictError: an active repository (or a creation in progress) has the name.
            RepositoryDeletingError: a repository of that name is being deleted.
        """
        # Not kv.update: a try writes the creation marker before its swap, and abandons
        # a stale creation (two swaps) before it tries again.
        for _ in range(MAX_TRIES):
            try:
                existing, predicate = self.load(name)
            except RepositoryNotFoundError:
                expected: Predicate | None = None
            else:
                if existing.state == "initial" and self.is_stale(existing):
                    self.abandon(existing, predicate)
                    continue
                if existing.state == "deleting":
                    raise RepositoryDeletingError(
                        f"repository {name!r} is being deleted; retry once the deletion finishes"
                    )
                if existing.state != "deleted":
                    raise ConflictError(f"repository {name!r} already exists; choose another name")
                expected = predicate
            now = self._clock()
            record = Repository(
                name=name,
                storage_namespace=storage_namespace,
                default_branch=default_branch,
                creation_date=now,
                state="initial",
                instance_uid=ids.new_uid(),
                state_changed=now,
            )
            encoded = encode(record)
            # The marker first: every `initial` record has one, so the cleaner finds a
            # crashed creation among the markers, not by reading every repository.
            marker = keys.creation_key(name, record.instance_uid)
            self._store.set(keys.CREATIONS, marker, b"%.3f" % now)
            self._live.add(name, record.instance_uid)  # before the record: listings find it
            try:
                self._store.set_if(keys.REPOSITORIES, keys.repository_key(name), encoded, expected)
            except PreconditionFailedError:
                continue  # a concurrent create or delete moved first: look again
            return record, Predicate(encoded)
        raise TooManyTriesError(f"creating repository {name!r} kept racing other requests; retry")

    def activate(self, repository: Repository, predicate: Predicate) -> Repository:
        """Move a fully created repository from `initial` to `active`.

        Raises:
            PreconditionFailedError: the creation took so long it was abandoned.
        """
        active = msgspec.structs.replace(repository, state="active", state_changed=self._clock())
        try:
            self._store.set_if(
                keys.REPOSITORIES, keys.repository_key(repository.name), encode(active), predicate
            )
        except PreconditionFailedError:
            raise PreconditionFailedError(
                f"creating repository {repository.name!r} took longer than "
                f"{self._initial_timeout:.0f} s and was abandoned; create it again"
            ) from None
        self._forget_creation(active)
        return active

    def _forget_creation(self, repository: Repository) -> None:
        """Drop a finished creation's marker. Best effort: the cleaner drops leftovers."""
        try:
            self._store.delete(
                keys.CREATIONS, keys.creation_key(repository.name, repository.instance_uid)
            )
        except KvlakeError as exc:
            log.warning("forgetting creation of %s failed: %s", repository.name, exc)

    def release_failed_creation(self, repository: Repository, predicate: Predicate) -> None:
        """Free the name of a creation that failed, at once: abandon its `initial` record.

        Best effort: the caller re-raises its own error, so a failure here is logged,
        and the record is abandoned anyway once stale (by the next access or the cleaner).
        """
        try:
            self.abandon(repository, predicate)
        except PreconditionFailedError:
            pass  # already moved on (abandoned as stale, or activated)
        except KvlakeError as exc:
            log.warning(
                "repository %s: releasing the failed creation failed (%s); the name stays"
                " taken until the creation is abandoned as stale",
                repository.name,
                exc,
            )

    def delete(
        self, name: str, *, before: Callable[[Repository], None] | None = None
    ) -> DeletedRepository:
        """Hide the repository at once and hand its instance to the cleaner.

        `before` is called with the exact record about to be deleted, unless it is
        an abandoned creation (the namespace claim is settled there). Retrying
        after a crash (the record left `deleting`) finishes the deletion.

        Raises:
            RepositoryNotFoundError: no repository (or only an unfinished creation) has the name.
        """
        # Not kv.update: a try calls `before` and then abandons the record (two swaps).
        for _ in range(MAX_TRIES):
            repository, predicate = self.load(name)
            if repository.state == "deleted" or (
                repository.state == "initial" and not self.is_stale(repository)
            ):
                raise RepositoryNotFoundError(f"repository {name!r} not found")
            if before is not None and repository.state != "initial":
                before(repository)
            try:
                return self.abandon(repository, predicate)
            except PreconditionFailedError:
                continue  # changed underneath us (another delete?): re-read and decide again
        raise TooManyTriesError(f"deleting repository {name!r} kept racing other requests; retry")

    def abandon(self, repository: Repository, predicate: Predicate) -> DeletedRepository:
        """deleting (CAS) -> cleaner entry -> tombstone (CAS). Raises PreconditionFailedError."""
        key = keys.repository_key(repository.name)
        if repository.state != "deleting":
            deleting = msgspec.structs.replace(
                repository, state="deleting", state_changed=self._clock()
            )
            encoded = encode(deleting)
            self._store.set_if(keys.REPOSITORIES, key, encoded, predicate)
            repository, predicate = deleting, Predicate(encoded)
        entry = DeletedRepository(
            name=repository.name,
            instance_uid=repository.instance_uid,
            storage_namespace=repository.storage_namespace,
        )
        # The cleaner entry is durable before the name is freed, so a crash here
        # leaves either a `deleting` record (retry finishes) or work for the cleaner.
        self._store.set(
            keys.DELETED_REPOSITORIES,
            keys.deleted_repository_key(repository.name, repository.instance_uid),
            encode(entry),
        )
        tombstone = msgspec.structs.replace(
            repository, state="deleted", state_changed=self._clock()
        )
        self._store.set_if(keys.REPOSITORIES, key, encode(tombstone), predicate)
        self._unlist(repository)
        log.info("repository %s (instance %s) deleted", repository.name, repository.instance_uid)
        return entry

    def _unlist(self, repository: Repository) -> None:
        """Take a deleted instance out of the live index. Best effort: a listing that meets
        its key finds the tombstone and drops it."""
        try:
            self._live.drop(repository.name, repository.instance_uid)
        except KvlakeError as exc:
            log.warning("unlisting repository %s failed: %s", repository.name, exc)

    def stale_creations(
        self, *, every_record: bool = False
    ) -> Iterator[tuple[Repository, Predicate]]:
        """Records left `initial` by crashed creations, for the cleaner.

        Read from the creation markers (`keys.CREATIONS`): a pass costs the
        creations in flight, not every repository record (issue 33). A marker whose
        creation is over (activated, abandoned, replaced) is dropped on the way; its
        uid never names an `initial` record again. `every_record` also scans all
        records, for `initial` records written before markers existed.
        """
        if every_record:
            with self._store.scan(keys.REPOSITORIES, b"repos/") as scan:
                for _, raw in scan:
                    repository = decode_repository(raw)
                    if repository.state == "initial" and self.is_stale(repository):
                        yield repository, Predicate(raw)
        with self._store.scan(keys.CREATIONS) as scan:
            markers = list(scan)  # a handful: creations in flight
        for marker, written in markers:
            name, uid = keys.parse_creation_key(marker)
            found: tuple[Repository, Predicate] | None
            try:
                found = self.load(name)
            except RepositoryNotFoundError:
                found = None
            if found is not None and found[0].instance_uid == uid:
                repository, predicate = found
                if repository.state != "initial":
                    self._store.delete(keys.CREATIONS, marker)  # activated or abandoned
                elif self.is_stale(repository) and not every_record:  # else yielded above
                    yield repository, predicate
            elif self._clock() - float(written) > self._initial_timeout:
                # Its record is not there: the creation lost a race to another, or is
                # about to write it. Once past the timeout, a record it still writes is
                # stale from birth (dated before the marker) and the next access abandons it.
                self._live.drop(name, uid)  # its key, if it wrote one before losing
                self._store.delete(keys.CREATIONS, marker)
