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

import contextlib
import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import BinaryIO, Final

import msgspec

from kvlake.blockstore import READ_CHUNK, BlockStore, parse_address
from kvlake.catalog.direct import PhysicalLinks
from kvlake.catalog.guard import GuardedWrite, StagingGuard
from kvlake.catalog.imports import Importer
from kvlake.catalog.links import Links, new_address
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
from kvlake.config import Settings
from kvlake.deletion import DeletionLog, EntryRef, PendingDelete
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
    TOKEN_DROP_DELAY,
    Graveler,
    Repository,
    Value,
    check_branch_name,
    check_path,
)
from kvlake.operations import Ledger, ObjectInfo, ObjectLocks

log = logging.getLogger(__name__)

MAX_DELETE_MANY = 1000
MAX_DATA_HOURS: Final = 20 * 366 * 24
"""Hours `data_prefixes` spans at most (20 years): a list of them is still small."""
DEFAULT_CONTENT_TYPE = "application/octet-stream"
UPLOAD_SECONDS: Final = 24 * 3600
"""How long an upload's body may stream before its intent record may delete the blob: as
long as a direct upload's address may be linked (direct.LINK_SECONDS)."""
_TOKEN_REUSE: Final = TOKEN_DROP_DELAY / 6
"""Seconds an upload may stage into the token its pre-check read (10 s): a token stays
readable TOKEN_DROP_DELAY after a branch stops referencing it, and the writer flow's
re-read moves the write to the new token, so no write lands in a dropped partition."""


def entry_ref(value: Value) -> EntryRef:
    """The blob a staged or committed value references, and its mtime, for the deletion log.

    A value that is not a catalog entry references no blob: its address is "".
    """
    try:
        stat = from_value("", value)
    except ValueError:  # msgspec decode errors: written by something other than the catalog
        return EntryRef("", 0.0)
    if is_external(stat.address):
        return EntryRef("", stat.mtime, stat.address)  # imported: never kvlake's to delete
    return EntryRef(stat.address, stat.mtime)


def blob_key_in(namespace: str, value: Value) -> str:
    """The key in `namespace` of the blob a staged or committed value references, for
    garbage collection's marks; "" when it references none there.

    Unlike `entry_ref`, an imported (full URL) address that lies inside the namespace in
    its canonical form (`s3:///lake/repo1/data/x` in `s3://lake/repo1`) counts: imports
    made before sources were compared canonically could point at the repository's own
    blobs that way, and garbage collection must not delete what they still read.
    """
    try:
        stat = from_value("", value)
    except ValueError:  # msgspec decode errors: written by something other than the catalog
        return ""
    if not is_external(stat.address):
        return stat.address
    try:
        return parse_address(stat.address).key_in(parse_address(namespace))
    except InvalidInputError:
        return ""  # elsewhere: not this namespace's blob


def describe_entry(value: Value) -> ObjectInfo:
    """A value's blob address, size, mtime and user metadata, for bulk deletes' filters and
    purges.

    A value that is not a catalog entry references no blob: address "", its data's size.
    """
    try:
        stat = from_value("", value)
    except ValueError:
        return ObjectInfo("", len(value.data), 0.0)
    return ObjectInfo(stat.address, stat.size, stat.mtime, stat.metadata)


class _HashingReader:
    """Passes a stream through while counting its bytes and computing its MD5."""

    def __init__(self, source: BinaryIO) -> None:
        self._source = source
        self.md5 = hashlib.md5()
        self.size = 0

    def read(self, size: int = -1) -> bytes:
        data = self._source.read(size if size and size > 0 else READ_CHUNK)
        self.md5.update(data)
        self.size += len(data)
        return data


def _hour_prefix(moment: float) -> str:
    return time.strftime("data/%Y%m%dT%H/", time.gmtime(moment))


def data_prefixes(since: float, until: float) -> list[str]:
    """The prefixes of the object addresses made in [since, until): one per hour, ascending.

    A garbage collector lists a namespace's objects by these time slices, several
    at once (`BlockStore.list_blobs(namespace, data_prefixes(a, b), parallel=8)`),
    and may skip the hours it has no business with (the last one, still written).
    Addresses are the catalog's clock's hours (UTC), uploads, copies and direct
    uploads alike; other blobs of a namespace (`_lakefs/` ranges) are not under them.

    Raises:
        InvalidInputError: `since` after `until`, or a span over MAX_DATA_HOURS.
    """
    if since > until or until - since > MAX_DATA_HOURS * 3600:
        raise InvalidInputError(
            f"time slice [{since}, {until}) is invalid; since must not be after until, and"
            f" the span at most {MAX_DATA_HOURS} hours"
        )
    if since == until:
        return []
    first = int(since // 3600)
    last = -int(-until // 3600)  # the hour holding `until` only if until is past its start
    return [_hour_prefix(hour * 3600) for hour in range(first, last)]


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
    ) -> ObjectStat:
        """Store the body and stage it at `path`; the body is streamed, never held whole.

        While it streams, the upload holds an implicit write lock on the path (as
        `owner`), so a bulk delete skips the path rather than racing it.
        `checksums`, called once the body is stored, gives the entry's S3 checksums
        (the gateway's: a streamed body's trailer carries them after its last byte).

        Raises:
            PreconditionFailedError: `if_absent` and an object exists at the path.
            LockedError: another owner's write lock or a running bulk delete covers it.
        """
        check_branch_name(branch)
        key = check_path(path)
        token = self.graveler.get_branch(repository, branch).staging_token  # fail before any byte
        if if_absent:
            self._refuse_existing(repository, branch, path)
        with self.guard.writing(repository, branch, path, owner=owner) as write:
            return self._upload(
                write,
                key,
                token,
                data,
                content_type,
                metadata,
                if_absent=if_absent,
                checksums=checksums,
            )

    def _upload(
        self,
        write: GuardedWrite,
        key: bytes,
        token: str,
        data: BinaryIO,
        content_type: str | None,
        metadata: dict[str, str] | None,
        *,
        if_absent: bool,
        checksums: Callable[[], dict[str, str]] | None = None,
    ) -> ObjectStat:
        repository = write.repository
        now = self._clock()
        address = new_address(now)
        intent = self._log_intent(repository, address, token, key, now)
        reader = _HashingReader(data)
        self.blockstore.put(repository.storage_namespace, address, reader)  # type: ignore[arg-type]
        if intent is not None:
            self._withdraw_intent(repository, address, intent)
        entry = ObjectEntry(
            address=address,
            size=reader.size,
            checksum=reader.md5.hexdigest(),
            mtime=now,
            content_type=content_type or DEFAULT_CONTENT_TYPE,
            metadata=dict(metadata or {}),
            checksums=checksums() if checksums is not None else {},
        )
        tried: list[str] = []
        try:
            fresh = self._clock() - now < _TOKEN_REUSE  # else re-read: the token may be gone
            write.stage(
                key,
                to_value(entry),
                if_absent=if_absent,
                token=token if fresh else "",
                attempted=tried,
            )
        except BaseException:
            self._abandon(repository, key, address, now, tried)
            raise
        return from_value(write.path, to_value(entry))

    def _log_intent(
        self, repository: Repository, address: str, token: str, key: bytes, now: float
    ) -> PendingDelete | None:
        """Log the new blob before any byte of it is stored (invariant 4), as a direct
        upload's hand-out does: a process killed while the body streams, or before the
        entry is staged, leaves a blob this record deletes once due, not an orphan only
        garbage collection finds. Due after UPLOAD_SECONDS plus the send delay, so no
        worker looks at it while the body may still stream. None without a deletion log.

        Raises:
            UnavailableError: the record could not be written (nothing was stored).
        """
        if self._deletion is None or not self._deletion.enabled:
            return None
        record = self._deletion.new_record(
            repository,
            address,
            "abandoned_upload",
            staging_token=token,
            path=key,
            since=now,
            due=now + UPLOAD_SECONDS + self._deletion.settings.send_delay,
        )
        self._deletion.append([record])
        return record

    def _withdraw_intent(self, repository: Repository, address: str, intent: PendingDelete) -> None:
        """Withdraw the upload's intent just before staging; from then on the staged entry
        is the writer flow's (a failed staging logs its own record, `_abandon`).

        Withdrawn before staging, not after: the writer flow may stage into a newer token
        than the intent names, and a record naming the old token could then delete a
        blob a commit of the new one holds. A crash between the two calls orphans the
        blob for garbage collection, never deletes a referenced one.

        Raises:
            PreconditionFailedError: the body streamed so long that a worker took the
                intent (and may have deleted the blob): nothing is staged; upload again.
        """
        assert self._deletion is not None
        try:
            withdrawn = self._deletion.withdraw(intent)
        except BaseException:
            # The record may be gone although the call failed: nothing is staged, so the
            # blob is nobody's; delete it now (if that fails too, the record, if still
            # there, deletes it when due).
            with contextlib.suppress(KvlakeError):
                self.blockstore.delete(repository.storage_namespace, address)
            raise
        if not withdrawn:
            self.blockstore.delete(repository.storage_namespace, address)
            raise PreconditionFailedError(
                f"the upload's body took longer than {UPLOAD_SECONDS // 3600} h to arrive and"
                " its blob was handed to the deletion log; nothing was staged, upload again"
            )

    def _abandon(
        self, repository: Repository, key: bytes, address: str, now: float, tried: list[str]
    ) -> None:
        """Dispose of an upload's blob after staging it failed."""
        if not tried:
            # No staging write was attempted: nothing references the address.
            self.blockstore.delete(repository.storage_namespace, address)
            return
        # A write whose acknowledgement failed may still have landed: only the
        # deletion log's in-use check may decide. Without it, leak rather than lose.
        if self._deletion is None or not self._deletion.enabled:
            log.warning(
                "upload to %s left blob %s for garbage collection", repository.name, address
            )
            return
        record = self._deletion.new_record(
            repository, address, "abandoned_upload", staging_token=tried[-1], path=key, since=now
        )
        try:
            self._deletion.append([record])
        except KvlakeError as exc:  # the caller sees the first error; this one is logged
            log.warning("upload to %s left blob %s unlogged: %s", repository.name, address, exc)

    def _refuse_existing(self, repository: Repository, branch: str, path: str) -> None:
        try:
            self.stat(repository, branch, path)
        except EntryNotFoundError:
            return
        raise PreconditionFailedError(
            f"object {path!r} already exists on branch {branch!r}; "
            "drop If-None-Match to overwrite it"
        )

    def stat(self, repository: Repository, ref: str, path: str) -> ObjectStat:
        """The object's metadata. Raises EntryNotFoundError."""
        return from_value(path, self.graveler.get(repository, ref, check_path(path)))

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
    ) -> ListingPage:
        """A page of objects (and common prefixes, with a delimiter) after `after`."""
        if not 0 <= amount <= MAX_AMOUNT:
            raise InvalidInputError(f"amount {amount} is out of range; use 0 to {MAX_AMOUNT}")
        # Resolved once: an unknown ref is an error, not an empty page, and a page that
        # jumps past common prefixes reads one branch state, not one per jump.
        resolved = self.graveler.resolve_ref(repository, ref)
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
            self._abandon(repository, key, address, now, tried)
            raise
        return from_value(write.path, to_value(entry))


def _changed(path: str, ref: str) -> PreconditionFailedError:
    return PreconditionFailedError(
        f"object {path!r} on {ref!r} changed while being copied; retry the copy"
    )
