"""Listing an import's sources: whole (one thread), or split into parts listed in parallel.

A part (`ImportUnit`) is a folder of a source listed whole, or one folder's own
blobs (`BlockStore.list_level`); `split_sources` expands a source's folders
level by level until there are enough parts, so the parts of a source cover
each of its objects exactly once. Every part yields entries ascending by
destination path, the same entries whichever way a source was split (the
Spark import and the local one agree on every byte of a commit).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Final, Literal, NamedTuple

from kvlake.blockstore import BlobInfo, BlockStore
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.errors import InvalidInputError
from kvlake.graveler import Value, check_path

DEFAULT_CONTENT_TYPE: Final = "application/octet-stream"
MAX_SPLIT_DEPTH: Final = 4
"""Folder levels `split_sources` descends at most."""
_READ_CHUNK: Final = 1 << 20


class ImportSource(NamedTuple):
    """One location to import: a prefix (everything under it) or one object."""

    path: str
    """`s3://bucket/dir/` (or any key prefix), or `s3://bucket/dir/file` for an object."""
    destination: str
    """Where on the branch: a path prefix (prefix sources) or the object's path."""
    kind: Literal["common_prefix", "object"]


class ImportUnit(NamedTuple):
    """A part of a source to list: everything under `prefix`, or (`level`) the blobs right
    in folder `prefix` only. `prefix` is a key prefix in the source's folder."""

    source: ImportSource
    prefix: str
    level: bool = False


def whole(source: ImportSource) -> ImportUnit:
    """The part that is the whole source."""
    return ImportUnit(source, source.path.rpartition("/")[2])


def split_sources(
    blockstore: BlockStore, sources: Sequence[ImportSource], *, parts: int
) -> list[ImportUnit]:
    """Parts covering the sources, about `parts` of them where the folders allow.

    A source that is an object or a name prefix (`dir/na`) is one part; a folder
    source becomes its own blobs plus its sub-folders, which are split again
    while there are fewer than `parts` parts and `MAX_SPLIT_DEPTH` allows.
    """
    units: list[ImportUnit] = []
    folders: list[tuple[ImportSource, str]] = []
    for source in sources:
        rest = source.path.rpartition("/")[2]
        if source.kind == "object" or rest:
            units.append(whole(source))
        else:
            folders.append((source, ""))
    for _ in range(MAX_SPLIT_DEPTH):
        if not folders or len(units) + len(folders) >= parts:
            break
        deeper: list[tuple[ImportSource, str]] = []
        for source, prefix in folders:
            namespace = source.path.rpartition("/")[0]
            units.append(ImportUnit(source, prefix, level=True))
            deeper.extend((source, sub) for sub in blockstore.list_folders(namespace, prefix))
        folders = deeper
    units.extend(ImportUnit(source, prefix) for source, prefix in folders)
    return units


def unit_entries(blockstore: BlockStore, unit: ImportUnit) -> Iterator[tuple[bytes, Value]]:
    """The entries of one part, ascending by destination path.

    Raises:
        InvalidInputError: an object source that does not exist (while iterating).
    """
    source = unit.source
    folder, _, rest = source.path.rpartition("/")
    if unit.level:
        blobs = blockstore.list_level(folder, unit.prefix)
    else:
        blobs = blockstore.list_blobs(folder, (unit.prefix,))
    found = False
    for blob in blobs:
        if source.kind == "object":
            if blob.key != rest:
                break  # keys after the object's own share its name as a prefix
            path = source.destination
        else:
            path = source.destination + blob.key[len(rest) :]
        found = True
        entry = ObjectEntry(
            address=f"{folder}/{blob.key}",
            size=blob.size,
            checksum=blob.etag or _md5(blockstore, folder, blob),
            mtime=blob.mtime,
            content_type=DEFAULT_CONTENT_TYPE,
        )
        yield check_path(path), to_value(entry)
        if source.kind == "object":
            return
    if source.kind == "object" and not found:
        raise InvalidInputError(f"import source object {source.path!r} does not exist")


def _md5(blockstore: BlockStore, folder: str, blob: BlobInfo) -> str:
    """The MD5 of a blob the listing gave no ETag (a local file), as an upload's checksum."""
    digest = hashlib.md5()
    with blockstore.open_reader(folder, blob.key) as reader:
        while chunk := reader.read(_READ_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
