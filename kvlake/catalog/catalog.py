"""The catalog: objects at paths on refs, their bytes in the blockstore.

Uploads stream the body into a new, never-reused address under the
repository's storage namespace (`data/<hour>/<uid>`), hashing it on the way, and
only then stage the entry that references it: a reader can never see an entry
whose bytes are missing. Every call takes the repository record its caller read
for the request from `Graveler.get_repository` (invariant 1), so a request reads
it once.

No blob is orphaned by a write (invariant 4): an upload logs its new blob's
intent before storing a byte and withdraws it just before staging (so a
process killed meanwhile leaves a blob the deletion log collects), and every staging write goes
through graveler's writer flow (`Graveler.set` and `delete`), which replaces
the staged value by compare-and-swap after its `StagingHooks` logged the blob
it replaces (kvlake/deletion's `StagingLogHooks`, wired by `kvlake.lake.Lake`),
so a racing writer's entry is never replaced unlogged. Only in-place
replacement is logged: an entry shadowed in a sealed token or a commit stays
referenced there (the cleaner logs dropped tokens; committed data is garbage
collection's). A copy marks its address shared before staging it, so no
staging record ever deletes a blob two paths hold. `If-None-Match: *` is the
writer flow's `if_absent`: a compare-and-swap on the path's absence.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import BinaryIO

import msgspec

from kvlake.blockstore import BlockStore
from kvlake.catalog.direct import PhysicalLinks
from kvlake.catalog.guard import GuardedWrite, StagingGuard
from kvlake.catalog.imports import Importer
from kvlake.catalog.layout import new_address
from kvlake.catalog.links import Links
from kvlake.catalog.listing import MAX_AMOUNT, list_page
from kvlake.catalog.records import (
    ListingPage,
    ObjectEntry,
    ObjectStat,
    blob_location,
    decode_entry,
    from_value,
    is_external,
    to_value,
)
from kvlake.catalog.symlinks import write_symlinks
from kvlake.catalog.uploads import Uploads
from kvlake.config import Settings
from kvlake.deletion import DeletionLog
from kvlake.errors import (
    BlobNotFoundError,
    ConfigError,
    EntryNotFoundError,
    InvalidInputError,
    KvlakeError,
    ObjectGoneError,
    PreconditionFailedError,
)
from kvlake.graveler import (
    BranchRead,
    Graveler,
    Repository,
    Value,
    check_branch_name,
    check_path,
)
from kvlake.operations import Ledger, ObjectLocks

MAX_DELETE_MANY = 1000


class Catalog:
    """Object operations over graveler and a blockstore. Thread-safe; no in-process state."""

    def __init__(
        self,
        graveler: Graveler,
        blockstore: BlockStore,
        *,
        clock: Callable[[], float] = time.time,
        deletion: DeletionLog | None = None,
        locks: ObjectLocks | None = None,
        settings: Settings | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        if deletion is not None and graveler.staging_hooks is None:
            raise ConfigError(
                "the catalog has a deletion log but its graveler has no staging hooks, so"
                " replaced blobs would go unlogged; build the graveler with"
                " staging_hooks=StagingLogHooks(log, entry_ref), as kvlake.lake.Lake does"
            )
        self.graveler = graveler
        self.blockstore = blockstore
        self.guard = StagingGuard(graveler, locks, clock=clock)
        """The write lock every staging write of a new blob takes (kvlake/catalog/guard.py)."""
        self.links = Links(graveler, blockstore, self.guard, clock=clock, deletion=deletion)
        """Entries over blobs already in the namespace (stageObject, linkPhysicalAddress)."""
        self._clock = clock
        self._deletion = deletion
        self._uploads = Uploads(blockstore, clock=clock, deletion=deletion)
        self._locks = locks
        self.imports = Importer(
            graveler, blockstore, clock=clock, settings=settings, locks=locks, ledger=ledger
        )
        """Zero-copy imports of external locations (importStart, importStatus, importCancel)."""

    def direct_uploads(self, key: bytes) -> PhysicalLinks:
        """Direct uploads (getPhysicalAddress, linkPhysicalAddress), addresses signed with `key`.

        The key is the API's (`link_key` of the server's master key): every process
        that links an address must share the key of the one that handed it out.
        """
        return PhysicalLinks(
            self.graveler,
            self.blockstore,
            self.guard,
            key=key,
            new_address=new_address,
            clock=self._clock,
            deletion=self._deletion,
        )

    def upload(
        self,
        repository: Repository,
        branch: str,
        path: str,
        data: BinaryIO,
        *,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        if_absent: bool = False,
        owner: str = "",
        checksums: Callable[[], dict[str, str]] | None = None,
        read: BranchRead | None = None,
    ) -> ObjectStat:
        """Store the body and stage it at `path`; the body is streamed, never held whole.

        While it streams, the upload holds an implicit write lock on the path (as
        `owner`), so a bulk delete skips the path rather than racing it.
        `checksums`, called once the body is stored, gives the entry's S3 checksums
        (the gateway's: a streamed body's trailer carries them after its last byte).
        `read` is this request's `Graveler.read_branch` of `branch`: its staging token
        and protection rules are used instead of reading them again.

        Raises:
            PreconditionFailedError: `if_absent` and an object exists at the path.
            LockedError: another owner's write lock or a running bulk delete covers it.
        """
        check_branch_name(branch)
        key = check_path(path)
        known = read.branch if read is not None and read.name == branch else None
        # Fail before any byte: a missing branch raises here.
        token = (known or self.graveler.get_branch(repository, branch)).staging_token
        protection = read.protection if known is not None and read is not None else None
        if if_absent:
            self._refuse_existing(repository, branch, path)
        with self.guard.writing(repository, branch, path, owner=owner) as write:
            return self._uploads.store(
                write,
                key,
                token,
                data,
                content_type,
                metadata,
                if_absent=if_absent,
                checksums=checksums,
                protection=protection,
            )

    def _refuse_existing(self, repository: Repository, branch: str, path: str) -> None:
        try:
            self.stat(repository, branch, path)
        except EntryNotFoundError:
            return
        raise PreconditionFailedError(
            f"object {path!r} already exists on branch {branch!r}; "
            "drop If-None-Match to overwrite it"
        )

    def stat(
        self, repository: Repository, ref: str, path: str, *, read: BranchRead | None = None
    ) -> ObjectStat:
        """The object's metadata (`read`: this request's `Graveler.read_branch`).

        Raises EntryNotFoundError.
        """
        return from_value(path, self.graveler.get(repository, ref, check_path(path), read=read))

    def open_object(
        self,
        repository: Repository,
        ref: str,
        path: str,
        *,
        start: int = 0,
        end: int | None = None,
    ) -> tuple[ObjectStat, BinaryIO]:
        """The object's metadata and a reader of bytes [start, end). Close the reader."""
        stat = self.stat(repository, ref, path)
        namespace, key = blob_location(repository.storage_namespace, stat.address)
        try:
            reader = self.blockstore.open_reader(
                namespace, key, start=start, end=end, if_match=stat.blob_etag
            )
        except BlobNotFoundError as exc:
            # The entry is there and its blob is not: garbage collection deleted it (the
            # commits that kept it expired), which lakeFS answers 410 Gone, not 404.
            raise ObjectGoneError(
                f"object {path!r} at {ref!r} has no data any more: garbage collection deleted"
                " its blob once the commits that kept it expired; read a newer commit"
            ) from exc
        return stat, reader

    def list_objects(
        self,
        repository: Repository,
        ref: str,
        *,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        amount: int = MAX_AMOUNT,
        read: BranchRead | None = None,
    ) -> ListingPage:
        """A page of objects (and common prefixes, with a delimiter) after `after`
        (`read`: this request's `Graveler.read_branch`, saving the branch's read)."""
        if not 0 <= amount <= MAX_AMOUNT:
            raise InvalidInputError(f"amount {amount} is out of range; use 0 to {MAX_AMOUNT}")
        # Resolved once: an unknown ref is an error, not an empty page, and a page that
        # jumps past common prefixes reads one branch state, not one per jump.
        resolved = self.graveler.resolve_ref(repository, ref, read=read)
        return list_page(
            lambda start: self.graveler.list(repository, resolved, start=start),
            prefix=prefix,
            delimiter=delimiter,
            after=after,
            amount=amount,
        )

    def delete_object(
        self, repository: Repository, branch: str, path: str, *, owner: str = ""
    ) -> None:
        """Stage the object's deletion, as `owner`.

        Raises:
            EntryNotFoundError: there is no object at the path.
            LockedError: another owner's write lock covers the path.
        """
        self.stat(repository, branch, path)
        self._refuse_locked(repository, path, owner=owner)
        self.graveler.delete(repository, branch, check_path(path))

    def reset_object(
        self, repository: Repository, branch: str, path: str, *, prefix: bool, owner: str = ""
    ) -> None:
        """Drop the staged changes of `path` (with `prefix`, of every path under it), as
        `owner`.

        Raises:
            LockedError: another owner's write lock covers the path (or one under it).
        """
        self._refuse_locked(repository, path, owner=owner, prefix=prefix)
        if prefix:
            self.graveler.resets.reset_prefix(repository, branch, path.encode())
        else:
            self.graveler.resets.reset_key(repository, branch, check_path(path))

    def _refuse_locked(
        self, repository: Repository, path: str, *, owner: str, prefix: bool = False
    ) -> None:
        """A write lock covers every write of its path: deletes and resets too."""
        if self._locks is not None:
            self._locks.refuse_locked(repository, path, owner=owner, prefix=prefix)

    def delete_objects(
        self, repository: Repository, branch: str, paths: Sequence[str], *, owner: str = ""
    ) -> list[tuple[str, KvlakeError]]:
        """Stage the deletion of up to 1000 paths; missing ones are skipped, failures listed."""
        if len(paths) > MAX_DELETE_MANY:
            raise InvalidInputError(
                f"{len(paths)} paths given; delete at most {MAX_DELETE_MANY} per call"
            )
        check_branch_name(branch)
        keys_ = [check_path(path) for path in paths]  # validate all before changing any
        failures: list[tuple[str, KvlakeError]] = []
        for path, key in zip(paths, keys_, strict=True):
            try:
                self._refuse_locked(repository, path, owner=owner)
                self.graveler.delete(repository, branch, key)
            except KvlakeError as exc:
                failures.append((path, exc))
        return failures

    def update_metadata(
        self, repository: Repository, branch: str, path: str, metadata: dict[str, str]
    ) -> None:
        """Replace the object's user metadata (all of it) on the branch, as lakeFS's
        updateObjectUserMetadata does: a new staged entry with the same address, size,
        checksum and mtime, over the staged or committed one.

        The address stays referenced, so nothing is logged for deletion: the writer
        flow's hook logs only a replaced entry whose address differs, and an entry
        taken from a commit or a sealed token has its address marked shared first
        (graveler's `before_restage`), so replacing the new entry later cannot delete
        the committed blob.

        Raises:
            EntryNotFoundError: no object at the path on the branch.
            ProtectedBranchError: the branch is protected against writes.
        """
        check_branch_name(branch)
        key = check_path(path)

        def change(value: Value) -> Value:
            entry = decode_entry(value)
            return to_value(msgspec.structs.replace(entry, metadata=dict(metadata)))

        self.graveler.update(repository, branch, key, change)

    def write_symlinks(self, repository: Repository, ref: str, prefix: str) -> str:
        """Write the Hive symlink files of `ref`'s folders under `prefix` (see `symlinks`)."""
        return write_symlinks(self.graveler, self.blockstore, repository, ref, prefix)

    def copy_object(
        self,
        repository: Repository,
        source_ref: str,
        source_path: str,
        branch: str,
        path: str,
        *,
        shallow: bool = True,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        owner: str = "",
        check_source: Callable[[ObjectStat], None] | None = None,
    ) -> ObjectStat:
        """Stage `path` on `branch` as a copy of the source: same bytes, metadata and checksum.

        `content_type` and `metadata`, when given, replace the source's on the copy (S3's
        metadata directive REPLACE); the bytes and checksum stay the source's.

        Shallow (the default here), the copy shares the source's blob, which is then
        marked shared: only garbage collection may delete it. Otherwise (lakeFS's
        default copy) the blob is copied to a new address, inside the store where it
        can (`BlockStore.copy`: S3 CopyObject), and the copy is an upload like any
        other, whose blob the deletion log may delete when it is replaced.

        Either way it is a write of `path` (as `owner`): it holds the path's write lock
        (kvlake/catalog/guard.py), so it is refused under another owner's lock or a
        bulk delete on `branch`.

        `check_source`, when given, sees the source entry before anything is
        written and may raise to refuse the copy (S3's `x-amz-copy-source-if-*`):
        it judges the very entry copied, so a change in between cannot slip past it.

        Raises:
            EntryNotFoundError: no source object.
            PreconditionFailedError: the source changed while being copied.
            LockedError: another owner's write lock or a running bulk delete covers `path`.
        """
        check_branch_name(branch)
        source = self.stat(repository, source_ref, source_path)
        if check_source is not None:
            check_source(source)  # the very entry copied: no change slips past
        check_path(path)
        if content_type is not None or metadata is not None:
            source = msgspec.structs.replace(
                source,
                content_type=source.content_type if content_type is None else content_type,
                metadata=source.metadata if metadata is None else dict(metadata),
            )
        with self.guard.writing(repository, branch, path, owner=owner) as write:
            if not shallow and not is_external(source.address):
                return self._copy_blob(write, source)
            return self._share_blob(write, source, source_ref)

    def _share_blob(self, write: GuardedWrite, source: ObjectStat, source_ref: str) -> ObjectStat:
        """A shallow copy: a second entry over the source's blob, marked shared first."""
        repository, key = write.repository, write.path.encode()
        # An imported object is shared as it is: kvlake never deletes it, so no mark.
        if self._deletion is not None and not is_external(source.address):
            # Marked even with deletion disabled, so enabling it later stays safe.
            # Mark, then re-read the source: a worker that missed our entry reads
            # the mark, and one that deleted the blob first made the re-read differ.
            self._deletion.mark_shared(repository.instance_uid, source.address)
            again = self.stat(repository, source_ref, source.path)
            if again.address != source.address:
                raise _changed(source.path, source_ref)
        entry = ObjectEntry(
            address=source.address,
            size=source.size,
            checksum=source.checksum,
            mtime=self._clock(),
            content_type=source.content_type,
            metadata=source.metadata,
            blob_etag=source.blob_etag,  # the same blob, so the same check on reads
            checksums=source.checksums,
        )
        value = to_value(entry)
        write.stage(key, value)
        return from_value(write.path, value)

    def _copy_blob(self, write: GuardedWrite, source: ObjectStat) -> ObjectStat:
        """A deep copy: the bytes to a fresh address, then staged as an upload is."""
        repository, key = write.repository, write.path.encode()
        self.graveler.get_branch(repository, write.branch)  # fail before copying any byte
        now = self._clock()
        address = new_address(now)
        try:
            # A linked source's recorded ETag: bytes replaced since its link are refused.
            size = self.blockstore.copy(
                repository.storage_namespace, source.address, address, if_match=source.blob_etag
            )
        except BlobNotFoundError:
            # The source was replaced and its blob deleted after we read its entry.
            raise _changed(source.path, "its ref") from None
        entry = ObjectEntry(
            address=address,
            size=size,
            checksum=source.checksum,
            mtime=now,
            content_type=source.content_type,
            metadata=source.metadata,
            checksums=source.checksums,  # the same bytes
        )
        tried: list[str] = []
        try:
            write.stage(key, to_value(entry), attempted=tried)
        except BaseException:
            self._uploads.abandon(repository, key, address, now, tried)
            raise
        return from_value(write.path, to_value(entry))


def _changed(path: str, ref: str) -> PreconditionFailedError:
    return PreconditionFailedError(
        f"object {path!r} on {ref!r} changed while being copied; retry the copy"
    )
