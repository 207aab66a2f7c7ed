"""Symlink files for Hive-style readers (lakeFS's createSymlinkFile).

For every folder of a ref under a prefix, one text file lists the full physical
addresses of the folder's objects, one a line, at
`<namespace>/symlinks/<repository>/<ref>/<folder>/symlink.txt` (lakeFS's layout;
objects at the top level go to `.../<ref>/symlink.txt`, where lakeFS writes an
empty path segment). A table engine pointed at a folder's symlink file reads the
ref's snapshot without going through the API.

The files are derived and rewritten on each call; no entry references them, so
the deletion log never logs them (only a purge of the namespace deletes them),
and links refuse them (`links.INTERNAL_PREFIXES`). They name blobs, not hold
them: a blob a later overwrite frees may be gone when a reader follows an old
file, as in lakeFS. Each file is streamed from the listing as it is written.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from itertools import groupby

from kvlake.blockstore import BlockStore, ChunkReader
from kvlake.catalog.records import from_value
from kvlake.graveler import Graveler, Repository, Value

SYMLINKS_PREFIX = "symlinks"


def write_symlinks(
    graveler: Graveler, blockstore: BlockStore, repository: Repository, ref: str, prefix: str
) -> str:
    """Write the symlink file of every folder under `prefix` on `ref`; return the full
    address of the folder holding them all (`<namespace>/symlinks`).

    Raises:
        RefNotFoundError: no such ref.
        InvalidInputError: a folder's name cannot be a blob key (an empty, `.` or `..`
            segment); the files of the folders before it are written.
    """
    namespace = repository.storage_namespace
    resolved = graveler.resolve_ref(repository, ref)
    start = prefix.encode()
    entries = (
        (key.decode(), value)
        for key, value in _under(graveler.list(repository, resolved, start=start), start)
    )
    for folder, group in groupby(entries, key=lambda entry: entry[0].rpartition("/")[0]):
        key = "/".join(part for part in (SYMLINKS_PREFIX, repository.name, ref, folder) if part)
        with io.BufferedReader(ChunkReader(_lines(namespace, group))) as stream:
            blockstore.put(namespace, f"{key}/symlink.txt", stream)
    return f"{namespace}/{SYMLINKS_PREFIX}"


def _under(entries: Iterable[tuple[bytes, Value]], prefix: bytes) -> Iterator[tuple[bytes, Value]]:
    for key, value in entries:
        if not key.startswith(prefix):
            return
        yield key, value


def _lines(namespace: str, group: Iterable[tuple[str, Value]]) -> Iterator[bytes]:
    separator = b""
    for path, value in group:
        yield separator + f"{namespace}/{from_value(path, value).address}".encode()
        separator = b"\n"
