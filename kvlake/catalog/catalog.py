"""The catalog: objects at paths on refs, their bytes in the blockstore.

Uploads stream the body into a new, never-reused address under the
repository's storage namespace (`data/<hour>/<uid>`), hashing it on the way, and
only then stage the entry that references it: a reader can never see an entry
whose bytes are missing. Every call takes a repository name and reads its record
first (invariant 1).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from typing import BinaryIO

from kvlake.blockstore import READ_CHUNK, BlockStore
from kvlake.catalog.listing import MAX_AMOUNT, list_page
from kvlake.catalog.records import ListingPage, ObjectEntry, ObjectStat, from_value, to_value
from kvlake.errors import (
    EntryNotFoundError,
    InvalidInputError,
    KvlakeError,
    PreconditionFailedError,
)
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.validation import check_branch_name, check_path

MAX_DELETE_MANY = 1000
DEFAULT_CONTENT_TYPE = "application/octet-stream"


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


def new_address(now: float) -> str:
    """A fresh object address, grouped by hour so listings of the namespace stay shallow."""
    return time.strftime("data/%Y%m%dT%H/", time.gmtime(now)) + keys.new_uid()


class Catalog:
    """Object operations over graveler and a blockstore. Thread-safe; no in-process state."""

    def __init__(
        self, graveler: Graveler, blockstore: BlockStore, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.graveler = graveler
        self.blockstore = blockstore
        self._clock = clock

    def upload(
        self,
        repository: str,
        branch: str,
        path: str,
        data: BinaryIO,
        *,
        content_type: str | None = None,
        metadata: dict[str, str] | None = None,
        if_absent: bool = False,
    ) -> ObjectStat:
        """Store the body and stage it at `path`; the body is streamed, never held whole.

        Raises:
            PreconditionFailedError: `if_absent` and an object exists at the path.
        """
        repo = self.graveler.get_repository(repository)
        check_branch_name(branch)
        key = check_path(path)
        self.graveler.get_branch(repo, branch)  # fail before uploading a single byte
        if if_absent:
            self._refuse_existing(repository, branch, path)
        now = self._clock()
        address = new_address(now)
        reader = _HashingReader(data)
        self.blockstore.put(repo.storage_namespace, address, reader)  # type: ignore[arg-type]
        entry = ObjectEntry(
            address=address,
            size=reader.size,
            checksum=reader.md5.hexdigest(),
            mtime=now,
            content_type=content_type or DEFAULT_CONTENT_TYPE,
            metadata=dict(metadata or {}),
        )
        try:
            if if_absent:
                self._refuse_existing(repository, branch, path)
            self.graveler.set(repo, branch, key, to_value(entry))
        except BaseException:
            # Nothing references the new address yet: removing it cannot hurt a reader.
            self.blockstore.delete(repo.storage_namespace, address)
            raise
        return from_value(path, to_value(entry))

    def _refuse_existing(self, repository: str, branch: str, path: str) -> None:
        try:
            self.stat(repository, branch, path)
        except EntryNotFoundError:
            return
        raise PreconditionFailedError(
            f"object {path!r} already exists on branch {branch!r}; "
            "drop If-None-Match to overwrite it"
        )

    def stat(self, repository: str, ref: str, path: str) -> ObjectStat:
        """The object's metadata. Raises EntryNotFoundError."""
        repo = self.graveler.get_repository(repository)
        return from_value(path, self.graveler.get(repo, ref, check_path(path)))

    def open_object(
        self, repository: str, ref: str, path: str, *, start: int = 0, end: int | None = None
    ) -> tuple[ObjectStat, BinaryIO]:
        """The object's metadata and a reader of bytes [start, end). Close the reader."""
        stat = self.stat(repository, ref, path)
        namespace = self.graveler.get_repository(repository).storage_namespace
        return stat, self.blockstore.open_reader(namespace, stat.address, start=start, end=end)

    def list_objects(
        self,
        repository: str,
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
        repo = self.graveler.get_repository(repository)
        self.graveler.resolve_ref(repo, ref)  # an unknown ref is an error, not an empty page
        return list_page(
            lambda start: self.graveler.list(repo, ref, start=start),
            prefix=prefix,
            delimiter=delimiter,
            after=after,
            amount=amount,
        )

    def delete_object(self, repository: str, branch: str, path: str) -> None:
        """Stage the object's deletion. Raises EntryNotFoundError if there is none."""
        self.stat(repository, branch, path)
        repo = self.graveler.get_repository(repository)
        self.graveler.delete(repo, branch, check_path(path))

    def delete_objects(
        self, repository: str, branch: str, paths: Sequence[str]
    ) -> list[tuple[str, KvlakeError]]:
        """Stage the deletion of up to 1000 paths; missing ones are skipped, failures listed."""
        if len(paths) > MAX_DELETE_MANY:
            raise InvalidInputError(
                f"{len(paths)} paths given; delete at most {MAX_DELETE_MANY} per call"
            )
        repo = self.graveler.get_repository(repository)
        check_branch_name(branch)
        keys_ = [check_path(path) for path in paths]  # validate all before changing any
        failures: list[tuple[str, KvlakeError]] = []
        for path, key in zip(paths, keys_, strict=True):
            try:
                self.graveler.delete(repo, branch, key)
            except KvlakeError as exc:
                failures.append((path, exc))
        return failures

    def copy_object(
        self, repository: str, source_ref: str, source_path: str, branch: str, path: str
    ) -> ObjectStat:
        """Stage `path` on `branch` as a copy of the source: same bytes, metadata and checksum."""
        source = self.stat(repository, source_ref, source_path)
        repo = self.graveler.get_repository(repository)
        key = check_path(path)
        entry = ObjectEntry(
            address=source.address,
            size=source.size,
            checksum=source.checksum,
            mtime=self._clock(),
            content_type=source.content_type,
            metadata=source.metadata,
        )
        value = to_value(entry)
        self.graveler.set(repo, branch, key, value)
        return from_value(path, value)
