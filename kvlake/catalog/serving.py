"""An object as both doors serve it over HTTP: its headers and its bytes.

The lakeFS API's getObject and the S3 gateway's GetObject answer the same object
the same way (the entry's checksum as ETag, its mtime as Last-Modified, ranges
accepted), and stream the blob in READ_CHUNK pieces so memory stays flat for any
size. Each door adds its own headers (the gateway: user metadata, checksums).
"""

from __future__ import annotations

from collections.abc import Iterator
from email.utils import formatdate
from typing import BinaryIO

from kvlake.blockstore import READ_CHUNK
from kvlake.catalog.records import ObjectStat


def object_headers(stat: ObjectStat) -> dict[str, str]:
    """The headers an object's read answers with, whichever door serves it."""
    return {
        "ETag": f'"{stat.checksum}"',
        "Last-Modified": formatdate(stat.mtime, usegmt=True),
        "Accept-Ranges": "bytes",
        "Content-Type": stat.content_type,
    }


def chunks(reader: BinaryIO) -> Iterator[bytes]:
    """A blob reader's bytes in READ_CHUNK pieces, closing it at the end (or on a drop)."""
    try:
        while chunk := reader.read(READ_CHUNK):
            yield chunk
    finally:
        reader.close()
