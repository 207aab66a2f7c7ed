"""Direct uploads: an address handed out to a client, linked to a path once its bytes are there.

lakeFS's getPhysicalAddress and linkPhysicalAddress: the client asks for a fresh
address, writes the blob itself (to a presigned PUT URL, or with its own
credentials), then links the address to a path, which stages the entry. Two
rules protect the blobs:

- Only an address kvlake handed out for this repository instance, branch and
  path, less than `LINK_SECONDS` ago, can be linked. The address carries its
  issue time and an HMAC of all of them (a ticket), as lakeFS's does; without
  it a client could link the blob of another entry, which would then have a
  second reference the deletion log knows nothing of.
- An address handed out but never linked is collected (invariant 4: the intent
  is durable before the reference can exist). Handing it out appends an
  `unlinked_upload` record, due when the ticket has expired plus the send
  delay; linking withdraws it before staging, and from then on the staged entry
  is the writer flow's, like any upload's. A link that finds no record to
  withdraw (a second link of the address, or one handed out with deletion
  disabled) may be a second reference to a committed blob, so it marks the
  address shared: garbage collection decides, never the log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO, NamedTuple

from kvlake.blockstore import BlockStore, UploadedPart, check_key
from kvlake.catalog.guard import StagingGuard
from kvlake.catalog.records import ObjectEntry, ObjectStat, from_value, to_value
from kvlake.catalog.tickets import LINK_SECONDS, Tickets, uid_of
from kvlake.deletion import DeletionLog, PendingDelete
from kvlake.errors import (
    BlobNotFoundError,
    InvalidInputError,
    KvlakeError,
)
from kvlake.graveler import (
    Graveler,
    MultipartUpload,
    Repository,
    check_branch_name,
    check_path,
)

log = logging.getLogger(__name__)


class UploadTarget(NamedTuple):
    """A multipart upload to a handed-out address: the path on the branch it is for (its
    ticket), the address, and the store's upload id."""

    repository: Repository
    branch: str
    path: str
    address: str
    upload_id: str


class PhysicalLinks:
    """Hands out link addresses and links them. Thread-safe; no in-process state."""

    def __init__(
        self,
        graveler: Graveler,
        blockstore: BlockStore,
        guard: StagingGuard,
        *,
        key: bytes,
        new_address: Callable[[float], str],
        clock: Callable[[], float] = time.time,
        deletion: DeletionLog | None = None,
    ) -> None:
        self._tickets = Tickets(key, clock)  # first: a short key is refused before anything
        self._graveler = graveler
        self._blockstore = blockstore
        self._guard = guard
        self._new_address = new_address
        self._clock = clock
        self._deletion = deletion

    def issue(self, repository: Repository, branch: str, path: str) -> tuple[str, float]:
        """A fresh address under the namespace for `path` on `branch`, and when it expires.

        Raises:
            BranchNotFoundError: no such branch.
            InvalidInputError: a bad branch name or path.
            UnavailableError: the intent could not be logged; nothing was handed out.
        """
        check_branch_name(branch)
        key = check_path(path)
        token = self._graveler.get_branch(repository, branch).staging_token
        now = self._clock()
        address = self._tickets.sign(repository, branch, path, self._new_address(now), now)
        if self._deletion is not None and self._deletion.enabled:
            record = self._record(
                self._deletion, repository, address, now, staging_token=token, path=key
            )
            self._deletion.append([record])
        return address, now + LINK_SECONDS

    def link(
        self,
        repository: Repository,
        branch: str,
        path: str,
        address: str,
        *,
        size: int,
        checksum: str,
        content_type: str,
        metadata: dict[str, str],
        if_absent: bool = False,
        owner: str = "",
        checksums: dict[str, str] | None = None,
    ) -> ObjectStat:
        """Stage `path` on `branch` as the blob at `address`, which `issue` handed out.

        A write of `path` (as `owner`) like any other: it holds the path's write lock
        (kvlake/catalog/guard.py) before the hand-out record is withdrawn, so a
        refused link leaves the blob to that record.

        Raises:
            LockedError: another owner's write lock or a running bulk delete covers the
                path (nothing staged or withdrawn).
            InvalidInputError: the address was not handed out for this path, has
                expired, holds no blob, or holds another size than `size`.
            PreconditionFailedError: `if_absent` and an object exists at the path
                (the writer flow's compare-and-swap on its absence).
        """
        check_branch_name(branch)
        key = check_path(path)
        issued = self._verify(repository, branch, path, address)
        namespace = repository.storage_namespace
        try:
            stored = self._blockstore.head(namespace, check_key(address))
        except BlobNotFoundError:
            raise InvalidInputError(
                f"nothing was uploaded to {namespace}/{address}; upload the object's bytes"
                " there (or to its presigned URL) before linking it"
            ) from None
        if stored.size != size:
            raise InvalidInputError(
                f"size_bytes is {size} but {namespace}/{address} holds {stored.size} bytes;"
                " send the size of what was uploaded"
            )
        entry = ObjectEntry(
            address=address,
            size=size,
            checksum=checksum,
            mtime=self._clock(),
            content_type=content_type,
            metadata=metadata,
            blob_etag=stored.etag,  # the client's URL may still write: reads check this
            checksums=dict(checksums or {}),
        )
        with self._guard.writing(repository, branch, path, owner=owner) as write:
            withdrawn = self._withdraw(repository, address, issued)
            tried: list[str] = []
            try:
                write.stage(key, to_value(entry), if_absent=if_absent, attempted=tried)
            except BaseException:
                self._unlinked(
                    repository, address, issued, withdrawn=withdrawn, tried=tried, key=key
                )
                raise
        return from_value(path, to_value(entry))

    # -- multipart uploads the client sends itself (lakeFS's presign multipart) --------

    def start_multipart(self, repository: Repository, branch: str, path: str) -> tuple[str, str]:
        """Hand out an address as `issue` does and start a multipart upload to it.

        Returns the address and the upload id. The parts go straight to the store
        (`part_url`, `copy_part`); `complete_multipart` assembles and links them.

        Raises:
            InvalidInputError: the blockstore has no presigned URLs (nothing handed out).
        """
        if not self._blockstore.presigns:
            raise InvalidInputError(
                f"the {self._blockstore.scheme} blockstore has no presigned URLs"
                " (pre_sign_multipart_upload is false); upload the object through the API"
            )
        address, _ = self.issue(repository, branch, path)
        return address, self._blockstore.start_upload(repository.storage_namespace, address)

    def start_upload(
        self,
        repository: Repository,
        branch: str,
        path: str,
        *,
        content_type: str = "",
        metadata: dict[str, str] | None = None,
        initiator: str = "",
        checksum_algorithm: str = "",
    ) -> MultipartUpload:
        """Hand out an address as `issue` does and start a multipart upload to it whose
        parts come through kvlake (`upload_part`, `copy_part`): the S3 gateway's.

        The upload is recorded for `list_uploads` (as `<branch>/<path>`) once the
        store's upload exists. The hand-out's record deletes the blob if the upload is
        completed but never linked; the parts of an upload never completed are the
        blockstore's to drop (`abort_multipart`, or the deletion worker once the
        address expired).

        Raises:
            InvalidInputError: the blockstore has no multipart uploads (nothing handed out).
        """
        address, issued = self.issue(repository, branch, path)
        store_id = self._blockstore.start_upload(repository.storage_namespace, address)
        upload = MultipartUpload(
            key=f"{branch}/{path}",
            uid=uid_of(address),
            address=address,
            store_upload_id=store_id,
            initiated=self._clock(),
            initiator=initiator,
            content_type=content_type,
            metadata=metadata or {},
            checksum_algorithm=checksum_algorithm,
        )
        self._graveler.uploads.add(repository, upload)
        return upload

    def list_uploads(
        self, repository: Repository, *, start_key: str = "", after_uid: str = ""
    ) -> Iterator[MultipartUpload]:
        """The recorded uploads in progress from `start_key` on (after `after_uid` of it),
        ascending by key then start; records older than an address may be linked are
        dropped as they are met (their uploads were abandoned: the deletion worker
        drops the parts).
        """
        expired_before = self._clock() - LINK_SECONDS
        for upload in self._graveler.uploads.scan(
            repository, start_key=start_key, after_uid=after_uid
        ):
            if upload.initiated < expired_before:
                self._graveler.uploads.remove(repository, upload.key, upload.uid)
                continue
            yield upload

    def _forget_upload(self, repository: Repository, branch: str, path: str, address: str) -> None:
        """Drop an ended upload's listing record. Its upload already ended, so a failure
        only leaves the record listed until it expires: logged, not raised."""
        try:
            self._graveler.uploads.remove(repository, f"{branch}/{path}", uid_of(address))
        except KvlakeError as exc:
            log.warning("the ended upload to %s stays listed until it expires: %s", address, exc)

    def upload_part(
        self,
        target: UploadTarget,
        part: int,
        data: BinaryIO | bytes,
        *,
        checksum: Callable[[], str] | None = None,
    ) -> str:
        """Stream one part of a handed-out address's upload to the store; its ETag.

        `checksum`, called once the part is stored, gives its S3 checksum (the
        upload's algorithm), recorded for `part_checksums` under the part's ETag.
        """
        repository, branch, path, address, upload_id = target
        self._verify(repository, branch, path, address)
        etag = self._blockstore.upload_part(
            repository.storage_namespace, address, upload_id, part, data
        )
        if checksum is not None:
            self._graveler.uploads.add_part_checksum(
                repository, uid_of(address), part, etag, checksum()
            )
        return etag

    def part_checksums(
        self, repository: Repository, branch: str, path: str, address: str
    ) -> dict[tuple[int, str], str]:
        """The S3 checksums recorded for the upload's parts, by (number, ETag)."""
        self._verify(repository, branch, path, address)
        return self._graveler.uploads.part_checksums(repository, uid_of(address))

    def part_url(self, target: UploadTarget, part: int, *, expires: int) -> str:
        """A presigned PUT URL for one part of a handed-out address's upload."""
        repository, branch, path, address, upload_id = target
        self._verify(repository, branch, path, address)
        return self._blockstore.presign_upload_part(
            repository.storage_namespace, address, upload_id, part, expires=expires
        )

    def copy_part(
        self, target: UploadTarget, part: int, *, source: tuple[str, str], start: int, end: int
    ) -> str:
        """Copy bytes [start, end) of `source` (namespace, key) into a part; its ETag."""
        repository, branch, path, address, upload_id = target
        self._verify(repository, branch, path, address)
        return self._blockstore.copy_upload_part(
            repository.storage_namespace,
            address,
            upload_id,
            part,
            source=source,
            start=start,
            end=end,
        )

    def complete_multipart(
        self,
        target: UploadTarget,
        parts: Sequence[tuple[int, str]],
        *,
        content_type: str,
        metadata: dict[str, str],
        owner: str = "",
        checksums: dict[str, str] | None = None,
    ) -> ObjectStat:
        """Assemble the parts into the blob at the address, then `link` it at the path
        (with `checksums`, the object's S3 checksums).

        The ticket is checked before the store assembles anything: only kvlake
        completes uploads, so no blob appears at an address that cannot be linked.
        """
        repository, branch, path, address, upload_id = target
        self._verify(repository, branch, path, address)
        namespace = repository.storage_namespace
        etag = self._blockstore.complete_upload(namespace, address, upload_id, parts)
        size = self._blockstore.size(namespace, address)
        stat = self.link(
            repository,
            branch,
            path,
            address,
            size=size,
            checksum=etag,
            content_type=content_type,
            metadata=metadata,
            owner=owner,
            checksums=checksums,
        )
        self._forget_upload(repository, branch, path, address)
        return stat

    def list_parts(self, target: UploadTarget) -> list[UploadedPart]:
        """The parts of a handed-out address's upload sent so far, ascending."""
        repository, branch, path, address, upload_id = target
        self._verify(repository, branch, path, address)
        return self._blockstore.list_upload_parts(repository.storage_namespace, address, upload_id)

    def abort_multipart(self, target: UploadTarget) -> None:
        """Drop the upload's parts; its hand-out record stays and finds no blob."""
        repository, branch, path, address, upload_id = target
        self._verify(repository, branch, path, address)
        self._blockstore.abort_upload(repository.storage_namespace, address, upload_id)
        self._forget_upload(repository, branch, path, address)

    # -- the intent -------------------------------------------------------------------

    def _record(
        self,
        deletion: DeletionLog,
        repository: Repository,
        address: str,
        issued: float,
        *,
        staging_token: str = "",
        path: bytes = b"",
    ) -> PendingDelete:
        """The hand-out's record; its key (due time and id) derives from the address alone."""
        uid = uid_of(address)
        return deletion.new_record(
            repository,
            address,
            "unlinked_upload",
            staging_token=staging_token,
            path=path,
            since=issued,
            record_id=uid,
            due=issued + LINK_SECONDS + deletion.settings.send_delay,
        )

    def _withdraw(self, repository: Repository, address: str, issued: float) -> bool:
        """Withdraw the hand-out's record; without one, mark the address shared."""
        if self._deletion is None:
            return False
        if self._deletion.withdraw(self._record(self._deletion, repository, address, issued)):
            return True
        # A second link of the address (the first one's answer may have been lost), or
        # one handed out with deletion disabled: the blob may be committed already, and
        # staging it again unmarked would let the log delete committed data.
        self._deletion.mark_shared(repository.instance_uid, address)
        return False

    def _unlinked(
        self,
        repository: Repository,
        address: str,
        issued: float,
        *,
        withdrawn: bool,
        tried: list[str],
        key: bytes,
    ) -> None:
        """Put the intent back after staging failed, so the blob is still collected."""
        if self._deletion is None or not withdrawn:
            return  # nothing was withdrawn: the record (or the shared mark) is still there
        try:
            if tried:
                # The write may have landed although it failed: only GC may decide.
                self._deletion.mark_shared(repository.instance_uid, address)
            else:
                # Nothing was staged: the address is unlinked again, and may be linked
                # again until the ticket expires. Same key, so a retry withdraws it.
                record = self._record(self._deletion, repository, address, issued, path=key)
                self._deletion.append([record])
        except KvlakeError as exc:  # the caller sees the first error; this one is logged
            log.warning("link in %s left blob %s unlogged: %s", repository.name, address, exc)

    # -- tickets ----------------------------------------------------------------------

    def holds_ticket(self, repository: Repository, branch: str, path: str, address: str) -> bool:
        """Whether `address` (a key in the namespace) is a live ticket `issue` handed out for
        `path` on `branch`: proof that whoever sends it was given the address to write
        (stageObject accepts it as proof the caller may read the blob)."""
        try:
            self._verify(repository, branch, path, address)
        except InvalidInputError:
            return False
        return True

    def _verify(self, repository: Repository, branch: str, path: str, address: str) -> float:
        """The address's issue time, if it is a live ticket for this path (`Tickets.verify`)."""
        return self._tickets.verify(repository, branch, path, address)
