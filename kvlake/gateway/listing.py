"""Buckets and listings: ListBuckets, HeadBucket, GetBucketLocation, GetBucketVersioning,
ListObjects and ListObjectsV2.

A bucket's keys are `<ref>/<path>`. A listing whose prefix names a ref
(`main/`, `main/data/`) is the catalog's listing of that ref, keys prefixed
with it; a listing above the refs (no `/` in the prefix) sees the repository's
branches: as common prefixes with the `/` delimiter (how `aws s3 ls s3://repo/`
shows them), else every branch's objects one branch after another. Pages resume
after the last key or common prefix returned, so a continuation token is just
that key (base64, opaque to clients).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from starlette.responses import Response

from kvlake.auth import Permission, repository_arn
from kvlake.catalog import CommonPrefix, ObjectStat
from kvlake.gateway.call import S3Call
from kvlake.gateway.documents import Fragment, Node, text, timestamp, xml_response
from kvlake.gateway.errors import S3Error
from kvlake.graveler import Repository

MAX_KEYS: Final = 1000


def list_repositories_needs(call: S3Call) -> list[Permission]:
    return [Permission("fs:ListRepositories", "*")]


def read_repository_needs(call: S3Call) -> list[Permission]:
    return [Permission("fs:ReadRepository", repository_arn(call.target.bucket))]


def list_objects_needs(call: S3Call) -> list[Permission]:
    return [Permission("fs:ListObjects", repository_arn(call.target.bucket))]


def list_buckets(call: S3Call) -> Response:
    repositories = call.backends.graveler.list_repositories()
    buckets: list[Node] = [
        ("Bucket", [("Name", r.name), ("CreationDate", timestamp(r.creation_date))])
        for r in repositories
    ]
    owner: Node = ("Owner", [("ID", call.user_id), ("DisplayName", call.user_id)])
    return xml_response(("ListAllMyBucketsResult", [owner, ("Buckets", buckets)]))


def head_bucket(call: S3Call) -> Response:
    _ = call.repository
    return Response(status_code=200, headers={"x-amz-bucket-region": call.settings.region})


def get_bucket_location(call: S3Call) -> Response:
    _ = call.repository
    # S3 answers an empty constraint for us-east-1, the region every client assumes.
    region = "" if call.settings.region == "us-east-1" else call.settings.region
    return xml_response(("LocationConstraint", region))


def get_bucket_versioning(call: S3Call) -> Response:
    _ = call.repository  # versions are commits, reached as refs: S3 versioning is never on
    return xml_response(("VersioningConfiguration", []))


Row = tuple[str, "ObjectStat | CommonPrefix"]
"""A listing row: its full key (`<ref>/<path>`, or a common prefix) and the catalog's row."""


@dataclass(frozen=True)
class _Page:
    rows: list[Row]
    truncated: bool


def _in_ref(
    call: S3Call,
    repository: Repository,
    ref: str,
    prefix: str,
    delimiter: str,
    after: str,
    amount: int,
) -> _Page:
    """A page of one ref's keys under `<ref>/<prefix>`, after the full key `after`."""
    head = ref + "/"
    if after >= head and not after.startswith(head):
        return _Page([], False)  # `after` is past every key of this ref
    inner_after = after[len(head) :] if after.startswith(head) else ""
    page = call.backends.catalog.list_objects(
        repository, ref, prefix=prefix, delimiter=delimiter, after=inner_after, amount=amount
    )
    return _Page([(head + row.path, row) for row in page.results], page.has_more)


def _branches(call: S3Call, repository: Repository, prefix: str, after: str) -> Iterator[str]:
    """The branches whose names start with `prefix`, from the one `after` is in, in order."""
    start = max(prefix, after.partition("/")[0]) if after else prefix
    for name, _ in call.backends.graveler.list_branches(repository, after=start[:-1]):
        if name < start:
            continue  # `after` is exclusive in graveler: start just below `start`
        if not name.startswith(prefix):
            if name > prefix:
                return
            continue
        yield name


def _page(call: S3Call, prefix: str, delimiter: str, after: str, amount: int) -> _Page:
    repository = call.repository
    if amount == 0:
        return _Page([], False)
    ref, slash, inner = prefix.partition("/")
    if slash:
        return _in_ref(call, repository, ref, inner, delimiter, after, amount)
    rows: list[Row] = []
    for branch in _branches(call, repository, prefix, after):
        if delimiter == "/":
            common = branch + "/"
            if common > after:
                if len(rows) == amount:
                    return _Page(rows, True)
                rows.append((common, CommonPrefix(path=common)))
            continue
        page = _in_ref(call, repository, branch, "", delimiter, after, amount - len(rows))
        rows += page.rows
        if page.truncated or len(rows) == amount:
            return _Page(rows, True)  # a later branch may be empty: a last empty page is fine
    return _Page(rows, False)


def _max_keys(call: S3Call) -> int:
    text = call.query.get("max-keys", str(MAX_KEYS))
    if not text.isdigit():
        raise S3Error(400, "InvalidArgument", f"max-keys {text!r} is not a non-negative integer")
    return min(int(text), MAX_KEYS)


def encoding_of(call: S3Call) -> str:
    """The listing's `encoding-type`: '' or 'url' (InvalidArgument otherwise)."""
    encoding = call.query.get("encoding-type", "")
    if encoding not in ("", "url"):
        raise S3Error(400, "InvalidArgument", f"encoding-type {encoding!r} is invalid; use 'url'")
    return encoding


def _rows(page: _Page, encode: bool) -> list[Node]:
    contents: list[Node] = []
    prefixes: list[Node] = []
    for path, row in page.rows:
        key = text(quote(path, safe="/") if encode else path)
        if isinstance(row, CommonPrefix):
            prefixes.append(Fragment(f"<CommonPrefixes><Prefix>{key}</Prefix></CommonPrefixes>"))
            continue
        contents.append(
            Fragment(
                f"<Contents><Key>{key}</Key><LastModified>{timestamp(row.mtime)}</LastModified>"
                f'<ETag>"{row.checksum}"</ETag><Size>{row.size}</Size>'
                "<StorageClass>STANDARD</StorageClass></Contents>"
            )
        )
    return contents + prefixes


def _common(call: S3Call, name: str, value: str, encode: bool) -> list[Node]:
    return [(name, quote(value, safe="/") if encode else value)]


def list_objects_v2(call: S3Call) -> Response:
    query = call.query
    encoding = encoding_of(call)
    encode = encoding == "url"
    prefix, delimiter = query.get("prefix", ""), query.get("delimiter", "")
    token = query.get("continuation-token", "")
    start_after = query.get("start-after", "")
    after = _decode_token(token) if token else start_after
    amount = _max_keys(call)
    page = _page(call, prefix, delimiter, after, amount)
    rows = _rows(page, encode)
    body: list[Node] = [
        ("Name", call.target.bucket),
        *_common(call, "Prefix", prefix, encode),
        *(_common(call, "Delimiter", delimiter, encode) if delimiter else []),
        ("MaxKeys", str(amount)),
        ("KeyCount", str(len(page.rows))),
        ("IsTruncated", "true" if page.truncated else "false"),
    ]
    if token:
        body.append(("ContinuationToken", token))
    if start_after:
        body += _common(call, "StartAfter", start_after, encode)
    if page.truncated and page.rows:
        body.append(("NextContinuationToken", _encode_token(page.rows[-1][0])))
    if encoding:
        body.append(("EncodingType", encoding))
    return xml_response(("ListBucketResult", body + rows))


def list_objects(call: S3Call) -> Response:
    query = call.query
    encoding = encoding_of(call)
    encode = encoding == "url"
    prefix, delimiter = query.get("prefix", ""), query.get("delimiter", "")
    marker = query.get("marker", "")
    amount = _max_keys(call)
    page = _page(call, prefix, delimiter, marker, amount)
    body: list[Node] = [
        ("Name", call.target.bucket),
        *_common(call, "Prefix", prefix, encode),
        *_common(call, "Marker", marker, encode),
        *(_common(call, "Delimiter", delimiter, encode) if delimiter else []),
        ("MaxKeys", str(amount)),
        ("IsTruncated", "true" if page.truncated else "false"),
    ]
    if page.truncated and page.rows:
        body += _common(call, "NextMarker", page.rows[-1][0], encode)
    if encoding:
        body.append(("EncodingType", encoding))
    return xml_response(("ListBucketResult", body + _rows(page, encode)))


def _encode_token(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode()


def _decode_token(token: str) -> str:
    try:
        return base64.urlsafe_b64decode(token.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise S3Error(
            400, "InvalidArgument", "the continuation token is invalid; use the one a listing gave"
        ) from None
