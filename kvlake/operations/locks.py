"""Object locks: leases on object paths that uploads and bulk deletes respect.

Three kinds of record, all leases with an owner and an expiry, so a crashed
holder never blocks anyone for longer than its lease:

- an explicit write lock on a path (`acquire` / `release`, API and CLI): other
  owners' uploads to the path are refused and bulk deletes skip it;
- an upload's implicit write lock (`begin_upload` / `end_upload`), held while the
  body streams and until the entry is staged; bulk deletes skip the path. It is
  no KV record of its own: the upload is registered in its process's upload lease
  (kvlake/operations/leases.py), one record per process renewed in bulk;
- a bulk delete's delete lock on its path prefix and branch (`take_delete_lock`),
  renewed with the operation's lease, during enumeration and before every batch
  writes (`renew_delete_lock`); new blobs staged under the prefix on that branch
  are refused.

The upload and the bulk delete meet Dekker-style, which is what makes a bulk
delete's blind tombstone writes safe (kvlake/graveler/staging/writer.py,
`write_tombstones`): an upload registers in its lease *then* reads the delete
locks; a bulk delete writes its delete lock, waits until every other process's
lease was renewed twice since (`settle_uploads`: then those leases list every
upload that read the delete locks before the lock was written), *then* reads the
write locks and leases of each batch before touching it. Whichever comes second
sees the other, so an upload is either refused before it stages anything or its
path is skipped.
Only a lease that expires mid-upload reopens the window; `Catalog.upload`
checks for that case after staging (docs/operations.md).

One delete lock per operation instead of one per object: a lock per object is
a KV write per object, which would double the cost of a delete. A prefix lock
read by every upload (one scan of a partition with an entry per running bulk
delete) protects the same paths; a retry of the same operation takes it over
because its key is the operation id.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kvlake.errors import (
    InvalidInputError,
    LockedError,
    PreconditionFailedError,
    UnavailableError,
)
from kvlake.graveler import Repository, check_path
from kvlake.kv import Predicate, Store, get_or_none, update
from kvlake.operations import keys
from kvlake.operations.leases import Registration, UploadLeases, live_leases
from kvlake.operations.records import LeasedUpload, Lock, decode_lock, encode

MAX_LOCK_TTL = 7 * 24 * 3600.0


@dataclass(frozen=True)
class UploadLock:
    """An upload's implicit lock: release it with `ObjectLocks.end_upload`."""

    repository: Repository
    registration: Registration
    lock: Lock


class ObjectLocks:
    """Reads and writes object locks in the KV. Thread-safe; the one in-process state is
    this process's upload lease (`leases`)."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], float] = time.time,
        upload_ttl: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.clock = clock
        self.upload_ttl = upload_ttl
        self.leases = UploadLeases(store, clock=clock, ttl=upload_ttl)
        self.sleep = sleep
        """How `settle_uploads` waits between looks (tests renew other leases in it)."""

    # -- explicit write locks ------------------------------------------------------

    def acquire(self, repository: Repository, path: str, *, owner: str, ttl: float) -> Lock:
        """Take (or renew) the write lock on `path` for `ttl` seconds.

        Raises:
            InvalidInputError: a bad path, owner or ttl (nothing written).
            LockedError: another owner holds a live lock on it, or a bulk delete
                covers it.
        """
        check_path(path)
        if not owner:
            raise InvalidInputError("a lock needs an owner; sign in or pass --owner")
        if not 0 < ttl <= MAX_LOCK_TTL:
            raise InvalidInputError(f"lock ttl {ttl} is out of range; use 1 to {MAX_LOCK_TTL:.0f}")
        now = self.clock()
        partition = keys.locks_partition(repository.instance_uid)
        current, predicate = self._read(partition, keys.lock_key(path))
        if current is not None and current.live(now) and current.owner != owner:
            raise _held(path, current, now)
        self._refuse_deleting(repository, path, now)
        lock = Lock(kind="write", owner=owner, expires=now + ttl, path=path)
        try:
            self.store.set_if(partition, keys.lock_key(path), encode(lock), predicate)
        except PreconditionFailedError:
            raise LockedError(f"the lock on {path!r} changed while being taken; retry") from None
        return lock

    def release(
        self, repository: Repository, path: str, *, owner: str, force: bool = False
    ) -> None:
        """Release the write lock on `path` (an admin may `force` another owner's).

        The record is replaced by an expired one by compare-and-swap rather than
        deleted: the KV has no conditional delete, and an unguarded one could
        remove a lock someone else took meanwhile.

        Raises:
            LockedError: the live lock is another owner's.
            NotFoundError... never: releasing a missing or expired lock is done already.
        """
        check_path(path)
        partition = keys.locks_partition(repository.instance_uid)
        current, predicate = self._read(partition, keys.lock_key(path))
        now = self.clock()
        if current is None or not current.live(now):
            return
        if current.owner != owner and not force:
            raise _held(path, current, now)
        expired = Lock(kind="write", owner=current.owner, expires=0.0, path=path)
        try:
            self.store.set_if(partition, keys.lock_key(path), encode(expired), predicate)
        except PreconditionFailedError:
            raise LockedError(f"the lock on {path!r} changed while being released; retry") from None

    def list_locks(self, repository: Repository, *, prefix: str = "") -> Iterator[Lock]:
        """Live write locks (explicit and uploads') on paths starting with `prefix`."""
        now = self.clock()
        start = prefix.encode()
        with self.store.scan(keys.locks_partition(repository.instance_uid), start) as scan:
            for key, raw in scan:
                if not key.startswith(start):
                    break
                lock = decode_lock(raw)
                if lock.live(now):
                    yield lock
        for path, lock in self._leased(repository, now).items():
            if path.startswith(prefix):
                yield lock

    def write_locked(self, repository: Repository, first: str, last: str) -> dict[str, Lock]:
        """Live write locks on paths in [first, last], by path: one range scan."""
        now = self.clock()
        end = keys.lock_range_end(last)
        found: dict[str, Lock] = {}
        partition = keys.locks_partition(repository.instance_uid)
        with self.store.scan(partition, first.encode()) as scan:
            for key, raw in scan:
                if key > end:
                    break
                lock = decode_lock(raw)
                if lock.live(now):
                    found.setdefault(keys.path_of_lock_key(key), lock)
        for path, lock in self._leased(repository, now).items():
            if first <= path <= last:
                found.setdefault(path, lock)
        return found

    def _leased(self, repository: Repository, now: float) -> dict[str, Lock]:
        """Uploads in flight in `repository`, by path: this process's from memory, every
        other process's from its live lease (one scan of a record per server process).
        Uploads of older kvlake servers are write-lock records, read with those."""
        found: dict[str, Lock] = {}
        own = self.leases
        published = [
            (lease.uploads, lease.expires)
            for lease in live_leases(self.store, now)
            if lease.holder != own.holder
        ]
        for uploads, expires in [(own.in_flight(), now + own.ttl), *published]:
            for upload in uploads:
                if upload.instance_uid == repository.instance_uid:
                    found.setdefault(upload.path, _upload_lock(upload, expires))
        return found

    def settle_uploads(self) -> None:
        """Wait until every other process's live upload lease was renewed twice since now
        (or expired): call it after writing a delete lock, before reading write locks.

        Such a lease then lists every upload of its process that read the delete locks
        before the delete lock was written and is still in flight (leases.py).

        Raises:
            UnavailableError: a lease neither renewed nor expired for two lease times
                (a process stalled with its clock behind?); nothing was deleted.
        """
        own = self.leases.holder
        waiting = {
            lease.holder: lease.seq + 2
            for lease in live_leases(self.store, self.clock())
            if lease.holder != own and not lease.fixed
        }
        deadline = time.monotonic() + 2 * self.upload_ttl
        while waiting:
            if time.monotonic() > deadline:
                raise UnavailableError(
                    f"upload leases of {len(waiting)} server process(es) were neither renewed"
                    f" nor expired for {2 * self.upload_ttl:.0f} s; the bulk delete retries"
                )
            self.sleep(self.upload_ttl / 40)
            now_live = {lease.holder: lease.seq for lease in live_leases(self.store, self.clock())}
            waiting = {
                holder: seq
                for holder, seq in waiting.items()
                if holder in now_live and now_live[holder] < seq
            }

    def refuse_locked(
        self, repository: Repository, path: str, *, owner: str, prefix: bool = False
    ) -> None:
        """Refuse a write of `path` (with `prefix`, of every path under it) that another
        owner's explicit write lock covers: deletes and resets, which stage no new blob
        and so need no lock of their own.

        Raises:
            LockedError: another owner holds a live write lock on the path (or under it).
        """
        now = self.clock()
        if not prefix:
            partition = keys.locks_partition(repository.instance_uid)
            current, _ = self._read(partition, keys.lock_key(path))
            if current is not None and current.live(now) and current.owner != owner:
                raise _held(path, current, now)
            return
        start = path.encode()
        partition = keys.locks_partition(repository.instance_uid)
        with self.store.scan(partition, start) as scan:
            for key, raw in scan:
                if not key.startswith(start):
                    return
                lock = decode_lock(raw)
                explicit = keys.UPLOAD_SEPARATOR not in key
                if explicit and lock.live(now) and lock.owner != owner:
                    raise _held(lock.path, lock, now)

    # -- uploads -----------------------------------------------------------------------

    def begin_upload(
        self, repository: Repository, branch: str, path: str, *, owner: str
    ) -> UploadLock:
        """Take a write's implicit lock on `path`, then check nothing forbids the write.

        Every staging write of a new blob takes it (kvlake/catalog/guard.py). The
        lock is registered in this process's upload lease (no KV write, but when the
        lease itself must be published) before the delete locks are read (see the
        module docstring); a refused write has released it again. Only a bulk
        delete on `branch` refuses it: one on another branch never touches this
        write's entry.

        Raises:
            LockedError: another owner's write lock, or a bulk delete on `branch`,
                covers the path.
        """
        upload = LeasedUpload(
            instance_uid=repository.instance_uid, branch=branch, path=path, owner=owner or "upload"
        )
        registration = self.leases.register(upload)
        now = self.clock()
        partition = keys.locks_partition(repository.instance_uid)
        held = UploadLock(repository, registration, _upload_lock(upload, now + self.upload_ttl))
        try:
            explicit, _ = self._read(partition, keys.lock_key(path))
            if explicit is not None and explicit.live(now) and explicit.owner != owner:
                raise _held(path, explicit, now)
            self._refuse_deleting(repository, path, now, branch=branch)
        except BaseException:
            self.end_upload(held)
            raise
        return held

    def end_upload(self, held: UploadLock) -> None:
        """Release an upload's lock: it leaves this process's lease (no KV write)."""
        self.leases.unregister(held.registration)

    def held_through(self, held: UploadLock) -> bool:
        """Whether every bulk delete that read the write locks since the upload began saw
        it: its process's lease stayed live without a gap (leases.py)."""
        return self.leases.held_through(held.registration)

    def refuse_import(
        self, repository: Repository, branch: str, destination: str, *, owner: str, prefix: bool
    ) -> None:
        """Refuse an import that replaces `destination` on `branch` (with `prefix`, every
        path under it) while another owner's explicit write lock lies there, or a bulk
        delete on `branch` covers any of it (its prefix holds the destination, or lies
        inside it). Imports stage no blob of the namespace, so they take no lock of
        their own; they check right before they publish (kvlake/catalog/imports.py).

        Raises:
            LockedError: such a lock is live; the message names it and what to do.
        """
        self.refuse_locked(repository, destination, owner=owner, prefix=prefix)
        self._refuse_deleting(repository, destination, self.clock(), branch=branch, whole=prefix)

    def deleting(
        self,
        repository: Repository,
        path: str,
        now: float | None = None,
        *,
        branch: str | None = None,
        whole: bool = False,
    ) -> Lock | None:
        """The live delete lock of a bulk delete whose prefix covers `path`, if any.

        With a `branch`, only a bulk delete on that branch counts (a lock naming
        no branch, written before locks named one, counts on every branch);
        without, one on any branch does. With `whole`, `path` is a prefix written
        whole, so a bulk delete of any prefix inside it counts too.
        """
        at = self.clock() if now is None else now
        partition = keys.delete_locks_partition(repository.instance_uid)
        with self.store.scan(partition) as scan:
            for _, raw in scan:
                lock = decode_lock(raw)
                covers = path.startswith(lock.path) or (whole and lock.path.startswith(path))
                if not (lock.live(at) and covers):
                    continue
                if branch is None or lock.branch in ("", branch):
                    return lock
        return None

    def _refuse_deleting(
        self,
        repository: Repository,
        path: str,
        now: float,
        *,
        branch: str | None = None,
        whole: bool = False,
    ) -> None:
        lock = self.deleting(repository, path, now, branch=branch, whole=whole)
        if lock is not None:
            on = f" on branch {lock.branch!r}" if lock.branch else ""
            raise LockedError(
                f"path {path!r} is being deleted by bulk delete operation {lock.operation_id}"
                f" (prefix {lock.path!r}{on}); wait for it to finish (`kvlake operations status"
                f" {lock.operation_id}`, or GET /api/v1/operations/bulk-delete/status/"
                f"{lock.operation_id}) or cancel it (`kvlake operations cancel`)"
            )

    # -- bulk deletes' delete locks ---------------------------------------------------

    def take_delete_lock(
        self, repository: Repository, operation_id: str, branch: str, prefix: str, expires: float
    ) -> None:
        """Take or renew the delete lock of an operation (its key: a retry takes it over),
        then wait until other processes' leases list every upload that missed it."""
        self.store.set(
            keys.delete_locks_partition(repository.instance_uid),
            keys.operation_key(operation_id),
            encode(_delete_lock(operation_id, branch, prefix, expires)),
        )
        self.settle_uploads()

    def renew_delete_lock(
        self, repository: Repository, operation_id: str, branch: str, prefix: str, expires: float
    ) -> float:
        """Renew a delete lock that is still there (never re-create a released one) to at
        least `expires`; the expiry it has now.

        Renewals only ever move the expiry later, so a caller that renewed it to
        `e` knows it stayed live until `e`: past that, writes under the prefix may
        have been accepted, and it must read the write locks again before a blind
        tombstone write (a writer that checked the delete locks meanwhile holds its
        own write lock until its entry is staged, so that read sees it).

        Raises:
            PreconditionFailedError: the lock was released (the operation finished, or
                was cancelled, elsewhere): stop the batch, nothing was written.
            TooManyTriesError: other tasks kept renewing it first (a
                PreconditionFailedError too: the batch stops and is retried).
        """

        lapsed = False

        def renew(raw: bytes | None) -> bytes:
            # Run again on what another task wrote when it renewed first.
            nonlocal lapsed
            if raw is None:
                raise PreconditionFailedError(
                    f"bulk delete operation {operation_id} holds no delete lock any more (it"
                    " finished or was cancelled elsewhere); this batch stops, nothing deleted"
                )
            current = decode_lock(raw).expires
            lapsed = not self.clock() < current
            return encode(_delete_lock(operation_id, branch, prefix, max(expires, current)))

        partition = keys.delete_locks_partition(repository.instance_uid)
        key = keys.operation_key(operation_id)
        what = f"renewing the delete lock of bulk delete operation {operation_id}"
        renewed = decode_lock(update(self.store, partition, key, renew, what=what)).expires
        if lapsed:
            # Uploads that read the delete locks while it had lapsed passed it: wait until
            # their processes' leases list them, as after taking it.
            self.settle_uploads()
        return renewed

    def release_delete_lock(self, instance_uid: str, operation_id: str) -> None:
        self.store.delete(
            keys.delete_locks_partition(instance_uid), keys.operation_key(operation_id)
        )

    def _read(self, partition: bytes, key: bytes) -> tuple[Lock | None, Predicate | None]:
        loaded = get_or_none(self.store, partition, key)
        return (None, None) if loaded is None else (decode_lock(loaded[0]), loaded[1])


def _delete_lock(operation_id: str, branch: str, prefix: str, expires: float) -> Lock:
    return Lock(
        kind="delete",
        owner=operation_id,
        expires=expires,
        path=prefix,
        operation_id=operation_id,
        branch=branch,
    )


def _upload_lock(upload: LeasedUpload, expires: float) -> Lock:
    """An upload in flight as the write lock a bulk delete skips and a listing shows."""
    return Lock(kind="write", owner=upload.owner, expires=expires, path=upload.path)


def _held(path: str, lock: Lock, now: float) -> LockedError:
    left = max(0.0, lock.expires - now)
    return LockedError(
        f"path {path!r} is locked by {lock.owner_name!r} for about {left:.0f} s more; wait for its"
        " release or expiry"
    )
