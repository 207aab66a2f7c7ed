"""Where committed metadata lives: getMetaRange, getRange, and Hive symlink files.

getMetaRange and getRange answer, as lakeFS does, with the full address of the
file in the storage namespace, in the body (`location`) and the `Location`
header, so tools read committed metadata straight from storage. Unlike lakeFS,
kvlake checks the file is there (404 otherwise). kvlake's ranges are Parquet,
not lakeFS's SSTables: a reader must be kvlake's (the Spark data source).
createSymlinkFile writes one symlink file per folder (kvlake/catalog/symlinks.py).
"""

from __future__ import annotations

from typing import Final, Literal

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import objects as wire
from kvlake.auth import Permission, object_arn

API_GROUP: Final = "metadata"


def _location(call: Call[None], kind: Literal["range", "metarange"], parameter: str) -> Response:
    namespace = call.repository.storage_namespace
    location = call.services.graveler.committed.location(namespace, kind, call.path[parameter])
    return json_response(wire.StorageURI(location=location), headers={"Location": location})


def get_meta_range(call: Call[None]) -> Response:
    return _location(call, "metarange", "meta_range")


def get_range(call: Call[None]) -> Response:
    return _location(call, "range", "range")


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
