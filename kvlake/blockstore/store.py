"""The object-storage contract: immutable blobs addressed by namespace and key.

A storage namespace is a URL (`local://lake/repo1`, `mem://repo1`); the
adapter for its scheme stores blobs under it by key (`data/...`, `_lakefs/...`).
Blobs are written once and never modified in place, so readers need no locks;
deletion is idempotent ("not found" counts as deleted), which is what the
two-phase deletion protocol relies on.

Public methods validate their arguments once, here, then call an adapter's
private primitive; an adapter therefore only translates, and every adapter
rejects the same bad namespaces, keys and ranges with the same errors. The rules
they check are `terms.py`'s; the multipart uploads a client sends itself are the
contract's other half, `client_uploads.py`, which `BlockStore` inherits.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache, partial
from typing import BinaryIO

from kvlake.blockstore.addresses import parse_address
from kvlake.blockstore.client_uploads import ClientUploads
from kvlake.blockstore.listing import BlobInfo, parallel_listing
from kvlake.blockstore.terms import (
    MAX_NAMESPACE_BYTES,
    MAX_NAMESPACE_SEGMENT_BYTES,
    MAX_PARALLEL_LISTINGS,
    BlobHead,
    blob_replaced,
    check_expiry,
    check_key,
    read_chunks,
)
from kvlake.closing import Closing
from kvlake.errors import BlobNotFoundError, InvalidInputError, KvlakeError


class BlockStore(ClientUploads, Closing):
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

    def check_put_namespace(self, namespace: str) -> str:
        """`check_namespace` for a put, which `put` calls first: public so that a wrapper
        (`DelegatingBlockStore`) can ask its inner adapter. An adapter whose `_put` checks
        the namespace again with the key (local: its symbolic links, one path resolution
        for both) may only normalise here, so a put resolves its path once."""
        return self.check_namespace(namespace)

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
        normalised = self.check_put_namespace(namespace)
        check_key(key)
        if not isinstance(data, bytes | bytearray | memoryview) and not hasattr(data, "read"):
            raise InvalidInputError(
                f"blob data for key {key!r} is a {type(data).__name__};"
                " pass bytes or a binary stream"
            )
        return self._put(normalised, key, read_chunks(data))

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
        check_expiry(expires)
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
        check_expiry(expires)
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
        return _clean_namespace_path(namespace)

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
            return self._put(namespace, destination, read_chunks(reader))

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


@lru_cache(maxsize=1024)
def _clean_namespace_path(namespace: str) -> str:
    """The checked path of a namespace whose scheme was checked, remembered per namespace.

    A lake has few namespaces and every put, read and listing asks again; the answer
    depends on the string alone (refusals raise, and are not remembered).
    """
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
