"""Object metadata as the catalog stores it inside graveler values.

The identity of an object is a hash of what a reader can observe (size,
checksum, content type, user metadata), not of where its bytes live, so a
retried upload of the same content is the same entry to diffs and merges.
"""

from __future__ import annotations

import hashlib

import msgspec

from kvlake.graveler import Value


def is_external(address: str) -> bool:
    """Whether an address is a full URL outside the namespace: an imported object's.

    kvlake reads such objects but never deletes them (it does not own them):
    `entry_ref` gives them no address, so no deletion record is ever written.
    """
    return "://" in address


def physical_address(namespace: str, address: str) -> str:
    """The full address of an entry's bytes: its blob in the namespace, or the imported object."""
    return address if is_external(address) else f"{namespace}/{address}"


def blob_location(namespace: str, address: str) -> tuple[str, str]:
    """The namespace and key to read an entry's bytes at: its own blob, or the imported
    object (`s3://bucket/dir/file` is the key `file` of `s3://bucket/dir`)."""
    if not is_external(address):
        return namespace, address
    parent, _, key = address.rpartition("/")
    return parent, key


class ObjectEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One object: where its bytes are in the namespace (or, imported, outside it), and
    what describes them."""

    address: str
    """A key in the namespace, or a full URL (`s3://...`) for an imported object."""
    size: int
    checksum: str
    mtime: float
    content_type: str
    metadata: dict[str, str] = {}
    blob_etag: str = ""
    """The blob's ETag as the store reported it when a client-written blob was linked
    ("" for kvlake's own writes and stores without ETags): reads pass it as If-Match,
    so a blob replaced through a presigned URL still in force is refused, not served.
    Not part of the identity: it says where the bytes are, not what they are."""
    checksums: dict[str, str] = {}
    """S3 checksums of the bytes the S3 gateway verified as they arrived: algorithm
    (`crc32`, `crc32c`, `crc64nvme`, `sha1`, `sha256`) to base64, a multipart upload's
    composite ending in `-<parts>`, as S3 reports them. lakeFS's object stats have no
    field for them, so only the gateway shows them. Not part of the identity: the same
    bytes with or without a checksum are the same object."""


class ObjectStat(msgspec.Struct, frozen=True, kw_only=True):
    """An object at a path, as listings and stat calls return it."""

    path: str
    address: str
    size: int
    checksum: str
    mtime: float
    content_type: str
    metadata: dict[str, str]
    blob_etag: str = ""
    """What reads pass as `if_match` (see ObjectEntry.blob_etag)."""
    checksums: dict[str, str] = {}
    """S3 checksums (see ObjectEntry.checksums)."""


class CommonPrefix(msgspec.Struct, frozen=True, kw_only=True):
    """A "directory" in a delimited listing: every path under it was folded into one row."""

    path: str


class ListingPage(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a listing. `next_offset` is the `after` that fetches the next page."""

    results: list[ObjectStat | CommonPrefix]
    has_more: bool
    next_offset: str


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(ObjectEntry).decode


def identity(entry: ObjectEntry) -> bytes:
    """sha256 over a length-prefixed encoding of the observable fields."""
    digest = hashlib.sha256()
    fields = [str(entry.size), entry.checksum, entry.content_type]
    for name in sorted(entry.metadata):
        fields += [name, entry.metadata[name]]
    for text in fields:
        data = text.encode()
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


def to_value(entry: ObjectEntry) -> Value:
    return Value(identity=identity(entry), data=_encode(entry))


def decode_entry(value: Value) -> ObjectEntry:
    return _decode(value.data)


def from_value(path: str, value: Value) -> ObjectStat:
    entry = _decode(value.data)
    return ObjectStat(
        path=path,
        address=entry.address,
        size=entry.size,
        checksum=entry.checksum,
        mtime=entry.mtime,
        content_type=entry.content_type,
        metadata=entry.metadata,
        blob_etag=entry.blob_etag,
        checksums=entry.checksums,
    )
