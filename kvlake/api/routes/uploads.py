"""Object uploads (a raw body or a multipart form, streamed into the blockstore) and
updates of an object's user metadata.

The body is never held whole: the catalog pulls it through the reader while
hashing and storing it. User metadata comes from `x-lakefs-meta-<name>` headers;
`If-None-Match: *` refuses to overwrite an existing object (412).
updateObjectUserMetadata replaces the metadata of the object on the branch,
staged or committed, keeping its bytes (the same blob address).
"""

from __future__ import annotations

from typing import Any, BinaryIO, Final, cast

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.multipart import MultipartFileReader, boundary_of
from kvlake.api.needs import on_object
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import objects as wire
from kvlake.errors import EntryNotFoundError, InvalidInputError, PreconditionFailedError

META_PREFIX: Final = "x-lakefs-meta-"
MAX_METADATA_BYTES: Final = 8 * 1024


def user_metadata(headers: Any) -> dict[str, str]:
    metadata = {
        name[len(META_PREFIX) :]: value
        for name, value in headers.items()
        if name.lower().startswith(META_PREFIX) and len(name) > len(META_PREFIX)
    }
    return check_metadata(metadata)


def check_metadata(metadata: dict[str, str]) -> dict[str, str]:
    """The same bound on user metadata however it is sent (headers, JSON bodies)."""
    if sum(len(k.encode()) + len(v.encode()) for k, v in metadata.items()) > MAX_METADATA_BYTES:
        raise InvalidInputError(f"user metadata is over {MAX_METADATA_BYTES} bytes; send less")
    return metadata


def if_absent(call: Call[Any], operation: str) -> bool:
    """Whether `If-None-Match: *` asks not to overwrite; other conditions are refused."""
    if_none_match = call.query.text("If-None-Match")
    if if_none_match not in ("", "*"):
        raise InvalidInputError("If-None-Match supports only '*' (do not overwrite)")
    if call.query.has("If-Match"):
        raise InvalidInputError(f"If-Match is not supported on {operation}; omit it")
    return if_none_match == "*"


def upload_object(call: Call[None]) -> Response:
    query = call.query
    absent = if_absent(call, "upload")
    branch, path = call.path["branch"], query.text("path")
    read = call.read_branch(branch)  # repository, branch and rules in one round trip
    repository = read.repository
    content_type = call.request.headers.get("content-type", "")
    source = call.upload
    if content_type.lower().startswith("multipart/form-data"):
        form = MultipartFileReader(source, boundary_of(content_type))
        form.start()
        # A RawIOBase reads as a binary file; typeshed does not say so.
        source, content_type = cast(BinaryIO, form), form.content_type or ""
    stat = call.services.catalog.upload(
        repository,
        branch,
        path,
        source,
        content_type=content_type or None,
        metadata=user_metadata(call.request.headers),
        if_absent=absent,
        owner=call.principal,
        read=read,
    )
    return json_response(convert.object_stats(stat, repository.storage_namespace), 201)


def update_object_user_metadata(call: Call[wire.UpdateObjectUserMetadata]) -> Response:
    metadata = check_metadata(call.body.set)
    repository = call.repository
    call.services.catalog.update_metadata(
        repository, call.path["branch"], call.query.text("path"), metadata
    )
    return no_content()  # lakeFS's server answers 204 (its API description says 201)


OPERATIONS: Final = (
    Operation(
        "uploadObject",
        "POST",
        "/repositories/{repository}/branches/{branch}/objects",
        upload_object,
        "objects",
        params=(
            params.PATH,
            params.text("storageClass", "ignored (deprecated in lakeFS)"),
            params.FORCE,
            params.header("If-None-Match", "'*': fail with 412 if the object exists"),
            params.header("If-Match", "not supported"),
        ),
        stream=True,
        responses={201: wire.ObjectStats, 404: None, 412: None},
        permissions=on_object("fs:WriteObject"),
        lakefs_errors={PreconditionFailedError: "path already exists"},
    ),
    Operation(
        "updateObjectUserMetadata",
        "PUT",
        "/repositories/{repository}/branches/{branch}/objects/stat/user_metadata",
        update_object_user_metadata,
        "objects",
        summary="replace (all of) the object's user metadata; its bytes stay",
        params=(params.PATH,),
        body=wire.UpdateObjectUserMetadata,
        responses={204: None, 400: None, 404: None},
        permissions=on_object("fs:WriteObject"),
        lakefs_errors={
            EntryNotFoundError: "update user metadata on {repository}/{branch}/{path}: not found"
        },
    ),
)
