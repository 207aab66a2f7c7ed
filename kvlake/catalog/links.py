"""Linking blobs that are already in storage: lakeFS's stageObject, getPhysicalAddress and
linkPhysicalAddress.

A link stages an entry over an existing blob instead of uploading one, so the
blob may already be referenced elsewhere (staged at another path, committed,
or logged for deletion after an overwrite). The rules that keep the deletion
log safe (docs/deletion.md, "Linked blobs"):
- Only blobs inside the repository's own storage namespace are linked, never
  graveler's `_lakefs/` files: kvlake deletes only what is under a namespace it
  owns, so a blob elsewhere is never staged, and can never be deleted, by it
  (nor the symlink files kvlake writes under `symlinks/`).
- The address is marked shared before the entry is staged, as a copy's is, so
  no staging record (this entry's, or one logged before for the same blob)
  deletes it: it is garbage collection's from then on.
- After the mark, a fresh claim of a worker on the address refuses the link
  (412, retry): that worker read the marks before ours and may be deleting
  the blob. Claim-then-read-mark against mark-then-read-claim means one of the
  two always sees the other (`DeletionLog.claimed`).
- The blob must exist, and be the size the client says, *after* the mark: a
  worker that deleted it before it could see the mark made it missing, and the
  link is refused instead of staging an entry whose bytes are gone. It is
  checked before the mark too, so a link refused for a missing blob or a wrong
  size leaves no mark (a mark is for good: the blob would never be the log's
  again).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kvlake.blockstore import BlockStore, check_key, parse_address
from kvlake.catalog.guard import GuardedWrite, StagingGuard
from kvlake.catalog.layout import new_address
from kvlake.catalog.records import ObjectEntry, ObjectStat, from_value, to_value
from kvlake.deletion import DeletionLog
from kvlake.errors import BlobNotFoundError, InvalidInputError, PreconditionFailedError
from kvlake.graveler import Graveler, Repository, check_branch_name, check_path

INTERNAL_PREFIXES = ("_lakefs", "symlinks")
"""The namespace's folders of kvlake's own files: graveler's (ranges, metaranges, refs
dumps) and the symlink files (kvlake/catalog/symlinks.py)."""
MAX_MTIME = 253402300799
"""9999-12-31T23:59:59Z, the last second an HTTP date can name."""


def relative_address(namespace: str, physical_address: str) -> str:
    """The key of `physical_address` inside `namespace`, the normalised storage namespace.

    Every spelling the blockstore reads as one blob is one address (kvlake/blockstore/addresses.py).

    Raises:
        InvalidInputError: the address is outside the namespace, not a clean key, or
            one of graveler's own files.
    """
    # Compared in the canonical form the blockstore reads (`local:///ns/k`, `local://ns//k`
    # and `local://ns/k` are one blob), segment by segment (`ns2/k` is not inside `ns`).
    try:
        address = parse_address(physical_address, what="physical address")
        inside = address.key_in(parse_address(namespace, what="storage namespace"))
    except InvalidInputError:
        inside = ""
    if not inside:
        raise InvalidInputError(
            f"physical address {physical_address!r} is outside the repository's storage"
            f" namespace {namespace!r}; kvlake links only blobs inside it (it never stages, so"
            " never deletes, data it does not own): copy the data in, or upload it"
        )
    key = check_key(inside)
    if key.split("/", 1)[0] in INTERNAL_PREFIXES:
        raise InvalidInputError(
            f"physical address {physical_address!r} is one of kvlake's own files (under"
            f" {' or '.join(INTERNAL_PREFIXES)}); link a data blob"
        )
    return key


class Links:
    """Stages entries over existing blobs. Thread-safe; no in-process state."""

    def __init__(
        self,
        graveler: Graveler,
        blockstore: BlockStore,
        guard: StagingGuard,
        *,
        clock: Callable[[], float] = time.time,
        deletion: DeletionLog | None = None,
    ) -> None:
        self._graveler = graveler
        self._blockstore = blockstore
        self._guard = guard
        self._clock = clock
        self._deletion = deletion

    def new_physical_address(self, repository: Repository) -> str:
        """A full address inside the namespace no entry uses yet, for a client to write a
        blob to and then link (lakeFS's getPhysicalAddress)."""
        return f"{repository.storage_namespace}/{new_address(self._clock())}"

    def link(
        self,
        repository: Repository,
        branch: str,
        path: str,
        physical_address: str,
        *,
        size: int,
        checksum: str,
        mtime: float | None = None,
        content_type: str,
        metadata: dict[str, str],
        if_absent: bool = False,
        owner: str = "",
    ) -> ObjectStat:
        """Stage `path` on `branch` as the blob at `physical_address` (a full address).

        A write of `path` (as `owner`) like any other: it holds the path's write lock
        (kvlake/catalog/guard.py) from before the mark to the staging.

        Raises:
            LockedError: another owner's write lock or a running bulk delete covers the
                path (nothing marked).
            InvalidInputError: the address is outside the namespace or internal, or the
                blob is missing or of another size (nothing staged).
            PreconditionFailedError: `if_absent` and an object exists at the path, or a
                deletion worker has claimed the blob (retry in a moment).
            ProtectedBranchError: the branch is protected against writes (nothing marked).
        """
        check_branch_name(branch)
        check_path(path)
        if size < 0:
            raise InvalidInputError(f"size_bytes {size} is negative; send the blob's size")
        if mtime is not None and not 0 <= mtime <= MAX_MTIME:
            raise InvalidInputError(
                f"mtime {mtime} is out of range; send seconds since the epoch, 0 to {MAX_MTIME}"
            )
        namespace = repository.storage_namespace
        address = relative_address(namespace, physical_address)
        # Refusals first, so a refused link leaves no mark behind (bad input changes nothing).
        self._graveler.get_branch(repository, branch)
        self._graveler.protection.check(repository, branch, "staging_write")
        self._check_blob(namespace, address, physical_address, size)
        entry = ObjectEntry(
            address=address,
            size=size,
            checksum=checksum,
            mtime=self._clock() if mtime is None else mtime,
            content_type=content_type,
            metadata=dict(metadata),
        )
        with self._guard.writing(repository, branch, path, owner=owner) as write:
            return self._link(write, physical_address, entry, if_absent=if_absent)

    def _link(
        self, write: GuardedWrite, physical_address: str, entry: ObjectEntry, *, if_absent: bool
    ) -> ObjectStat:
        """Mark the blob shared, check it is still there whole, then stage the entry."""
        repository, namespace = write.repository, write.repository.storage_namespace
        address, size = entry.address, entry.size
        if self._deletion is not None:
            # Marked even with deletion disabled, so enabling it later stays safe.
            self._deletion.mark_shared(repository.instance_uid, address)
            # Then read the workers' claims: a worker that read the marks before ours
            # holds a claim now, and may be deleting the blob (DeletionLog.claimed).
            if self._deletion.claimed(repository.instance_uid, address):
                raise PreconditionFailedError(
                    f"the blob at {physical_address!r} is being checked for deletion; retry"
                    " the link in a moment (if it was deleted, write it again)"
                )
        self._check_blob(namespace, address, physical_address, size)  # after the mark too
        value = to_value(entry)
        write.stage(write.path.encode(), value, if_absent=if_absent)
        return from_value(write.path, value)

    def _check_blob(self, namespace: str, address: str, physical_address: str, size: int) -> None:
        try:
            found = self._blockstore.size(namespace, address)
        except BlobNotFoundError:
            raise InvalidInputError(
                f"no blob at physical address {physical_address!r}; write it before linking"
            ) from None
        if found != size:
            raise InvalidInputError(
                f"the blob at {physical_address!r} has {found} bytes, not size_bytes={size};"
                " send its real size"
            )
