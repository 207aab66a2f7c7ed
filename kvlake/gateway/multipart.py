"""Multipart uploads: Create, UploadPart, UploadPartCopy, Complete, Abort and ListParts.

An upload is the catalog's direct upload (`PhysicalLinks`): Create hands out a
signed address for the key's branch and path and starts the blockstore's
multipart upload to it; parts stream through to the store (on S3, as S3's
parts; a copied part is copied inside the store); Complete assembles them and
links the address at the path, through the writer flow any link takes. The
hand-out's deletion-log record deletes a completed blob that was never linked;
Abort drops the parts. The upload id the client holds carries the signed
address, the store's upload id and the type, metadata and checksum algorithm
given at Create (kvlake/gateway/uploads.py), so an id whose address was not
handed out for this branch and path, or has expired, is NoSuchUpload. With an
algorithm, every part is hashed with it and its checksum recorded by number
and ETag; Complete builds S3's composite checksum from those records.
"""

from __future__ import annotations

import re
from typing import BinaryIO, Final, cast

from starlette.responses import Response

from kvlake.auth import Permission, object_arn
from kvlake.blockstore import MAX_PARTS
from kvlake.catalog import DEFAULT_CONTENT_TYPE, UploadTarget
from kvlake.catalog.records import blob_location
from kvlake.errors import BranchNotFoundError, InvalidInputError, UploadRefusedError
from kvlake.gateway.call import S3Call
from kvlake.gateway.digests import CHECKSUM_PREFIX, algorithm_of, composite
from kvlake.gateway.documents import Node, malformed, parse, timestamp, xml_response
from kvlake.gateway.errors import S3Error
from kvlake.gateway.uploads import Upload, no_such_upload, upload_id, upload_of
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
    algorithm = _checksum_algorithm(call)
    try:
        upload = call.backends.links.start_upload(
            call.repository,
            branch,
            path,
            content_type=content_type,
            metadata=metadata,
            initiator=call.user_id,
            checksum_algorithm=algorithm,
        )
    except BranchNotFoundError as exc:
        raise refuse_non_branch(call, exc, branch) from None
    token = upload_id(upload)
    headers = {"x-amz-checksum-algorithm": algorithm.upper()} if algorithm else {}
    return xml_response(
        (
            "InitiateMultipartUploadResult",
            [("Bucket", call.target.bucket), ("Key", call.target.key), ("UploadId", token)],
        ),
        headers=headers,
    )


def _checksum_algorithm(call: S3Call) -> str:
    """The upload's checksum algorithm: its parts' checksums make the object's composite
    one, as S3's. A full-object type (a CRC combined over the parts) is not computed:
    such an upload stores no checksum."""
    name = call.header("x-amz-checksum-algorithm").lower()
    if not name or call.header("x-amz-checksum-type").upper() == "FULL_OBJECT":
        return ""
    return algorithm_of(CHECKSUM_PREFIX + name)


def _element(algorithm: str) -> str:
    """The XML element S3 gives an algorithm's checksum in (`ChecksumCRC32`)."""
    return "Checksum" + algorithm.upper()


def upload_part(call: S3Call, raw: BinaryIO) -> Response:
    part = _part_number(call)
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    algorithm = upload.checksum_algorithm
    body = body_of(call, raw, compute=algorithm)
    try:
        etag = call.backends.links.upload_part(
            _upload_target(call, address, store_id),
            part,
            cast(BinaryIO, body),
            checksum=(lambda: body.checksums()[algorithm]) if algorithm else None,
        )
    except UploadRefusedError:
        raise
    except InvalidInputError:  # the address is not this key's, or has expired
        raise no_such_upload(call) from None
    headers = {"ETag": f'"{etag}"'}
    if algorithm:
        headers[CHECKSUM_PREFIX + algorithm] = body.checksums()[algorithm]
    return Response(status_code=200, headers=headers)


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
            _upload_target(call, address, store_id),
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


def _completed_parts(
    call: S3Call, raw: BinaryIO, algorithm: str
) -> tuple[list[tuple[int, str]], dict[int, str]]:
    """The parts Complete lists (number, ETag), and the checksums it gives them."""
    document = parse(read_document(call, raw))
    if document.tag != "CompleteMultipartUpload":
        raise malformed(f"the root is <{document.tag}>, not <CompleteMultipartUpload>")
    parts = []
    given: dict[int, str] = {}
    for element in document.findall("Part"):
        number = (element.findtext("PartNumber") or "").strip()
        if not number.isdigit():
            raise malformed(f"<PartNumber> {number!r} is not a number")
        parts.append((int(number), (element.findtext("ETag") or "").strip()))
        checksum = (element.findtext(_element(algorithm)) or "").strip() if algorithm else ""
        if checksum:
            given[int(number)] = checksum
    if not parts:
        raise malformed("give at least one <Part>")
    return parts, given


def _object_checksums(
    call: S3Call, upload: Upload, parts: list[tuple[int, str]], given: dict[int, str]
) -> dict[str, str]:
    """The object's composite checksum from its parts' recorded ones; none if a part has
    none (a copied part). A checksum Complete gives that is not the part's is InvalidPart."""
    algorithm = upload.checksum_algorithm
    if not algorithm:
        return {}
    recorded = call.backends.links.part_checksums(
        call.repository, call.target.ref, call.target.path, upload.address
    )
    found = []
    for number, etag in parts:
        checksum = recorded.get((number, etag.strip('"').lower()), "")
        if number in given and given[number] != checksum:
            raise S3Error(
                400,
                "InvalidPart",
                f"part {number}'s {algorithm.upper()} {given[number]!r} is not the checksum"
                " its upload had; list the parts and send their checksums",
            )
        found.append(checksum)
    return {algorithm: composite(algorithm, found)} if all(found) else {}


def complete_multipart_upload(call: S3Call, raw: BinaryIO) -> Response:
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    parts, given = _completed_parts(call, raw, upload.checksum_algorithm)
    try:
        checksums = _object_checksums(call, upload, parts, given)
        stat = call.backends.links.complete_multipart(
            _upload_target(call, address, store_id),
            parts,
            content_type=upload.content_type,
            metadata=upload.metadata,
            owner=call.principal,
            checksums=checksums,
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
                *[(_element(name), value) for name, value in stat.checksums.items()],
                *([("ChecksumType", "COMPOSITE")] if stat.checksums else []),
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
    algorithm = upload.checksum_algorithm
    marker = _query_number(call, "part-number-marker", 0)
    limit = min(_query_number(call, "max-parts", MAX_LISTED_PARTS), MAX_LISTED_PARTS)
    try:
        parts = call.backends.links.list_parts(_upload_target(call, address, store_id))
        recorded = (
            call.backends.links.part_checksums(
                call.repository, call.target.ref, call.target.path, address
            )
            if algorithm
            else {}
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
            *_part_checksum(algorithm, recorded.get((part.number, part.etag), "")),
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
                *([("ChecksumAlgorithm", algorithm.upper())] if algorithm else []),
                *rows,
            ],
        )
    )


def _part_checksum(algorithm: str, checksum: str) -> list[Node]:
    return [(_element(algorithm), checksum)] if checksum else []


def abort_multipart_upload(call: S3Call) -> Response:
    upload = upload_of(call)
    address, store_id = upload.address, upload.store_id
    try:
        call.backends.links.abort_multipart(_upload_target(call, address, store_id))
    except UploadRefusedError:
        raise
    except InvalidInputError:
        raise no_such_upload(call) from None
    return Response(status_code=204)


def _upload_target(call: S3Call, address: str, store_id: str) -> UploadTarget:
    """The upload to `address` for the call's key (its ref and path)."""
    return UploadTarget(call.repository, call.target.ref, call.target.path, address, store_id)
