"""Multipart uploads: Create, UploadPart, UploadPartCopy, Complete and Abort.

An upload is the catalog's direct upload (`PhysicalLinks`): Create hands out a
signed address for the key's branch and path and starts the blockstore's
multipart upload to it; parts stream through to the store (on S3, as S3's
parts; a copied part is copied inside the store); Complete assembles them and
links the address at the path, through the writer flow any link takes. The
hand-out's deletion-log record deletes a completed blob that was never linked;
Abort drops the parts. The upload id the client holds carries the signed
address, the store's upload id and the type and metadata given at Create, so
no server state is kept: an id whose address was not handed out for this
branch and path, or has expired, is NoSuchUpload.
"""

from __future__ import annotations

import re
from typing import BinaryIO, Final

from starlette.responses import Response

from kvlake.auth import Permission, object_arn
from kvlake.blockstore import MAX_PARTS
from kvlake.catalog import DEFAULT_CONTENT_TYPE
from kvlake.catalog.records import blob_location
from kvlake.errors import BranchNotFoundError, InvalidInputError, UploadRefusedError
from kvlake.gateway.call import S3Call
from kvlake.gateway.documents import Node, malformed, parse, timestamp, xml_response
from kvlake.gateway.errors import S3Error
from kvlake.gateway.uploads import no_such_upload, upload_id, upload_of
from kvlake.gateway.writing import (
    body_of,
    check_key_path,
    copy_source,
    read_document,
    refuse_non_branch,
    user_metadata,
    write_object_needs,
)

_COPY_RANGE: Final = re.compile(r"bytes=(\d+)-(\d+)")


def _part_number(call: S3Call) -> int:
    text = call.query.get("partNumber", "")
    if not text.isdigit() or not 1 <= int(text) <= MAX_PARTS:
        raise S3Error(
            400, "InvalidArgument", f"part number {text!r} is invalid; use 1 to {MAX_PARTS}"
        )
    return int(text)


def create_multipart_upload(call: S3Call) -> Response:
    path = check_key_path(call.target.path)
    branch = call.target.ref
    metadata = user_metadata(call)
    content_type = call.header("content-type") or DEFAULT_CONTENT_TYPE
    try:
        upload = call.backends.links.start_upload(
            call.repository,
            branch,
            path,
            content_type=content_type,
            metadata=metadata,
            initiator=call.user_id,
        )
    except BranchNotFoundError as exc:
        raise refuse_non_branch(call, exc, branch) from None
    token = upload_id(upload)
    return xml_response(
        (
            "InitiateMultipartUploadResult",
            [("Bucket", call.target.bucket), ("Key", call.target.key), ("UploadId", token)],
        )
    )


def upload_part(call: S3Call, raw: BinaryIO) -> Response:
    part = _part_number(call)
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    body = body_of(call, raw)
    try:
        etag = call.backends.links.upload_part(
            call.repository, call.target.ref, call.target.path, address, store_id, part, body
        )
    except UploadRefusedError:
        raise
    except InvalidInputError:  # the address is not this key's, or has expired
        raise no_such_upload(call) from None
    return Response(status_code=200, headers={"ETag": f'"{etag}"'})


def upload_part_copy_needs(call: S3Call) -> list[Permission]:
    _, path = copy_source(call)
    return [
        Permission("fs:ReadObject", object_arn(call.target.bucket, path)),
        *write_object_needs(call),
    ]


def upload_part_copy(call: S3Call) -> Response:
    part = _part_number(call)
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    source_ref, source_path = copy_source(call)
    repository = call.repository
    stat = call.backends.catalog.stat(repository, source_ref, source_path)
    start, end = 0, stat.size
    wanted = call.header("x-amz-copy-source-range")
    if wanted:
        match = _COPY_RANGE.fullmatch(wanted)
        if match is None or int(match[1]) > int(match[2]) or int(match[2]) >= stat.size:
            raise S3Error(
                416 if match else 400,
                "InvalidRange" if match else "InvalidArgument",
                f"x-amz-copy-source-range {wanted!r} is not 'bytes=first-last' inside the"
                f" source's {stat.size} bytes",
            )
        start, end = int(match[1]), int(match[2]) + 1
    if start == end:
        raise S3Error(400, "InvalidRequest", "the copy source is empty; a part needs bytes")
    source = blob_location(repository.storage_namespace, stat.address)
    try:
        etag = call.backends.links.copy_part(
            repository,
            call.target.ref,
            call.target.path,
            address,
            store_id,
            part,
            source=source,
            start=start,
            end=end,
        )
    except UploadRefusedError:
        raise
    except InvalidInputError:
        raise no_such_upload(call) from None
    return xml_response(
        ("CopyPartResult", [("LastModified", timestamp(stat.mtime)), ("ETag", f'"{etag}"')])
    )


def _completed_parts(call: S3Call, raw: BinaryIO) -> list[tuple[int, str]]:
    document = parse(read_document(call, raw))
    if document.tag != "CompleteMultipartUpload":
        raise malformed(f"the root is <{document.tag}>, not <CompleteMultipartUpload>")
    parts = []
    for element in document.findall("Part"):
        number = (element.findtext("PartNumber") or "").strip()
        if not number.isdigit():
            raise malformed(f"<PartNumber> {number!r} is not a number")
        parts.append((int(number), (element.findtext("ETag") or "").strip()))
    if not parts:
        raise malformed("give at least one <Part>")
    return parts


def complete_multipart_upload(call: S3Call, raw: BinaryIO) -> Response:
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    parts = _completed_parts(call, raw)
    try:
        stat = call.backends.links.complete_multipart(
            call.repository,
            call.target.ref,
            call.target.path,
            address,
            store_id,
            parts,
            content_type=upload.content_type,
            metadata=upload.metadata,
            owner=call.principal,
        )
    except UploadRefusedError:
        raise
    except InvalidInputError:
        raise no_such_upload(call) from None
    return xml_response(
        (
            "CompleteMultipartUploadResult",
            [
                ("Location", f"/{call.target.bucket}/{call.target.key}"),
                ("Bucket", call.target.bucket),
                ("Key", call.target.key),
                ("ETag", f'"{stat.checksum}"'),
            ],
        )
    )


MAX_LISTED_PARTS: Final = 1000
"""S3's most parts in one ListParts page."""


def _query_number(call: S3Call, name: str, default: int) -> int:
    text = call.query.get(name, "")
    if not text:
        return default
    if not text.isdigit():
        raise S3Error(400, "InvalidArgument", f"{name} {text!r} is not a whole number")
    return int(text)


def list_parts(call: S3Call) -> Response:
    """One page of the upload's parts, after `part-number-marker`, at most `max-parts`."""
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    marker = _query_number(call, "part-number-marker", 0)
    limit = min(_query_number(call, "max-parts", MAX_LISTED_PARTS), MAX_LISTED_PARTS)
    try:
        parts = call.backends.links.list_parts(
            call.repository, call.target.ref, call.target.path, address, store_id
        )
    except UploadRefusedError:
        raise
    except InvalidInputError:
        raise no_such_upload(call) from None
    after = [part for part in parts if part.number > marker]
    page, truncated = after[:limit], len(after) > limit
    rows: list[Node] = [
        ("Part", [
            ("PartNumber", str(part.number)),
            ("LastModified", timestamp(part.mtime)),
            ("ETag", f'"{part.etag}"'),
            ("Size", str(part.size)),
        ])
        for part in page
    ]  # fmt: skip
    return xml_response(
        (
            "ListPartsResult",
            [
                ("Bucket", call.target.bucket),
                ("Key", call.target.key),
                ("UploadId", call.query.get("uploadId", "")),
                ("PartNumberMarker", str(marker)),
                ("NextPartNumberMarker", str(page[-1].number if page else marker)),
                ("MaxParts", str(limit)),
                ("IsTruncated", "true" if truncated else "false"),
                ("StorageClass", "STANDARD"),
                *rows,
            ],
        )
    )


def abort_multipart_upload(call: S3Call) -> Response:
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    try:
        call.backends.links.abort_multipart(
            call.repository, call.target.ref, call.target.path, address, store_id
        )
    except UploadRefusedError:
        raise
    except InvalidInputError:
        raise no_such_upload(call) from None
    return Response(status_code=204)
