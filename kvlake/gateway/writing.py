"""PutObject, CopyObject, DeleteObject and DeleteObjects, through the catalog's writer flow.

Each write is the catalog call a REST upload, copy or delete makes (staging,
the deletion log for replaced blobs, delete locks, branch protection), so the
gateway adds translation and nothing of its own about data. A body is decoded
(aws-chunked) and verified (Content-MD5, x-amz-checksum-*, the signed sha256)
while the blockstore pulls it; a mismatch fails the put, so nothing is staged.
Writes go to branches only: a tag or a commit is refused with MethodNotAllowed.
"""

from __future__ import annotations

from typing import BinaryIO, Final, cast
from urllib.parse import unquote

from starlette.responses import Response

from kvlake.auth import Permission, object_arn
from kvlake.catalog import DEFAULT_CONTENT_TYPE, ObjectStat
from kvlake.errors import BranchNotFoundError, EntryNotFoundError, KvlakeError, NotFoundError
from kvlake.gateway import sigv4
from kvlake.gateway.call import S3Call
from kvlake.gateway.chunked import ChunkedReader
from kvlake.gateway.digests import Expected, VerifyingReader, checksum_headers
from kvlake.gateway.documents import (
    MAX_XML_BYTES,
    Node,
    malformed,
    parse,
    timestamp,
    xml_response,
)
from kvlake.gateway.errors import S3Error, not_implemented, s3_error_of
from kvlake.gateway.reading import META_PREFIX, failed_condition, precondition_failed

MAX_METADATA_BYTES: Final = 2 * 1024
"""S3's limit on user metadata in a PUT's headers."""
MAX_DELETE_KEYS: Final = 1000
COPY_SOURCE_PREFIX: Final = "x-amz-copy-source-"
"""CopyObject's conditionals on its source: `x-amz-copy-source-if-match` and the like."""


def write_object_needs(call: S3Call) -> list[Permission]:
    return [Permission("fs:WriteObject", object_arn(call.target.bucket, call.target.path))]


def delete_object_needs(call: S3Call) -> list[Permission]:
    return [Permission("fs:DeleteObject", object_arn(call.target.bucket, call.target.path))]


def per_key_needs(call: S3Call) -> list[Permission]:
    """Nothing up front: DeleteObjects authorizes each key, and lists the ones refused."""
    return []


def check_key_path(path: str) -> str:
    """The object path of a write; S3's error for one kvlake must not store."""
    if not path:
        raise S3Error(
            400, "InvalidArgument", "the key names a branch but no object; use '<branch>/<path>'"
        )
    if "\0" in path:
        raise S3Error(400, "InvalidArgument", "the key contains NUL; remove it")
    if any(part in (".", "..") for part in path.split("/")):
        raise S3Error(
            400,
            "InvalidArgument",
            f"the key {path!r} has a '.' or '..' segment, which tools resolve differently;"
            " use a key without them",
        )
    return path


def user_metadata(call: S3Call) -> dict[str, str]:
    metadata = {
        name[len(META_PREFIX) :]: values[0]
        for name, values in call.headers.items()
        if name.startswith(META_PREFIX) and len(name) > len(META_PREFIX)
    }
    if sum(len(k.encode()) + len(v.encode()) for k, v in metadata.items()) > MAX_METADATA_BYTES:
        raise S3Error(
            400,
            "MetadataTooLarge",
            f"user metadata is over {MAX_METADATA_BYTES} bytes; send less",
        )
    return metadata


def body_of(call: S3Call, raw: BinaryIO, *, compute: str = "") -> VerifyingReader:
    """The request's decoded, verified body: the bytes the object will hold (its
    `checksums()` once read, with `compute`'s among them)."""
    chunked = call.payload in sigv4.STREAMING or "aws-chunked" in call.header("content-encoding")
    declared = call.header("x-amz-decoded-content-length" if chunked else "content-length")
    length = int(declared) if declared.isdigit() else None
    expected = Expected(
        {name: values[0] for name, values in call.headers.items()},
        declared_trailer=call.header("x-amz-trailer"),
    )
    if not chunked:
        if call.payload and call.payload != sigv4.UNSIGNED:
            expected.sha256_hex = call.payload  # read_signature let only a hex sha256 through
        return VerifyingReader(raw, expected, length=length, compute=compute)
    trailer = call.payload.endswith("-TRAILER") or bool(expected.trailer)
    decoded = ChunkedReader(raw, signer=call.signer, trailer=trailer)
    return VerifyingReader(
        cast(BinaryIO, decoded),
        expected,
        trailers=lambda: decoded.trailers,
        length=length,
        compute=compute,
    )


def _if_absent(call: S3Call) -> bool:
    if_none_match = call.header("if-none-match")
    if if_none_match not in ("", "*"):
        raise not_implemented("If-None-Match other than '*' on PutObject")
    if call.header("if-match"):
        raise not_implemented("If-Match on PutObject")
    return if_none_match == "*"


def refuse_non_branch(call: S3Call, exc: BranchNotFoundError, ref: str) -> S3Error:
    """A write to a ref that is not a branch: MethodNotAllowed for a tag or commit."""
    try:
        call.backends.graveler.resolve_ref(call.repository, ref)
    except NotFoundError:
        return s3_error_of(exc)
    return S3Error(
        405,
        "MethodNotAllowed",
        f"{ref!r} is a tag or a commit, which never change; write to a branch",
    )


def put_object(call: S3Call, raw: BinaryIO) -> Response:
    if call.header("x-amz-copy-source"):
        return copy_object(call)
    path = check_key_path(call.target.path)
    branch = call.target.ref
    absent = _if_absent(call)
    metadata = user_metadata(call)
    body = body_of(call, raw)
    try:
        stat = call.backends.catalog.upload(
            call.repository,
            branch,
            path,
            cast(BinaryIO, body),
            content_type=call.header("content-type") or None,
            metadata=metadata,
            if_absent=absent,
            owner=call.principal,
            checksums=body.checksums,
        )
    except BranchNotFoundError as exc:
        raise refuse_non_branch(call, exc, branch) from None
    headers = {"ETag": f'"{stat.checksum}"'} | checksum_headers(stat.checksums)
    return Response(status_code=200, headers=headers)


def copy_source(call: S3Call) -> tuple[str, str]:
    source = unquote(call.header("x-amz-copy-source")).partition("?")[0].removeprefix("/")
    bucket, _, key = source.partition("/")
    ref, _, path = key.partition("/")
    if not bucket or not ref or not path:
        raise S3Error(
            400,
            "InvalidArgument",
            "x-amz-copy-source must be '<repository>/<ref>/<path>'",
        )
    if bucket != call.target.bucket:
        raise S3Error(
            400,
            "InvalidArgument",
            f"copy source is in repository {bucket!r}; copies stay within one repository",
        )
    return ref, path


def copy_object_needs(call: S3Call) -> list[Permission]:
    ref, path = copy_source(call)
    return [
        Permission("fs:ReadObject", object_arn(call.target.bucket, path)),
        *write_object_needs(call),
    ]


def copy_object(call: S3Call) -> Response:
    source_ref, source_path = copy_source(call)
    path = check_key_path(call.target.path)
    directive = call.header("x-amz-metadata-directive").upper() or "COPY"
    if directive not in ("COPY", "REPLACE"):
        raise S3Error(
            400, "InvalidArgument", f"x-amz-metadata-directive {directive!r} is not COPY or REPLACE"
        )
    replace = directive == "REPLACE"
    branch = call.target.ref

    def check_source(source: ObjectStat) -> None:
        # S3 answers 412 for every failed x-amz-copy-source-if-* (never a 304).
        failed = failed_condition(call, source, COPY_SOURCE_PREFIX)
        if failed is not None:
            raise precondition_failed(failed[1])

    try:
        stat = call.backends.catalog.copy_object(
            call.repository,
            source_ref,
            source_path,
            branch,
            path,
            shallow=False,
            owner=call.principal,
            # REPLACE: the request's type and metadata, as S3 (no type: S3's default).
            content_type=(call.header("content-type") or DEFAULT_CONTENT_TYPE) if replace else None,
            metadata=user_metadata(call) if replace else None,
            check_source=check_source,
        )
    except BranchNotFoundError as exc:
        raise refuse_non_branch(call, exc, branch) from None
    return xml_response(
        (
            "CopyObjectResult",
            [("LastModified", timestamp(stat.mtime)), ("ETag", f'"{stat.checksum}"')],
        )
    )


def delete_object(call: S3Call) -> Response:
    path = check_key_path(call.target.path)
    branch = call.target.ref
    try:
        call.backends.catalog.delete_object(call.repository, branch, path, owner=call.principal)
    except EntryNotFoundError:
        pass  # S3 answers 204 for a key that is not there
    except BranchNotFoundError as exc:
        raise refuse_non_branch(call, exc, branch) from None
    return Response(status_code=204)


def read_document(call: S3Call, raw: BinaryIO) -> bytes:
    """A request's XML body, verified and read to its end (its digests are checked there),
    at most MAX_XML_BYTES: a longer one is refused before it is all read."""
    body = body_of(call, raw)
    parts: list[bytes] = []
    size = 0
    while chunk := body.read(64 << 10):
        size += len(chunk)
        if size > MAX_XML_BYTES:
            raise malformed(f"the document is over {MAX_XML_BYTES} bytes")
        parts.append(chunk)
    return b"".join(parts)


def _delete_request(call: S3Call, raw: BinaryIO) -> tuple[list[str], bool]:
    document = parse(read_document(call, raw))
    if document.tag != "Delete":
        raise malformed(f"the root is <{document.tag}>, not <Delete>")
    keys = [(item.findtext("Key") or "") for item in document.findall("Object")]
    if not keys or len(keys) > MAX_DELETE_KEYS:
        raise malformed(f"give 1 to {MAX_DELETE_KEYS} <Object> elements, not {len(keys)}")
    quiet = (document.findtext("Quiet") or "").strip().lower() == "true"
    return keys, quiet


def delete_objects(call: S3Call, raw: BinaryIO) -> Response:
    """Every key is authorized and tried on its own; failures are listed, not raised."""
    keys, quiet = _delete_request(call, raw)
    repository = call.repository
    results: list[Node] = []
    for key in keys:
        ref, _, path = key.partition("/")
        try:
            check_key_path(path)
            call.authorize([Permission("fs:DeleteObject", object_arn(repository.name, path))])
            call.backends.catalog.delete_object(repository, ref, path, owner=call.principal)
        except EntryNotFoundError:
            pass
        except (S3Error, KvlakeError) as exc:
            error = exc if isinstance(exc, S3Error) else s3_error_of(exc)
            results.append(
                ("Error", [("Key", key), ("Code", error.code), ("Message", error.message)])
            )
            continue
        if not quiet:
            results.append(("Deleted", [("Key", key)]))
    return xml_response(("DeleteResult", results))
