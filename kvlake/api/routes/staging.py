"""Entries over blobs already in storage: stageObject, getPhysicalAddress, linkPhysicalAddress.

lakeFS's clients write a blob themselves (to an address getPhysicalAddress
handed out, or one they chose) and then stage an entry over it. kvlake links
only blobs inside the repository's own storage namespace, marks them shared
first and checks they exist (kvlake/catalog/links.py says why): an address
elsewhere is refused, so kvlake never stages, and so never deletes, data it
does not own. getPhysicalAddress's addresses are not signed, unlike lakeFS's:
stageObject links any blob of the namespace with the same permission, so a
signature would guard nothing more.
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_object
from kvlake.api.routes.uploads import check_metadata
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import objects as wire
from kvlake.catalog import DEFAULT_CONTENT_TYPE, ObjectStat
from kvlake.errors import InvalidInputError

STAGING: Final = "/repositories/{repository}/branches/{branch}/staging/backing"


def stage_object(call: Call[wire.ObjectStageCreation]) -> Response:
    request = call.body
    stat = _link(
        call,
        request.physical_address,
        checksum=request.checksum,
        size=request.size_bytes,
        mtime=request.mtime,
        content_type=request.content_type,
        metadata=request.metadata,
    )
    # As lakeFS's: the stats of the new entry, without its user metadata.
    namespace = call.repository.storage_namespace
    return json_response(convert.object_stats(stat, namespace, user_metadata=False), 201)


def get_physical_address(call: Call[None]) -> Response:
    address = call.services.catalog.links.new_physical_address(call.repository)
    return json_response(wire.StagingLocation(physical_address=address))


def link_physical_address(call: Call[wire.StagingMetadata]) -> Response:
    request = call.body
    if_none_match = call.query.text("If-None-Match")
    if if_none_match not in ("", "*"):
        raise InvalidInputError("If-None-Match supports only '*' (do not overwrite)")
    if call.query.has("If-Match"):
        raise InvalidInputError("If-Match is not supported on link; omit it")
    checksum = request.checksum.strip().strip('"').strip()
    if not checksum:
        raise InvalidInputError("checksum is required")  # lakeFS's text
    if not request.staging.physical_address:
        raise InvalidInputError("staging.physical_address is required; send getPhysicalAddress's")
    stat = _link(
        call,
        request.staging.physical_address,
        checksum=checksum,
        size=request.size_bytes,
        mtime=request.mtime,
        content_type=request.content_type,
        metadata=request.user_metadata,
        if_absent=if_none_match == "*",
    )
    return json_response(convert.object_stats(stat, call.repository.storage_namespace))


def _link(
    call: Call[wire.ObjectStageCreation] | Call[wire.StagingMetadata],
    physical_address: str,
    *,
    checksum: str,
    size: int,
    mtime: int | None,
    content_type: str | None,
    metadata: dict[str, str] | None,
    if_absent: bool = False,
) -> ObjectStat:
    return call.services.catalog.links.link(
        call.repository,
        call.path["branch"],
        call.query.text("path"),
        physical_address,
        size=size,
        checksum=checksum,
        mtime=mtime,
        content_type=content_type or DEFAULT_CONTENT_TYPE,
        metadata=check_metadata(metadata or {}),
        if_absent=if_absent,
    )


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
        STAGING,
        get_physical_address,
        "staging",
        summary="a fresh address inside the storage namespace to write a blob to, then link",
        params=(
            params.PATH,
            params.unsupported("presign", "kvlake has no presigned uploads"),
        ),
        responses={200: wire.StagingLocation, 404: None},
        permissions=on_object("fs:WriteObject"),
    ),
    Operation(
        "linkPhysicalAddress",
        "PUT",
        STAGING,
        link_physical_address,
        "staging",
        summary="stage an entry over the blob written at a staging location",
        params=(
            params.PATH,
            params.header("If-None-Match", "'*': fail with 412 if the object exists"),
            params.header("If-Match", "not supported"),
        ),
        body=wire.StagingMetadata,
        responses={200: wire.ObjectStats, 400: None, 403: None, 404: None, 412: None},
        # No operation text: lakeFS answers a failed condition here with its class's text,
        # "Precondition failed" (uploadObject's is "path already exists").
        permissions=on_object("fs:WriteObject"),
    ),
)
