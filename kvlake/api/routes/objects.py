"""Objects: read (whole, ranged, HEAD), stat, list, delete, delete many, copy.

Small objects are read in the handler's thread and sent in one piece; larger ones
stream from the blockstore in chunks, so memory stays flat for any object size.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

import msgspec
from starlette.responses import Response, StreamingResponse

from kvlake.api import convert, params
from kvlake.api.errors import error_body, error_response, status_of
from kvlake.api.needs import on_object, on_repository
from kvlake.api.ranges import ByteRange, parse_range
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import objects as wire
from kvlake.api.wire.common import pagination
from kvlake.auth import Permission, object_arn
from kvlake.catalog import CommonPrefix, ObjectStat, blob_location, chunks, object_headers
from kvlake.errors import InvalidInputError

API_GROUP: Final = "objects"
READ: Final = "/repositories/{repository}/refs/{ref}/objects"
WRITE: Final = "/repositories/{repository}/branches/{branch}/objects"
_SMALL: Final = 1 << 20
_NO_PRESIGN: Final = params.unsupported(
    "presign",
    "kvlake presigns single objects, not a listing's entries; ask statObject or getObject"
    " with presign=true for each object",
)
_PRESIGN: Final = params.flag(
    "presign",
    "answer with a URL of the object store (getObject: a 302 to it; statObject: as"
    " physical_address) instead of the bytes; only on blockstores that sign URLs (s3)",
)
PRESIGN_SECONDS: Final = 15 * 60
"""How long a presigned URL is valid: lakeFS's default."""


def wants_presign(call: Call[Any]) -> bool:
    """Whether the call asked for a presigned URL, refusing it where none can be made.

    Whether the blockstore can sign is known only at run time, so unlike the
    flags `params.unsupported` refuses, this one is checked here, before any read.
    """
    if not call.query.flag("presign"):
        return False
    blockstore = call.services.blockstore
    if not blockstore.presigns:
        raise InvalidInputError(
            f"query parameter 'presign' is not supported: the {blockstore.scheme} blockstore"
            " has no presigned URLs (pre_sign_support is false); leave presign false"
        )
    return True


def _presign(call: Call[Any], stat: ObjectStat) -> str:
    namespace, key = blob_location(call.repository.storage_namespace, stat.address)
    # A linked blob replaced through its presigned PUT URL gets no read URL (issue 23).
    return call.services.blockstore.presign_read(
        namespace, key, expires=PRESIGN_SECONDS, if_match=stat.blob_etag
    )


def _read(call: Call[Any], *, with_body: bool) -> Response:
    catalog = call.services.catalog
    repository = call.repository
    ref, path = call.path["ref"], call.query.text("path")
    presign = with_body and wants_presign(call)
    stat = catalog.stat(repository, ref, path)
    if presign:
        return Response(status_code=302, headers={"Location": _presign(call, stat)})
    headers = object_headers(stat)
    if_none_match = call.query.text("If-None-Match")
    if if_none_match and if_none_match.strip() in (headers["ETag"], stat.checksum, "*"):
        return Response(status_code=304, headers={"ETag": headers["ETag"]})
    status, span = 200, ByteRange(0, stat.size, stat.size)
    if call.query.has("Range"):
        span = parse_range(call.query.text("Range"), stat.size)
        if not span.satisfiable:
            response = error_response(416, f"range is beyond the object's {stat.size} bytes")
            response.headers["Content-Range"] = span.content_range()
            return response
        status = 206
        headers["Content-Range"] = span.content_range()
    headers["Content-Length"] = str(span.end - span.start)
    if not with_body:
        return Response(status_code=status, headers=headers)
    _, reader = catalog.open_object(repository, ref, path, start=span.start, end=span.end)
    if span.end - span.start <= _SMALL:
        with reader:
            return Response(reader.read(), status, headers)
    return StreamingResponse(chunks(reader), status, headers)


def get_object(call: Call[None]) -> Response:
    return _read(call, with_body=True)


def head_object(call: Call[None]) -> Response:
    return _read(call, with_body=False)


def stat_object(call: Call[None]) -> Response:
    # The record, the branch and the path's staged entry are read together and handed
    # down: one round trip once this process knows the branch's tokens.
    ref, path = call.path["ref"], call.query.text("path")
    read = call.read_branch(ref, path=path)  # a ref that names no branch reads nothing more
    repository = read.repository
    presign = wants_presign(call)
    stat = call.services.catalog.stat(repository, ref, path, read=read)
    user_metadata = call.query.flag("user_metadata", True)
    stats = convert.object_stats(stat, repository.storage_namespace, user_metadata=user_metadata)
    if presign:
        stats = msgspec.structs.replace(
            stats,
            physical_address=_presign(call, stat),
            physical_address_expiry=int(time.time()) + PRESIGN_SECONDS,
        )
    return json_response(stats)


def get_underlying_properties(call: Call[None]) -> Response:
    """lakeFS's local adapter has no storage classes: `storage_class` is null once the
    object is found, as there."""
    call.services.catalog.stat(call.repository, call.path["ref"], call.query.text("path"))
    return json_response(wire.UnderlyingObjectProperties(storage_class=None))


def list_objects(call: Call[None]) -> Response:
    query = call.query
    ref = call.path["ref"]
    read = call.read_branch(ref)  # the record and the branch in one round trip
    repository = read.repository
    listing = call.services.catalog.list_objects(
        repository,
        ref,
        prefix=query.text("prefix"),
        delimiter=query.text("delimiter"),
        after=query.text("after"),
        amount=query.amount(),
        read=read,
    )
    namespace = repository.storage_namespace
    user_metadata = query.flag("user_metadata", True)
    results = [
        convert.common_prefix(row.path)
        if isinstance(row, CommonPrefix)
        else convert.object_stats(row, namespace, user_metadata=user_metadata)
        for row in listing.results
    ]
    page = pagination(len(results), has_more=listing.has_more, next_offset=listing.next_offset)
    return json_response(wire.ObjectStatsList(pagination=page, results=results))


def delete_object(call: Call[None]) -> Response:
    repository = call.repository
    call.services.catalog.delete_object(
        repository, call.path["branch"], call.query.text("path"), owner=call.principal
    )
    return no_content()


def delete_objects(call: Call[wire.PathList]) -> Response:
    request = call.body
    repository = call.repository
    failures = call.services.catalog.delete_objects(
        repository, call.path["branch"], request.paths, owner=call.principal
    )
    errors = [
        wire.ObjectError(status_code=status_of(exc), message=error_body(exc).message, path=path)
        for path, exc in failures
    ]
    return json_response(wire.ObjectErrorList(errors=errors))


def copy_object(call: Call[wire.ObjectCopyCreation]) -> Response:
    request = call.body
    repository = call.repository
    branch = call.path["branch"]
    stat = call.services.catalog.copy_object(
        repository,
        request.src_ref or branch,
        request.src_path,
        branch,
        call.query.text("dest_path"),
        # lakeFS's default copies the bytes (inside the store on s3); shallow shares them.
        shallow=bool(request.shallow),
        owner=call.principal,
    )
    return json_response(convert.object_stats(stat, repository.storage_namespace), 201)


def _delete_many_needs(call: Call[wire.PathList]) -> Sequence[Permission]:
    request = call.body
    repository = call.path["repository"]
    return [Permission("fs:DeleteObject", object_arn(repository, p)) for p in request.paths]


def _copy_needs(call: Call[wire.ObjectCopyCreation]) -> Sequence[Permission]:
    request = call.body
    repository = call.path["repository"]
    return (
        Permission("fs:ReadObject", object_arn(repository, request.src_path)),
        Permission("fs:WriteObject", object_arn(repository, call.query.text("dest_path"))),
    )


_RANGE: Final = params.header("Range", "one byte range, e.g. bytes=0-99")
_NO_TOMBSTONE: Final = params.unsupported("no_tombstone", "kvlake always leaves a tombstone")

OPERATIONS: Final = (
    Operation(
        "getObject",
        "GET",
        READ,
        get_object,
        API_GROUP,
        params=(params.PATH, _RANGE, params.header("If-None-Match", "ETag"), _PRESIGN),
        responses={200: "binary", 206: "binary", 302: None, 304: None, 404: None, 416: None},
        permissions=on_object("fs:ReadObject"),
    ),
    Operation(
        "headObject",
        "HEAD",
        READ,
        head_object,
        API_GROUP,
        params=(params.PATH, _RANGE),
        responses={200: None, 206: None, 404: None, 416: None},
        permissions=on_object("fs:ReadObject"),
    ),
    Operation(
        "statObject",
        "GET",
        READ + "/stat",
        stat_object,
        API_GROUP,
        params=(params.PATH, params.flag("user_metadata", "include user metadata"), _PRESIGN),
        responses={200: wire.ObjectStats, 404: None},
        permissions=on_object("fs:ReadObject"),
        inline=True,
    ),
    Operation(
        "getUnderlyingProperties",
        "GET",
        READ + "/underlyingProperties",
        get_underlying_properties,
        API_GROUP,
        summary="the object's properties in the blockstore (local: no storage class)",
        params=(params.PATH,),
        responses={200: wire.UnderlyingObjectProperties, 404: None},
        permissions=on_object("fs:ReadObject"),
    ),
    Operation(
        "listObjects",
        "GET",
        READ + "/ls",
        list_objects,
        API_GROUP,
        params=(
            *params.PAGE,
            params.text("delimiter", "fold paths at this delimiter into common prefixes"),
            params.flag("user_metadata", "include user metadata"),
            _NO_PRESIGN,
        ),
        responses={200: wire.ObjectStatsList, 404: None},
        permissions=on_repository("fs:ListObjects"),
    ),
    Operation(
        "deleteObject",
        "DELETE",
        WRITE,
        delete_object,
        API_GROUP,
        params=(params.PATH, params.FORCE, _NO_TOMBSTONE),
        responses={204: None, 404: None},
        permissions=on_object("fs:DeleteObject"),
    ),
    Operation(
        "deleteObjects",
        "POST",
        WRITE + "/delete",
        delete_objects,
        API_GROUP,
        params=(params.FORCE, _NO_TOMBSTONE),
        body=wire.PathList,
        responses={200: wire.ObjectErrorList, 404: None},
        permissions=_delete_many_needs,
        body_permissions=True,
    ),
    Operation(
        "copyObject",
        "POST",
        WRITE + "/copy",
        copy_object,
        API_GROUP,
        params=(params.object_path("dest_path", "destination path"),),
        body=wire.ObjectCopyCreation,
        responses={201: wire.ObjectStats, 404: None},
        permissions=_copy_needs,
        body_permissions=True,
    ),
)
