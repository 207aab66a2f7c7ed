"""GetObject and HeadObject: conditionals, one byte range, header overrides, streamed bytes.

The entry is read once; its blob streams from the blockstore in READ_CHUNK
pieces on the response's way out, so memory stays flat for any object size.
Conditionals follow S3's precedence (RFC 7232 §6): If-Match before
If-Unmodified-Since (412), If-None-Match before If-Modified-Since (304).
"""

from __future__ import annotations

import re
from email.utils import formatdate, parsedate_to_datetime
from typing import Final, NamedTuple

from starlette.responses import Response, StreamingResponse

from kvlake.auth import Permission, object_arn
from kvlake.catalog import ObjectStat, blob_location, chunks
from kvlake.catalog import object_headers as catalog_headers
from kvlake.gateway.call import S3Call
from kvlake.gateway.digests import checksum_headers
from kvlake.gateway.errors import S3Error

META_PREFIX: Final = "x-amz-meta-"
OVERRIDES: Final = {
    "response-content-type": "Content-Type",
    "response-content-language": "Content-Language",
    "response-expires": "Expires",
    "response-cache-control": "Cache-Control",
    "response-content-disposition": "Content-Disposition",
    "response-content-encoding": "Content-Encoding",
}
"""Query parameters that replace a response header (presigned downloads use them)."""
SMALL: Final = 1 << 20
"""Reads up to this size are sent in one piece; larger ones stream in READ_CHUNK pieces."""
_RANGE: Final = re.compile(r"bytes=(\d{0,19})-(\d{0,19})")


def read_object_needs(call: S3Call) -> list[Permission]:
    return [Permission("fs:ReadObject", object_arn(call.target.bucket, call.target.path))]


class Span(NamedTuple):
    start: int
    end: int


def byte_range(header: str, size: int) -> Span | None:
    """The bytes one `Range` header asks for; None for the whole object.

    S3 ignores a Range it cannot parse (several ranges, another unit) and serves
    the whole object; a range starting at or past the end is InvalidRange (416).
    """
    match = _RANGE.fullmatch(header.strip())
    if match is None or match.group(1) == match.group(2) == "":
        return None
    first, last = match.group(1), match.group(2)
    if first == "":
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise _invalid_range(size)
        return Span(max(size - suffix, 0), size)
    start = int(first)
    if start >= size:
        raise _invalid_range(size)
    end = size if last == "" else min(int(last) + 1, size)
    if end <= start:
        return None  # bytes=5-2 is not a valid range: S3 serves the whole object
    return Span(start, end)


def _invalid_range(size: int) -> S3Error:
    return S3Error(
        416, "InvalidRange", f"The requested range is not satisfiable: the object has {size} bytes"
    )


def _etag_matches(header: str, etag: str) -> bool:
    return any(tag.strip() in ("*", etag, etag.strip('"')) for tag in header.split(","))


def _since(header: str) -> float | None:
    try:
        return parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError, IndexError):
        return None  # S3 ignores a date it cannot parse


def failed_condition(call: S3Call, stat: ObjectStat, prefix: str = "") -> tuple[int, str] | None:
    """The status and header of the first conditional `stat` fails, or None if all hold.

    RFC 7232 §6's precedence, which S3 follows for GET and for CopyObject's
    `x-amz-copy-source-if-*` (`prefix`): If-Match outranks If-Unmodified-Since
    (412), If-None-Match outranks If-Modified-Since (304 for a read).
    """
    etag = f'"{stat.checksum}"'
    mtime = int(stat.mtime)
    if_match, if_none_match = (
        call.header(prefix + "if-match"),
        call.header(prefix + "if-none-match"),
    )
    if if_match and not _etag_matches(if_match, etag):
        return 412, prefix + "If-Match"
    unmodified = _since(call.header(prefix + "if-unmodified-since"))
    if not if_match and unmodified is not None and mtime > unmodified:
        return 412, prefix + "If-Unmodified-Since"
    if if_none_match:
        return (304, prefix + "If-None-Match") if _etag_matches(if_none_match, etag) else None
    modified = _since(call.header(prefix + "if-modified-since"))
    if modified is not None and mtime <= modified:
        return 304, prefix + "If-Modified-Since"
    return None


def precondition_failed(header: str) -> S3Error:
    return S3Error(412, "PreconditionFailed", f"At least one of the preconditions failed: {header}")


def check_conditions(call: S3Call, stat: ObjectStat) -> Response | None:
    """A 304 for a fresh cache, PreconditionFailed for a failed precondition, else None."""
    failed = failed_condition(call, stat)
    if failed is None:
        return None
    status, header = failed
    if status == 412:
        raise precondition_failed(header)
    return Response(
        status_code=304, headers={"ETag": f'"{stat.checksum}"', "Last-Modified": _date(stat)}
    )


def _date(stat: ObjectStat) -> str:
    return formatdate(stat.mtime, usegmt=True)


def object_headers(stat: ObjectStat) -> dict[str, str]:
    """The catalog's headers of an object, and its user metadata as `x-amz-meta-*`."""
    headers = catalog_headers(stat)
    for name, value in stat.metadata.items():
        headers[META_PREFIX + name.lower()] = value
    return headers


def _read(call: S3Call, *, with_body: bool) -> Response:
    if not call.target.path:
        raise S3Error(404, "NoSuchKey", "the key names a ref but no object; add the object's path")
    repository = call.repository
    catalog = call.backends.catalog
    stat = catalog.stat(repository, call.target.ref, call.target.path)
    early = check_conditions(call, stat)
    if early is not None:
        return early
    headers = object_headers(stat)
    for parameter, header in OVERRIDES.items():
        if parameter in call.query:
            headers[header] = call.query[parameter]
    status, span = 200, Span(0, stat.size)
    requested = call.header("range")
    if requested:
        ranged = byte_range(requested, stat.size)
        if ranged is not None:
            status, span = 206, ranged
            headers["Content-Range"] = f"bytes {span.start}-{span.end - 1}/{stat.size}"
    headers["Content-Length"] = str(span.end - span.start)
    if call.header("x-amz-checksum-mode").upper() == "ENABLED" and status == 200:
        # S3 answers the object's checksums for the whole object only, never a range.
        headers |= checksum_headers(stat.checksums)
    if not with_body:
        return Response(status_code=status, headers=headers)
    namespace, key = blob_location(repository.storage_namespace, stat.address)
    reader = catalog.blockstore.open_reader(
        namespace, key, start=span.start, end=span.end, if_match=stat.blob_etag
    )
    if span.end - span.start <= SMALL:
        with reader:  # in this thread, in one piece: no hop per chunk for a small read
            return Response(reader.read(), status, headers)
    return StreamingResponse(chunks(reader), status, headers)


def get_object(call: S3Call) -> Response:
    return _read(call, with_body=True)


def head_object(call: S3Call) -> Response:
    return _read(call, with_body=False)
