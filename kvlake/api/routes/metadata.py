"""Where committed metadata lives: getMetaRange, getRange, and Hive symlink files.

getMetaRange and getRange answer, as lakeFS does, with the full address of the
file in the storage namespace, in the body (`location`) and the `Location`
header, so tools read committed metadata straight from storage. Unlike lakeFS,
kvlake checks the file is there (404 otherwise). kvlake's ranges are Parquet,
not lakeFS's SSTables: a reader must be kvlake's (the Spark data source).
getMetadataObject streams such a file's bytes (or, with `presign` on a blockstore
that signs URLs, answers 302 to one). createSymlinkFile writes one symlink file per
folder (kvlake/catalog/symlinks.py).
"""

from __future__ import annotations

from typing import Final, Literal

from starlette.responses import Response, StreamingResponse

from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.routes.objects import PRESIGN_SECONDS
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import objects as wire
from kvlake.auth import Permission, object_arn
from kvlake.catalog import chunks
from kvlake.errors import InvalidInputError

API_GROUP: Final = "metadata"


def _location(call: Call[None], kind: Literal["range", "metarange"], parameter: str) -> Response:
    namespace = call.repository.storage_namespace
    location = call.services.graveler.committed.location(namespace, kind, call.path[parameter])
    return json_response(wire.StorageURI(location=location), headers={"Location": location})


def get_meta_range(call: Call[None]) -> Response:
    return _location(call, "metarange", "meta_range")


def get_range(call: Call[None]) -> Response:
    return _location(call, "range", "range")


_KINDS: Final[dict[str, Literal["range", "metarange"]]] = {
    "meta_range": "metarange",
    "range": "range",
}
_HEADERS: Final = {  # lakeFS's: the bytes are data, never a page to render
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "SAMEORIGIN",
    "Content-Security-Policy": "default-src 'none'",
}


def get_metadata_object(call: Call[None]) -> Response:
    kind = _KINDS.get(call.path["type"])
    if kind is None:
        raise InvalidInputError(
            f"metadata object type {call.path['type']!r} is unknown; use meta_range or range"
        )
    presign = call.query.flag("presign")
    blockstore = call.services.blockstore
    if presign and not blockstore.presigns:
        raise InvalidInputError(
            f"query parameter 'presign' is not supported: the {blockstore.scheme} blockstore"
            " has no presigned URLs; leave presign false"
        )
    namespace = call.repository.storage_namespace
    key = call.services.graveler.committed.file(namespace, kind, call.path["object_id"])
    if presign:
        url = blockstore.presign_read(namespace, key, expires=PRESIGN_SECONDS)
        return Response(status_code=302, headers={"Location": url})
    size = blockstore.size(namespace, key)
    reader = blockstore.open_reader(namespace, key)
    headers = {**_HEADERS, "Content-Length": str(size)}
    return StreamingResponse(chunks(reader), 200, headers, media_type="application/octet-stream")


def create_symlink_file(call: Call[None]) -> Response:
    location = call.services.catalog.write_symlinks(
        call.repository, call.path["branch"], call.query.text("location")
    )
    return json_response(wire.StorageURI(location=location), 201)


def _symlink_needs(call: Call[None]) -> tuple[Permission, ...]:
    # As lakeFS: fs:WriteObject on the object ARN named by the branch.
    return (Permission("fs:WriteObject", object_arn(call.path["repository"], call.path["branch"])),)


_READ_METADATA: Final = on_repository("fs:ListObjects", "fs:ReadRepository")

OPERATIONS: Final = (
    Operation(
        "getMetadataObject",
        "GET",
        "/repositories/{repository}/metadata/object/{type}/{object_id}",
        get_metadata_object,
        API_GROUP,
        summary="the bytes of a range or metarange file (kvlake's are Parquet)",
        params=(params.flag("presign", "a 302 to a presigned URL (blockstores that sign)"),),
        responses={200: "binary", 302: None, 400: None, 404: None},
        permissions=_READ_METADATA,
    ),
    Operation(
        "getMetaRange",
        "GET",
        "/repositories/{repository}/metadata/meta_range/{meta_range}",
        get_meta_range,
        API_GROUP,
        summary="the full address of a metarange file",
        responses={200: wire.StorageURI, 404: None},
        permissions=_READ_METADATA,
    ),
    Operation(
        "getRange",
        "GET",
        "/repositories/{repository}/metadata/range/{range}",
        get_range,
        API_GROUP,
        summary="the full address of a range file",
        responses={200: wire.StorageURI, 404: None},
        permissions=_READ_METADATA,
    ),
    Operation(
        "createSymlinkFile",
        "POST",
        "/repositories/{repository}/refs/{branch}/symlink",
        create_symlink_file,
        "internal",
        summary="write a symlink file per folder listing its objects' addresses (Hive)",
        params=(params.text("location", "write the folders under this path prefix"),),
        responses={201: wire.StorageURI, 404: None},
        permissions=_symlink_needs,
    ),
)
