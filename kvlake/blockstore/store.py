"""The object-storage contract: immutable blobs addressed by namespace and key.

A storage namespace is a URL (`local://lake/repo1`, `mem://repo1`); the
adapter for its scheme stores blobs under it by key (`data/...`, `_lakefs/...`).
Blobs are written once and never modified in place, so readers need no locks;
deletion is idempotent ("not found" counts as deleted), which is what the
two-phase deletion protocol relies on.

Public methods validate their arguments once, here, then call an adapter's
private primitive; an adapter therefore only translates, and every adapter
rejects the same bad namespaces, keys and ranges with the same errors.
"""

from __future__ import annotations

import hashlib
import io
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import BinaryIO, Final, NamedTuple

from kvlake.blockstore.addresses import parse_address
from kvlake.blockstore.listing import BlobInfo, parallel_listing
from kvlake.closing import Closing
from kvlake.errors import (
    BlobNotFoundError,
    BlobReplacedError,
    InvalidInputError,
    KvlakeError,
    UploadRefusedError,
)

READ_CHUNK: Final = 1 << 20
"""Streams hand data over in pieces of this size."""


def check_key(key: str) -> str:
    """Return `key` if it is a clean relative path: the same blob on every adapter.

    Segments may not be empty (no leading, trailing or doubled `/`), `.` or `..`,
    and NUL is refused, so no key can climb out of its namespace and no two
    spellings name one file on a filesystem-backed adapter.

    Raises:
        InvalidInputError: the key is not such a path.
    """
    if not isinstance(key, str) or not key or "\0" in key:
        raise InvalidInputError(f"blob key {key!r} is invalid; use a non-empty str without NUL")
    if any(segment in ("", ".", "..") for segment in key.split("/")):
        raise InvalidInputError(
            f"blob key {key!r} is invalid; use a relative path like 'data/ab/cd' without"
            " empty, '.' or '..' segments"
        )
    return key


def _read_chunks(data: BinaryIO | bytes) -> Iterator[bytes]:
    """Yield `data` in pieces of at most READ_CHUNK; errors of the caller's stream propagate."""
    stream: BinaryIO = (
        io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    )
    while True:
        chunk = stream.read(READ_CHUNK)
        if not isinstance(chunk, bytes | bytearray):
            raise InvalidInputError(
                f"blob data stream returned {type(chunk).__name__} from read();"
                " open it in binary mode"
            )
        if not chunk:
            return
        yield bytes(chunk)


MAX_NAMESPACE_BYTES: Final = 512
"""A namespace path's length: what is left of a 1,024-byte S3 key or a 4,096-byte local
path leaves room for the keys kvlake writes under it."""
MAX_NAMESPACE_SEGMENT_BYTES: Final = 255
"""A folder name's length on common filesystems."""
MAX_PARALLEL_LISTINGS: Final = 64
"""Prefixes listed at once, each in a thread: beyond this, S3's per-prefix request rate,
not the round trips, is the limit."""
MAX_PRESIGN_SECONDS: Final = 7 * 24 * 3600
"""S3's longest lifetime for a URL signed with SigV4."""


MAX_PARTS: Final = 10_000
"""S3's most parts in one multipart upload."""
_PART_ETAG: Final = re.compile(r'"?[0-9a-fA-F]{32}"?')
MIN_PART_BYTES: Final = 5 << 20
"""S3's smallest part but the last: a completion with a smaller one is refused."""


@dataclass(frozen=True)
class UploadedPart:
    """One part of a multipart upload in progress, as ListParts shows it."""

    number: int
    etag: str
    size: int
    mtime: float


def multipart_etag(etags: Sequence[str]) -> str:
    """S3's ETag of a completed multipart upload: the MD5 of the parts' binary MD5s, then
    "-" and the part count (clients compare it, so every adapter answers the same)."""
    digest = hashlib.md5(usedforsecurity=False)
    for etag in etags:
        digest.update(bytes.fromhex(etag.strip('"')))
    return f"{digest.hexdigest()}-{len(etags)}"


def _check_part(part: int) -> None:
    if not 1 <= part <= MAX_PARTS:
        raise InvalidInputError(f"part number {part} is invalid; use 1 to {MAX_PARTS}")


def _check_expiry(expires: int) -> None:
    if not 1 <= expires <= MAX_PRESIGN_SECONDS:
        raise InvalidInputError(
            f"presigned URL lifetime {expires} s is invalid; use 1 to {MAX_PRESIGN_SECONDS} s"
        )


def blob_replaced(namespace: str, key: str, etag: str) -> BlobReplacedError:
    """The error for a linked blob whose bytes changed under its recorded ETag."""
    return BlobReplacedError(
        f"blob {key!r} in {namespace!r} was replaced after it was linked (its ETag is no"
        f" longer {etag!r}), likely through a presigned URL still in force; its bytes are"
        " not the object's: upload the object again"
    )


class BlobHead(NamedTuple):
    """A blob's size and its ETag as the store reports it ("" where the store has none)."""

    size: int
    etag: str


class BlockStore(Closing, ABC):
    """Blobs in storage namespaces of one URL scheme. Safe for many threads.

    Adapters implement `check_namespace` and the underscored primitives, which
    receive a namespace `check_namespace` accepted, a key `check_key` accepted
    and, for reads, a range already checked to satisfy 0 <= start <= end.
    """

    scheme: str
    """The namespace URL scheme this adapter serves, e.g. `local`."""
    presigns: bool = False
    """Whether `presign_read` and `presign_write` work: the API reports it as
    `pre_sign_support`."""

    # -- the contract ---------------------------------------------------------

    @abstractmethod
    def check_namespace(self, namespace: str) -> str:
        """Return the namespace normalised (no trailing slash) if this adapter can serve it.

        Raises:
            InvalidInputError: wrong scheme, empty path, or a path escaping the root.
        """

    def put(self, namespace: str, key: str, data: BinaryIO | bytes) -> int:
        """Store a blob, streaming `data` in chunks of READ_CHUNK; return its size in bytes.

        The blob becomes visible whole or not at all (write to a temporary name,
        then rename), so a failed or crashed upload never leaves a torn blob under
        `key`; a blob already there stays as it was. Errors raised by reading
        `data` reach the caller unchanged.

        Raises:
            InvalidInputError: bad namespace or key, or `data` is not binary.
            ConflictError: the adapter cannot hold a blob at that key (local: a folder is there).
            UnavailableError: the backend failed to store it; nothing was stored.
        """
        normalised = self.check_namespace(namespace)
        check_key(key)
        if not isinstance(data, bytes | bytearray | memoryview) and not hasattr(data, "read"):
            raise InvalidInputError(
                f"blob data for key {key!r} is a {type(data).__name__};"
                " pass bytes or a binary stream"
            )
        return self._put(normalised, key, _read_chunks(data))

    def open_reader(
        self,
        namespace: str,
        key: str,
        *,
        start: int = 0,
        end: int | None = None,
        if_match: str = "",
    ) -> BinaryIO:
        """Open the blob for reading bytes [start, end) (end None: to the end). Close it.

        An `end` beyond the blob is clipped to its size; `start` equal to the
        size gives an empty reader. The reader stops at `end` by itself.
        `if_match`, an ETag `head` reported, makes the read refuse a blob replaced
        since (a client's presigned PUT URL outlives the link); adapters whose
        `head` reports no ETag are never given one.

        Raises:
            BlobNotFoundError: no blob under the key.
            BlobReplacedError: `if_match` is set and the blob's ETag is another.
            InvalidInputError: bad namespace or key, start < 0, end < start, or start > size.
        """
        normalised = self.check_namespace(namespace)
        check_key(key)
        if start < 0 or (end is not None and end < start):
            raise InvalidInputError(
                f"byte range [{start}, {end}) of blob {key!r} is invalid; pass 0 <= start <= end"
            )
        if if_match:
            return self._open_matching(normalised, key, start, end, if_match)
        return self._open_reader(normalised, key, start, end)

    def head(self, namespace: str, key: str) -> BlobHead:
        """The blob's size and its ETag as the store reports it ("" where it reports none).

        One look at the blob, so the two describe the same bytes: linking a blob a
        client wrote records both, and reads pass the ETag back as `if_match`.

        Raises:
            BlobNotFoundError: no blob under the key.
        """
        normalised = self.check_namespace(namespace)
        return self._head(normalised, check_key(key))

    def size(self, namespace: str, key: str) -> int:
        """Return the blob's size in bytes.

        Raises:
            BlobNotFoundError: no blob under the key.
        """
        normalised = self.check_namespace(namespace)
        return self._size(normalised, check_key(key))

    def delete(self, namespace: str, key: str) -> None:
        """Delete the blob; a missing blob is not an error, so retries are always safe."""
        normalised = self.check_namespace(namespace)
        self._delete(normalised, check_key(key))

    def list_keys(self, namespace: str, prefix: str = "") -> Iterator[str]:
        """Iterate the keys under the namespace that start with `prefix`, ascending.

        Keys are compared as str (code points, the same as UTF-8 byte order). The
        listing streams and is not a snapshot: a blob put or deleted meanwhile
        may or may not be seen. Arguments are checked now, storage errors raise
        while iterating.
        """
        normalised = self.check_namespace(namespace)
        if not isinstance(prefix, str) or "\0" in prefix:
            raise InvalidInputError(f"key prefix {prefix!r} is invalid; use a str without NUL")
        return self._list_keys(normalised, prefix)

    def list_folders(self, namespace: str, prefix: str) -> Iterator[str]:
        """Iterate the folders right under `prefix` (`""` or ending in `/`) as full prefixes,
        ascending.

        A folder is the next `/`-ended segment of keys that go on past `prefix`:
        with `data/2026T01/a` and `data/2026T02/b` stored, `data/` has the folders
        `data/2026T01/` and `data/2026T02/`. For listing a namespace in parallel,
        one folder per task, without one process reading every key.
        """
        normalised = self.check_namespace(namespace)
        self._check_folder(prefix)
        return self._list_folders(normalised, prefix)

    def list_level(self, namespace: str, prefix: str = "") -> Iterator[BlobInfo]:
        """Iterate the blobs right in folder `prefix` (`""` or ending in `/`), not in its
        sub-folders, ascending: with `list_folders`, a listing split into parts that a
        parallel import lists apart (each folder whole, and each level's own blobs).
        """
        normalised = self.check_namespace(namespace)
        self._check_folder(prefix)
        return self._list_level(normalised, prefix)

    @staticmethod
    def _check_folder(prefix: str) -> None:
        if not isinstance(prefix, str) or "\0" in prefix or prefix[-1:] not in ("", "/"):
            raise InvalidInputError(
                f"folder prefix {prefix!r} is invalid; use a str ending in '/' (or '')"
            )

    def folder_exists(self, namespace: str, prefix: str = "") -> bool:
        """Whether the folder `prefix` (`""` or ending in `/`) exists. Where folders exist only
        through their keys (S3), that is whether a key starts with it; adapters with real
        folders (local) say whether it is one, empty or not.
        """
        normalised = self.check_namespace(namespace)
        self._check_folder(prefix)
        return self._folder_exists(normalised, prefix)

    def list_blobs(
        self, namespace: str, prefixes: Sequence[str] = ("",), *, parallel: int = 1
    ) -> Iterator[BlobInfo]:
        """Iterate the blobs (key, size, mtime) under each prefix: prefix by prefix, in
        the order given, each ascending as `list_keys`.

        For a garbage collector's mark or sweep: with one prefix per time slice
        of the address layout (the catalog's `data_prefixes`), up to `parallel`
        prefixes are listed at once, each in its own thread, and memory stays
        flat (`kvlake/blockstore/listing.py`). Prefixes should not overlap, or
        blobs are seen twice. Streams and is not a snapshot, as `list_keys`.
        Arguments are checked now, storage errors raise while iterating.

        Raises:
            InvalidInputError: bad namespace or prefix, or `parallel` outside 1..64.
        """
        normalised = self.check_namespace(namespace)
        for prefix in prefixes:
            if not isinstance(prefix, str) or "\0" in prefix:
                raise InvalidInputError(f"key prefix {prefix!r} is invalid; use a str without NUL")
        if not 1 <= parallel <= MAX_PARALLEL_LISTINGS:
            raise InvalidInputError(
                f"parallel listings {parallel} is invalid; use 1 to {MAX_PARALLEL_LISTINGS}"
            )
        wanted = tuple(prefixes)
        if parallel == 1 or len(wanted) == 1:
            return (blob for prefix in wanted for blob in self._list_blobs(normalised, prefix))
        return parallel_listing(partial(self._list_blobs, normalised), wanted, parallel)

    def presign_read(self, namespace: str, key: str, *, expires: int, if_match: str = "") -> str:
        """A URL anyone holding it may GET the blob from for `expires` seconds.

        Clients then read straight from the object store, not through kvlake;
        only adapters whose store signs URLs (`presigns`) can. With `if_match` (an
        ETag `head` reported, as `open_reader` takes it) the blob is looked at first
        and a replaced one gets no URL. The URL itself is not conditional: S3 takes
        If-Match only as a header, and a URL signing it would demand the header from
        every client, which lakeFS clients following the URL never send.

        Raises:
            BlobNotFoundError: `if_match` is set and no blob is under the key.
            BlobReplacedError: `if_match` is set and the blob's ETag is another.
            InvalidInputError: bad namespace or key, `expires` outside 1 s to 7 days,
                or an adapter without presigned URLs.
        """
        normalised = self.check_namespace(namespace)
        check_key(key)
        _check_expiry(expires)
        if if_match and self._head(normalised, key).etag != if_match:
            raise blob_replaced(normalised, key, if_match)
        return self._presign_read(normalised, key, expires)

    def presign_write(self, namespace: str, key: str, *, expires: int) -> str:
        """A URL anyone holding it may PUT the blob's bytes to for `expires` seconds.

        For direct uploads (catalog's `PhysicalLinks`): the URL overwrites, so hand
        it out for fresh keys only.

        Raises:
            InvalidInputError: bad namespace or key, `expires` outside 1 s to 7 days,
                or an adapter without presigned URLs.
        """
        normalised = self.check_namespace(namespace)
        check_key(key)
        _check_expiry(expires)
        return self._presign_write(normalised, key, expires)

    def copy(self, namespace: str, source: str, destination: str, *, if_match: str = "") -> int:
        """Store a copy of blob `source` under `destination` in the same namespace; its size.

        The copy is a blob of its own: deleting either leaves the other. It appears
        whole or not at all, as a put does. Adapters whose store copies by itself
        override `_copy` (s3: CopyObject, UploadPartCopy for large blobs), so the
        bytes never pass through kvlake; the others stream them through a put.
        `if_match`, an ETag `head` reported, refuses a source replaced since, as
        `open_reader` does (the store checks it in the copy itself where it can).

        Raises:
            BlobNotFoundError: no blob under `source`.
            BlobReplacedError: `if_match` is set and the source's ETag is another.
            InvalidInputError: bad namespace or key.
            UnavailableError: the backend failed; nothing was stored.
        """
        normalised = self.check_namespace(namespace)
        return self._copy(normalised, check_key(source), check_key(destination), if_match)

    # -- multipart uploads a client sends itself (presigning adapters) ---------

    def start_upload(self, namespace: str, key: str) -> str:
        """Start a multipart upload to `key` whose parts a client sends; return its id.

        The blob appears, whole, only when `complete_upload` assembles the parts.

        Raises:
            InvalidInputError: bad namespace or key, or an adapter without presigned URLs.
        """
        normalised = self.check_namespace(namespace)
        return self._start_upload(normalised, check_key(key))

    def presign_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, *, expires: int
    ) -> str:
        """A URL anyone holding it may PUT part `part` (1 to 10,000) of the upload to."""
        normalised = self.check_namespace(namespace)
        _check_part(part)
        _check_expiry(expires)
        return self._presign_upload_part(normalised, check_key(key), upload_id, part, expires)

    def upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, data: BinaryIO | bytes
    ) -> str:
        """Store part `part` (1 to 10,000) of the upload from `data`, read in READ_CHUNK
        pieces (a part is never held whole in memory); return its ETag, the MD5 in hex.
        A part sent again under its number replaces the earlier one, as on S3.

        Raises:
            InvalidInputError: bad arguments, an unknown upload, or no multipart uploads.
            UnavailableError: the backend failed; the part may be missing (send it again).
        """
        normalised = self.check_namespace(namespace)
        _check_part(part)
        return self._upload_part(normalised, check_key(key), upload_id, part, _read_chunks(data))

    def copy_upload_part(
        self,
        namespace: str,
        key: str,
        upload_id: str,
        part: int,
        *,
        source: tuple[str, str],
        start: int,
        end: int,
    ) -> str:
        """Make bytes [start, end) of blob `source` (namespace, key) part `part` of the upload,
        inside the store; return the part's ETag.

        Raises:
            BlobNotFoundError: no source blob.
            InvalidInputError: bad arguments, a range beyond the source, or no presigned URLs.
        """
        normalised = self.check_namespace(namespace)
        _check_part(part)
        source_namespace = self.check_namespace(source[0])
        if not 0 <= start < end:
            raise InvalidInputError(
                f"byte range [{start}, {end}) of the copied part is invalid; pass 0 <= start < end"
            )
        return self._copy_upload_part(
            normalised,
            check_key(key),
            upload_id,
            part,
            (source_namespace, check_key(source[1])),
            start,
            end,
        )

    def complete_upload(
        self, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        """Assemble the parts (number, ETag), ascending, into the blob; return its ETag.

        Raises:
            InvalidInputError: no parts, parts out of order, or parts the store refuses
                (too small, wrong ETag), or an unknown upload.
        """
        normalised = self.check_namespace(namespace)
        numbers = [number for number, _ in parts]
        if not numbers or numbers != sorted(set(numbers)):
            raise UploadRefusedError(
                "InvalidPartOrder",
                "parts must be given once each, ascending by part number; list the parts uploaded",
            )
        for number, etag in parts:
            if not _PART_ETAG.fullmatch(etag):  # nothing else names a part, on any store
                raise UploadRefusedError(
                    "InvalidPart",
                    f"part {number}'s ETag {etag!r} is not one a part was given (32 hex"
                    " digits); send the ETag the part's upload answered",
                )
        return self._complete_upload(normalised, check_key(key), upload_id, parts)

    def list_upload_parts(self, namespace: str, key: str, upload_id: str) -> list[UploadedPart]:
        """The parts uploaded so far (the last sent of each number), ascending by number.

        Raises:
            UploadRefusedError: an unknown upload (NoSuchUpload).
        """
        normalised = self.check_namespace(namespace)
        return self._list_upload_parts(normalised, check_key(key), upload_id)

    def abort_upload(self, namespace: str, key: str, upload_id: str) -> None:
        """Drop the upload's parts; an upload already gone is not an error."""
        normalised = self.check_namespace(namespace)
        self._abort_upload(normalised, check_key(key), upload_id)

    def abort_uploads_to(self, namespace: str, key: str) -> int:
        """Abort every multipart upload in progress to `key`; return how many there were.

        For the deletion worker, once a handed-out address expired unlinked: an
        upload to it that was neither completed nor aborted still holds its parts.
        """
        normalised = self.check_namespace(namespace)
        return self._abort_uploads_to(normalised, check_key(key))

    # -- helpers built on the contract ----------------------------------------

    def get(self, namespace: str, key: str) -> bytes:
        """Read a whole blob into memory: for small metadata files only."""
        with self.open_reader(namespace, key) as reader:
            return reader.read()

    def exists(self, namespace: str, key: str) -> bool:
        """Whether a blob is stored under `key`."""
        try:
            self.size(namespace, key)
        except BlobNotFoundError:
            return False
        return True

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        """Delete blobs, not atomically; return the failures by key (empty: all gone).

        A bad namespace raises at once; a bad key or a backend failure is
        reported for its key and the others are still deleted.
        """
        self.check_namespace(namespace)
        failures: dict[str, Exception] = {}
        for key in keys:
            try:
                self.delete(namespace, key)
            except KvlakeError as exc:  # reported to the caller per key, see the docstring
                failures[key] = exc
        return failures

    def close(self) -> None:  # noqa: B027 - adapters without resources need not override
        """Release clients and connections. The store must not be used afterwards."""

    # -- shared by adapters -----------------------------------------------------

    def _namespace_path(self, namespace: str) -> str:
        """The path part of `<scheme>://<path>`, refusing anything but a clean relative path."""
        marker = f"{self.scheme}://"
        example = f"{marker}lake/repo1"
        if not isinstance(namespace, str) or not namespace.startswith(marker):
            raise InvalidInputError(
                f"storage namespace {namespace!r} is not served by this {self.scheme} blockstore;"
                f" use a {marker} namespace such as {example}"
            )
        # One canonical form (kvlake/blockstore/addresses.py): every spelling this adapter
        # reads as one place (`local:///name`, what clients build from the `local://` prefix
        # /config/storage reports, `s3://b//p`, `s3://b/./p`) is that place's one name.
        path = parse_address(namespace, what="storage namespace").path
        # Checked here, before anything is written: past these, storage fails later with
        # an error about some blob rather than about the namespace.
        longest = max(len(s.encode()) for s in path.split("/"))
        if longest > MAX_NAMESPACE_SEGMENT_BYTES:
            raise InvalidInputError(
                f"storage namespace {namespace[:60]!r}... has a segment of {longest} bytes;"
                f" use at most {MAX_NAMESPACE_SEGMENT_BYTES} bytes between two '/'"
            )
        if len(path.encode()) > MAX_NAMESPACE_BYTES:
            raise InvalidInputError(
                f"storage namespace {namespace[:60]!r}... is {len(path.encode())} bytes long;"
                f" use at most {MAX_NAMESPACE_BYTES} bytes"
            )
        return path

    @staticmethod
    def _clip_range(namespace: str, key: str, start: int, end: int | None, size: int) -> int:
        """Return the range's end clipped to `size`; refuse a start beyond the blob."""
        if start > size:
            raise InvalidInputError(
                f"byte range start {start} is beyond blob {key!r} in {namespace!r}, which"
                f" holds {size} bytes; start at {size} or less"
            )
        return size if end is None else min(end, size)

    @staticmethod
    def _not_found(namespace: str, key: str) -> BlobNotFoundError:
        return BlobNotFoundError(
            f"no blob under key {key!r} in storage namespace {namespace!r}; check the key,"
            " or whether the blob was deleted"
        )

    # -- what an adapter implements ---------------------------------------------

    @abstractmethod
    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int:
        """Store the chunks atomically under the key; return the byte count."""

    @abstractmethod
    def _open_reader(self, namespace: str, key: str, start: int, end: int | None) -> BinaryIO:
        """Open bytes [start, end) using `_clip_range`; raise BlobNotFoundError when absent."""

    @abstractmethod
    def _size(self, namespace: str, key: str) -> int:
        """Return the size; raise BlobNotFoundError when absent."""

    def _head(self, namespace: str, key: str) -> BlobHead:
        """The size and ETag; adapters whose store has ETags override it (s3)."""
        return BlobHead(self._size(namespace, key), "")

    def _open_matching(
        self, namespace: str, key: str, start: int, end: int | None, if_match: str
    ) -> BinaryIO:
        """`_open_reader` refusing another ETag; only adapters that override `_head` get
        an ETag to match, so the others never see one."""
        return self._open_reader(namespace, key, start, end)

    @abstractmethod
    def _delete(self, namespace: str, key: str) -> None:
        """Delete the blob if present."""

    @abstractmethod
    def _list_keys(self, namespace: str, prefix: str) -> Iterator[str]:
        """Iterate matching keys in ascending order, streaming."""

    def _list_folders(self, namespace: str, prefix: str) -> Iterator[str]:
        """Folders from a full listing; adapters with a cheaper way override this."""
        last = ""
        for key in self._list_keys(namespace, prefix):
            segment, slash, _ = key[len(prefix) :].partition("/")
            folder = f"{prefix}{segment}/"
            if slash and folder != last:
                last = folder
                yield folder

    def _list_level(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        """A folder's own blobs from a full listing; adapters with a cheaper way override this."""
        return (b for b in self._list_blobs(namespace, prefix) if "/" not in b.key[len(prefix) :])

    def _folder_exists(self, namespace: str, prefix: str) -> bool:
        return next(iter(self._list_keys(namespace, prefix)), None) is not None

    def _copy(self, namespace: str, source: str, destination: str, if_match: str) -> int:
        """Copy through kvlake: read the source, put the destination (streamed)."""
        with self._open_matching(namespace, source, 0, None, if_match) as reader:
            return self._put(namespace, destination, _read_chunks(reader))

    @abstractmethod
    def _list_blobs(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        """Iterate matching blobs in ascending key order, with size and mtime, streaming."""

    def _presign_read(self, namespace: str, key: str, expires: int) -> str:
        """Sign a GET URL; adapters that set `presigns` override this."""
        raise InvalidInputError(
            f"the {self.scheme} blockstore has no presigned URLs (pre_sign_support is false);"
            " read the object through the API"
        )

    def _presign_write(self, namespace: str, key: str, expires: int) -> str:
        """Sign a PUT URL; adapters that set `presigns` override this."""
        raise self._no_client_uploads()

    def _start_upload(self, namespace: str, key: str) -> str:
        raise self._no_client_uploads()

    def _presign_upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, expires: int
    ) -> str:
        raise self._no_client_uploads()

    def _upload_part(
        self, namespace: str, key: str, upload_id: str, part: int, chunks: Iterator[bytes]
    ) -> str:
        raise self._no_client_uploads()

    def _copy_upload_part(
        self,
        namespace: str,
        key: str,
        upload_id: str,
        part: int,
        source: tuple[str, str],
        start: int,
        end: int,
    ) -> str:
        raise self._no_client_uploads()

    def _complete_upload(
        self, namespace: str, key: str, upload_id: str, parts: Sequence[tuple[int, str]]
    ) -> str:
        raise self._no_client_uploads()

    def _list_upload_parts(self, namespace: str, key: str, upload_id: str) -> list[UploadedPart]:
        raise self._no_client_uploads()

    def _abort_upload(self, namespace: str, key: str, upload_id: str) -> None:
        raise self._no_client_uploads()

    def _abort_uploads_to(self, namespace: str, key: str) -> int:
        return 0  # an adapter without multipart uploads has none in progress

    def _no_client_uploads(self) -> InvalidInputError:
        return InvalidInputError(
            f"the {self.scheme} blockstore has no presigned URLs (pre_sign_support is false);"
            " upload the object through the API"
        )
