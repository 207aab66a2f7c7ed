"""Uploads' blobs: stored at a fresh address, logged before the first byte, withdrawn just
before staging, and handed to the deletion log when staging fails (invariant 4).

The catalog's uploads and deep copies go through `Uploads`; a direct upload's
blob is logged the same way at hand-out (kvlake/catalog/direct.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable
from typing import BinaryIO, Final

from kvlake.blockstore import READ_CHUNK, BlockStore
from kvlake.catalog.guard import GuardedWrite
from kvlake.catalog.layout import new_address
from kvlake.catalog.records import ObjectEntry, ObjectStat, from_value, to_value
from kvlake.deletion import DeletionLog, PendingDelete
from kvlake.errors import KvlakeError, PreconditionFailedError
from kvlake.graveler import TOKEN_DROP_DELAY, BranchProtection, Repository

log = logging.getLogger(__name__)

DEFAULT_CONTENT_TYPE = "application/octet-stream"
UPLOAD_SECONDS: Final = 24 * 3600
"""How long an upload's body may stream before its intent record may delete the blob: as
long as a direct upload's address may be linked (tickets.LINK_SECONDS)."""
_TOKEN_REUSE: Final = TOKEN_DROP_DELAY / 6
"""Seconds an upload may stage into the token its pre-check read (10 s): a token stays
readable TOKEN_DROP_DELAY after a branch stops referencing it, and the writer flow's
re-read moves the write to the new token, so no write lands in a dropped partition."""


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


class Uploads:
    """Stores uploads' blobs and stages them, logging each blob so none is orphaned."""

    def __init__(
        self,
        blockstore: BlockStore,
        *,
        clock: Callable[[], float],
        deletion: DeletionLog | None,
    ) -> None:
        self._blockstore = blockstore
        self._clock = clock
        self._deletion = deletion

    def store(
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
        protection: BranchProtection | None = None,
    ) -> ObjectStat:
        """Store `data` at a new address and stage the entry over it (`write`'s path, as
        `key`), in `token` if it is still fresh; the blob is never orphaned (invariant 4)."""
        repository = write.repository
        now = self._clock()
        address = new_address(now)
        intent = self._log_intent(repository, address, token, key, now)
        reader = _HashingReader(data)
        self._blockstore.put(repository.storage_namespace, address, reader)  # type: ignore[arg-type]
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
        value = to_value(entry)
        tried: list[str] = []
        try:
            fresh = self._clock() - now < _TOKEN_REUSE  # else re-read: the token may be gone
            write.stage(
                key,
                value,
                if_absent=if_absent,
                token=token if fresh else "",
                attempted=tried,
                protection=protection if fresh else None,
            )
        except BaseException:
            self.abandon(repository, key, address, now, tried)
            raise
        return from_value(write.path, value)

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
        is the writer flow's (a failed staging logs its own record, `abandon`).

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
            withdrawn = self._deletion.withdraw_appended(intent)
        except BaseException:
            # The record may be gone although the call failed: nothing is staged, so the
            # blob is nobody's; delete it now (if that fails too, the record, if still
            # there, deletes it when due).
            with contextlib.suppress(KvlakeError):
                self._blockstore.delete(repository.storage_namespace, address)
            raise
        if not withdrawn:
            self._blockstore.delete(repository.storage_namespace, address)
            raise PreconditionFailedError(
                f"the upload's body took longer than {UPLOAD_SECONDS // 3600} h to arrive and"
                " its blob was handed to the deletion log; nothing was staged, upload again"
            )

    def abandon(
        self, repository: Repository, key: bytes, address: str, now: float, tried: list[str]
    ) -> None:
        """Dispose of an upload's blob after staging it failed."""
        if not tried:
            # No staging write was attempted: nothing references the address.
            self._blockstore.delete(repository.storage_namespace, address)
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
