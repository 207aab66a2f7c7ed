"""Upload ids and ListMultipartUploads.

The upload id a client holds is the upload itself: the signed address, the
store's upload id, and what Create was given (type, metadata, checksum
algorithm), so UploadPart, Complete, Abort and ListParts need no other state
(but the parts' S3 checksums, recorded beside the upload when it has an
algorithm). ListMultipartUploads lists the catalog's records of uploads in progress
(`PhysicalLinks.list_uploads`), which carry the same fields, ordered by key then
start, with S3's prefix, delimiter, key-marker, upload-id-marker and
max-uploads.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote

from starlette.responses import Response

from kvlake.gateway.call import S3Call
from kvlake.gateway.documents import Node, timestamp, xml_response
from kvlake.gateway.errors import S3Error
from kvlake.gateway.listing import encoding_of
from kvlake.graveler import MultipartUpload

MAX_UPLOADS: Final = 1000
"""S3's most uploads in one ListMultipartUploads page."""


@dataclass(frozen=True)
class Upload:
    """What an upload id carries."""

    address: str
    store_id: str
    content_type: str
    metadata: dict[str, str] = field(default_factory=dict)
    checksum_algorithm: str = ""


def upload_id(upload: MultipartUpload) -> str:
    """The id a client holds for a recorded upload (opaque, URL-safe)."""
    fields = [
        upload.address,
        upload.store_upload_id,
        upload.content_type,
        upload.metadata,
        upload.checksum_algorithm,
    ]
    text = json.dumps(fields, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def no_such_upload(call: S3Call) -> S3Error:
    return S3Error(
        404,
        "NoSuchUpload",
        f"upload {call.query.get('uploadId', '')!r} of {call.target.key!r} does not exist"
        " (completed, aborted, expired, or for another key); start a new upload",
    )


def decode_upload_id(token: str) -> Upload | None:
    """The upload an id carries, or None for something no Create handed out."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        fields = json.loads(text)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(fields, list) or len(fields) not in (4, 5):
        return None
    strings = [fields[0], fields[1], fields[2], *fields[4:]]
    if not all(isinstance(f, str) for f in strings) or not isinstance(fields[3], dict):
        return None
    metadata = {str(k): str(v) for k, v in fields[3].items()}
    algorithm = fields[4] if len(fields) == 5 else ""
    return Upload(fields[0], fields[1], fields[2], metadata, algorithm)


def upload_of(call: S3Call) -> Upload:
    """The upload the request's `uploadId` carries; NoSuchUpload if it is not an id."""
    upload = decode_upload_id(call.query.get("uploadId", ""))
    if upload is None:
        raise no_such_upload(call)
    return upload


def _uid_marker(call: S3Call, key_marker: str) -> str:
    """The uid to resume after within `key_marker`'s uploads (S3 ignores the upload id
    marker without a key marker)."""
    marker = call.query.get("upload-id-marker", "")
    if not marker or not key_marker:
        return ""
    upload = decode_upload_id(marker)
    if upload is None:
        raise S3Error(
            400,
            "InvalidArgument",
            f"upload-id-marker {marker!r} is not an upload id; use the NextUploadIdMarker"
            " a listing gave",
        )
    return upload.address.rsplit("/", 1)[-1].split(",", 1)[0]


def _max_uploads(call: S3Call) -> int:
    text = call.query.get("max-uploads", str(MAX_UPLOADS))
    if not text.isdigit():
        raise S3Error(400, "InvalidArgument", f"max-uploads {text!r} is not a whole number")
    return min(int(text), MAX_UPLOADS)


@dataclass
class _Page:
    uploads: list[MultipartUpload] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    truncated: bool = False
    last: str = ""
    """The key (an upload's or a common prefix) the next page resumes after."""
    last_upload: MultipartUpload | None = None


def _page(call: S3Call, prefix: str, delimiter: str, key_marker: str, limit: int) -> _Page:
    """Uploads and common prefixes after the markers, `limit` of them at most."""
    after_uid = _uid_marker(call, key_marker)
    # Without an upload id marker, the key marker's own uploads are past (S3).
    start, skip_key = (key_marker, "") if after_uid else (max(prefix, key_marker), key_marker)
    page = _Page()
    links, repository = call.backends.links, call.repository
    for upload in links.list_uploads(repository, start_key=start, after_uid=after_uid):
        key = upload.key
        if not key.startswith(prefix):
            if key > prefix:
                break
            continue
        if key == skip_key:
            continue
        common = ""
        if delimiter:
            cut = key.find(delimiter, len(prefix))
            if cut >= 0:
                common = key[: cut + len(delimiter)]
        if common and (common == page.last or common <= key_marker):
            continue  # rolled up already, on this page or a page before
        if len(page.uploads) + len(page.prefixes) == limit:
            page.truncated = True
            break
        if common:
            page.prefixes.append(common)
            page.last, page.last_upload = common, None
        else:
            page.uploads.append(upload)
            page.last, page.last_upload = key, upload
    return page


def _upload_row(call: S3Call, upload: MultipartUpload, encode: bool) -> Node:
    person: list[Node] = [("ID", upload.initiator), ("DisplayName", upload.initiator)]
    row: list[Node] = [
        ("Key", quote(upload.key, safe="/") if encode else upload.key),
        ("UploadId", upload_id(upload)),
        ("Initiator", person),
        ("Owner", person),
        ("StorageClass", "STANDARD"),
        ("Initiated", timestamp(upload.initiated)),
    ]
    if upload.checksum_algorithm:
        row.append(("ChecksumAlgorithm", upload.checksum_algorithm))
    return ("Upload", row)


def list_multipart_uploads(call: S3Call) -> Response:
    """One page of the repository's uploads in progress (S3's ListMultipartUploads)."""
    query = call.query
    encoding = encoding_of(call)
    encode = encoding == "url"

    def coded(value: str) -> str:
        return quote(value, safe="/") if encode else value

    prefix, delimiter = query.get("prefix", ""), query.get("delimiter", "")
    key_marker = query.get("key-marker", "")
    limit = _max_uploads(call)
    page = _page(call, prefix, delimiter, key_marker, limit)
    body: list[Node] = [
        ("Bucket", call.target.bucket),
        ("KeyMarker", coded(key_marker)),
        ("UploadIdMarker", query.get("upload-id-marker", "") if key_marker else ""),
    ]
    if page.truncated:
        next_id = upload_id(page.last_upload) if page.last_upload is not None else ""
        body += [("NextKeyMarker", coded(page.last)), ("NextUploadIdMarker", next_id)]
    if delimiter:
        body.append(("Delimiter", coded(delimiter)))
    body += [
        ("Prefix", coded(prefix)),
        ("MaxUploads", str(limit)),
        ("IsTruncated", "true" if page.truncated else "false"),
    ]
    if encoding:
        body.append(("EncodingType", encoding))
    body += [_upload_row(call, upload, encode) for upload in page.uploads]
    body += [("CommonPrefixes", [("Prefix", coded(p))]) for p in page.prefixes]
    return xml_response(("ListMultipartUploadsResult", body))
