"""Entries over blobs the client writes itself: direct uploads and stageObject.

getPhysicalAddress hands out an address (and a presigned PUT URL);
linkPhysicalAddress stages it at the path once the client has uploaded the
bytes. The `lakefs` wrapper uploads this way whenever `/config/storage` reports
`pre_sign_support` (kvlake does on s3): the bytes then never pass through
kvlake. What keeps those blobs safe (signed addresses, the never-linked ones
collected) is the catalog's `PhysicalLinks` (kvlake/catalog/direct.py).

stageObject stages an entry over any blob already inside the repository's own
namespace: it marks the address shared first and checks the blob exists (the
catalog's `Links`, kvlake/catalog/links.py, says why). An address elsewhere is
refused, so kvlake never stages, and so never deletes, data it does not own.
Staging an address is reading its blob (the new path serves its bytes), so it
needs proof the caller may read it (issue 23): the address is a live ticket
getPhysicalAddress handed out for the same branch and path (the caller's own
upload), or the caller may `fs:ReadObject` every object of the repository
(allowed on `object/*`, denied nowhere under it). Otherwise a user denied
`secret/*` could stage a secret blob's address at a path it may read.
"""

from __future__ import annotations

import time
from typing import Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_object
from kvlake.api.routes.objects import wants_presign
from kvlake.api.routes.uploads import check_metadata, if_absent
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import objects as wire
from kvlake.auth import Permission, object_arn
from kvlake.blockstore import parse_address
from kvlake.catalog import DEFAULT_CONTENT_TYPE
from kvlake.catalog import relative_address as catalog_address
from kvlake.errors import InvalidInputError, PermissionDeniedError

BACKING: Final = "/repositories/{repository}/branches/{branch}/staging/backing"


def relative_address(namespace: str, given: str) -> str:
    """The key in the namespace of a physical address a client sends back.

    Raises:
        InvalidInputError: it is outside the namespace (kvlake links only its own).
    """
    try:
        key = parse_address(given, what="physical address").key_in(parse_address(namespace))
    except InvalidInputError:
        key = ""
    if not key:
        raise InvalidInputError(
            f"physical address {given!r} is outside the repository's storage namespace"
            f" {namespace!r}; kvlake links only addresses getPhysicalAddress handed out"
        )
    return key


def get_physical_address(call: Call[None]) -> Response:
    repository = call.repository
    presign = wants_presign(call)
    path = call.query.text("path")
    address, _ = call.services.links.issue(repository, call.path["branch"], path)
    namespace = repository.storage_namespace
    location = wire.StagingLocation(physical_address=f"{namespace}/{address}")
    if presign:
        # The URL outlives the link (S3 cannot revoke it): as short as a client needs to
        # start its PUT, and reads refuse a blob replaced through it (ObjectEntry.blob_etag).
        expires = call.services.settings.server.presign_upload_expiry
        url = call.services.blockstore.presign_write(namespace, address, expires=expires)
        location = wire.StagingLocation(
            physical_address=location.physical_address,
            presigned_url=url,
            presigned_url_expiry=int(time.time()) + expires,  # botocore signs at wall time
        )
    return json_response(location)


def link_physical_address(call: Call[wire.StagingMetadata]) -> Response:
    query, body = call.query, call.body
    absent = if_absent(call, "linkPhysicalAddress")
    repository = call.repository
    namespace = repository.storage_namespace
    address = relative_address(namespace, body.staging.physical_address)
    checksum = body.checksum.strip().strip('"').strip()
    if not checksum:
        raise InvalidInputError("checksum is required")  # lakeFS's text
    path = query.text("path")
    stat = call.services.links.link(
        repository,
        call.path["branch"],
        path,
        address,
        size=body.size_bytes,
        checksum=checksum,
        content_type=body.content_type or "application/octet-stream",
        metadata=dict(body.user_metadata or {}),
        if_absent=absent,
        owner=call.principal,
    )
    return json_response(convert.object_stats(stat, namespace))


READ_ANY_BLOB: Final = "fs:ReadObject"
"""What stageObject needs on every object of the repository to stage an address that is
not the caller's own upload."""


def check_read_proof(call: Call[wire.ObjectStageCreation]) -> None:
    """Refuse to stage an address the caller has not shown it may read (module docstring).

    Raises:
        InvalidInputError: the address is outside the namespace or internal (as the link).
        PermissionDeniedError: no ticket for this path, and some object is not readable.
    """
    repository = call.repository
    key = catalog_address(repository.storage_namespace, call.body.physical_address)
    if call.services.links.holds_ticket(
        repository, call.path["branch"], call.query.text("path"), key
    ):
        return
    everything = Permission(READ_ANY_BLOB, object_arn(repository.name, ""), under=True)
    assert call.user is not None
    try:
        call.services.authenticator.authorize(call.user, (everything,))
    except PermissionDeniedError as exc:
        raise PermissionDeniedError(
            f"stageObject of {call.body.physical_address!r} needs proof that you may read it:"
            " stage only an address getPhysicalAddress handed out for this branch and path, or"
            f" be allowed {everything.describe()} with no deny under it ({exc})"
        ) from None


def stage_object(call: Call[wire.ObjectStageCreation]) -> Response:
    request = call.body
    check_read_proof(call)
    stat = call.services.catalog.links.link(
        call.repository,
        call.path["branch"],
        call.query.text("path"),
        request.physical_address,
        size=request.size_bytes,
        checksum=request.checksum,
        mtime=request.mtime,
        content_type=request.content_type or DEFAULT_CONTENT_TYPE,
        metadata=check_metadata(request.metadata or {}),
        owner=call.principal,
    )
    # As lakeFS's: the stats of the new entry, without its user metadata.
    namespace = call.repository.storage_namespace
    return json_response(convert.object_stats(stat, namespace, user_metadata=False), 201)


OPERATIONS: Final = (
    Operation(
        "stageObject",
        "PUT",
        "/repositories/{repository}/branches/{branch}/objects",
        stage_object,
        "internal",
        summary="stage an entry over a blob already inside the repository's storage namespace",
        params=(params.PATH,),
        body=wire.ObjectStageCreation,
        responses={201: wire.ObjectStats, 400: None, 403: None, 404: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "getPhysicalAddress",
        "GET",
        BACKING,
        get_physical_address,
        "staging",
        summary="a fresh address to upload an object to directly, then link",
        params=(
            params.object_path("path", "object path relative to the branch"),
            params.flag(
                "presign",
                "also a presigned PUT URL for the address (blockstores that sign URLs: s3)",
            ),
        ),
        responses={200: wire.StagingLocation, 404: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "linkPhysicalAddress",
        "PUT",
        BACKING,
        link_physical_address,
        "staging",
        summary="stage an address getPhysicalAddress handed out at the path",
        params=(
            params.object_path("path", "object path relative to the branch"),
            params.header("If-None-Match", "'*': fail with 412 if the object exists"),
            params.header("If-Match", "not supported"),
        ),
        body=wire.StagingMetadata,
        responses={200: wire.ObjectStats, 400: None, 404: None, 412: None},
        # No operation text: lakeFS answers a failed condition here with its class's text,
        # "Precondition failed" (uploadObject's is "path already exists").
        permissions=on_object("fs:WriteObject"),
    ),
)
