"""lakeFS's presigned multipart uploads: the client sends the parts straight to the store.

createPresignMultipartUpload hands out an address (as getPhysicalAddress does,
logged until linked) with a started upload and presigned part URLs; uploadPart
signs more part URLs, uploadPartCopy copies a range of an object into a part
inside the store, completePresignMultipartUpload assembles the parts and links
the address at the path, abortPresignMultipartUpload drops the parts. Every call
after the first must send the physical address back, and only the one handed
out for that path and branch is accepted (the catalog's `PhysicalLinks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_object
from kvlake.api.routes.objects import PRESIGN_SECONDS
from kvlake.api.routes.staging import relative_address
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import objects as wire
from kvlake.auth import Permission, object_arn
from kvlake.blockstore import MAX_PARTS
from kvlake.catalog import UploadTarget, blob_location
from kvlake.errors import InvalidInputError

UPLOADS: Final = "/repositories/{repository}/branches/{branch}/staging/pmpu"
UPLOAD: Final = UPLOADS + "/{uploadId}"
PART: Final = UPLOAD + "/parts/{partNumber}"
_PATH: Final = params.object_path("path", "object path relative to the branch")
_RANGE: Final = re.compile(r"bytes=(\d+)-(\d+)")


def _part_number(call: Call[Any]) -> int:
    text = call.path["partNumber"]
    if not text.isdigit() or not 1 <= int(text) <= MAX_PARTS:
        raise InvalidInputError(f"part number {text!r} is invalid; use 1 to {MAX_PARTS}")
    return int(text)


def _upload_target(call: Call[Any], physical_address: str) -> UploadTarget:
    """The upload the call names: its branch, path and upload id, at the physical address
    (a full URL in the namespace, as createPresignMultipartUpload answered it)."""
    repository = call.repository
    return UploadTarget(
        repository,
        call.path["branch"],
        call.query.text("path"),
        relative_address(repository.storage_namespace, physical_address),
        call.path["uploadId"],
    )


def create_upload(call: Call[None]) -> Response:
    repository, branch, path = call.repository, call.path["branch"], call.query.text("path")
    parts = call.query.number("parts", 0)
    links = call.services.links
    address, upload_id = links.start_multipart(repository, branch, path)
    urls = [
        links.part_url(
            UploadTarget(repository, branch, path, address, upload_id),
            number,
            expires=PRESIGN_SECONDS,
        )
        for number in range(1, parts + 1)
    ]
    answer = wire.PresignMultipartUpload(
        upload_id=upload_id,
        physical_address=f"{repository.storage_namespace}/{address}",
        presigned_urls=urls or None,
    )
    return json_response(answer, 201)


def upload_part(call: Call[wire.UploadPartFrom]) -> Response:
    url = call.services.links.part_url(
        _upload_target(call, call.body.physical_address),
        _part_number(call),
        expires=PRESIGN_SECONDS,
    )
    return json_response(wire.UploadTo(presigned_url=url))


def upload_part_copy(call: Call[wire.UploadPartCopyFrom]) -> Response:
    repository, body = call.repository, call.body
    origin = body.copy_source
    services = call.services
    source_repository = (
        repository
        if origin.repository == repository.name
        else services.graveler.get_repository(origin.repository)
    )
    stat = services.catalog.stat(source_repository, origin.ref, origin.path)
    start, end = 0, stat.size
    if origin.range:
        matched = _RANGE.fullmatch(origin.range)
        if not matched or int(matched[2]) < int(matched[1]) or int(matched[2]) >= stat.size:
            raise InvalidInputError(
                f"copy range {origin.range!r} is invalid for an object of {stat.size} bytes;"
                " give one range bytes=first-last inside it"
            )
        start, end = int(matched[1]), int(matched[2]) + 1
    etag = services.links.copy_part(
        _upload_target(call, body.physical_address),
        _part_number(call),
        source=blob_location(source_repository.storage_namespace, stat.address),
        start=start,
        end=end,
    )
    return Response(status_code=204, headers={"ETag": f'"{etag}"'})


def complete_upload(call: Call[wire.CompletePresignMultipartUpload]) -> Response:
    repository, body = call.repository, call.body
    stat = call.services.links.complete_multipart(
        _upload_target(call, body.physical_address),
        [(part.part_number, part.etag) for part in body.parts],
        content_type=body.content_type or "application/octet-stream",
        metadata=dict(body.user_metadata or {}),
        owner=call.principal,
    )
    return json_response(convert.object_stats(stat, repository.storage_namespace))


def abort_upload(call: Call[wire.AbortPresignMultipartUpload]) -> Response:
    call.services.links.abort_multipart(_upload_target(call, call.body.physical_address))
    return no_content()


def _copy_needs(call: Call[wire.UploadPartCopyFrom]) -> Sequence[Permission]:
    origin = call.body.copy_source
    return (
        Permission("fs:ReadObject", object_arn(origin.repository, origin.path)),
        Permission("fs:WriteObject", object_arn(call.path["repository"], call.query.text("path"))),
    )


OPERATIONS: Final = (
    Operation(
        "createPresignMultipartUpload",
        "POST",
        UPLOADS,
        create_upload,
        "experimental",
        summary="start a multipart upload the client sends to the store itself",
        params=(
            _PATH,
            params.Param(
                "parts", "int", minimum=0, maximum=MAX_PARTS, description="part URLs to sign"
            ),
        ),
        responses={201: wire.PresignMultipartUpload, 400: None, 404: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "uploadPart",
        "PUT",
        PART,
        upload_part,
        "experimental",
        summary="a presigned URL for one part",
        params=(_PATH,),
        body=wire.UploadPartFrom,
        responses={200: wire.UploadTo, 400: None, 404: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "uploadPartCopy",
        "PUT",
        PART + "/copy",
        upload_part_copy,
        "experimental",
        summary="copy a range of an object into one part, inside the store",
        params=(_PATH,),
        body=wire.UploadPartCopyFrom,
        responses={204: None, 400: None, 404: None},
        permissions=_copy_needs,
        body_permissions=True,
    ),
    Operation(
        "completePresignMultipartUpload",
        "PUT",
        UPLOAD,
        complete_upload,
        "experimental",
        summary="assemble the parts and stage the object at the path",
        params=(_PATH,),
        body=wire.CompletePresignMultipartUpload,
        responses={200: wire.ObjectStats, 400: None, 404: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "abortPresignMultipartUpload",
        "DELETE",
        UPLOAD,
        abort_upload,
        "experimental",
        summary="drop the parts of an upload",
        params=(_PATH,),
        body=wire.AbortPresignMultipartUpload,
        responses={204: None, 400: None, 404: None},
        permissions=on_object("fs:WriteObject"),
    ),
)
