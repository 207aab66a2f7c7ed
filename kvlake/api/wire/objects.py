"""Wire models of objects: stats, listings, copies and bulk deletes."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from kvlake.api.wire.common import Count, Integer, Metadata, Pagination, Request

Path = Annotated[
    str, msgspec.Meta(min_length=1, max_length=1024, pattern=r"^(?!(?:.*/)?\.\.(?:/|$))")
]
"""An object path: no '..' segment (the same rule as `params.check_object_path`)."""


class ObjectStats(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    path: str
    path_type: Literal["common_prefix", "object"]
    physical_address: str
    checksum: str
    mtime: int
    size_bytes: int | None = None
    metadata: dict[str, str] | None = None
    content_type: str | None = None
    physical_address_expiry: int | None = None


class ObjectStatsList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[ObjectStats]


class ObjectCopyCreation(Request):
    src_path: Path
    src_ref: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)] | None = None
    force: bool | None = None
    shallow: bool | None = None


class PathList(Request):
    paths: Annotated[list[Path], msgspec.Meta(max_length=1000)]


class ObjectError(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    status_code: int
    message: str
    path: str | None = None


class ObjectErrorList(msgspec.Struct, frozen=True, kw_only=True):
    errors: list[ObjectError]


class UnderlyingObjectProperties(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    storage_class: str | None = None


class UpdateObjectUserMetadata(Request):
    """lakeFS's body for updateObjectUserMetadata: the object's new user metadata, all of it."""

    set: dict[str, str]


class ObjectStageCreation(Request):
    """stageObject's body: an entry over a blob already in the namespace."""

    physical_address: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    checksum: Annotated[str, msgspec.Meta(max_length=1024)]
    size_bytes: Integer
    mtime: Integer | None = None
    metadata: Metadata | None = None
    content_type: Annotated[str, msgspec.Meta(max_length=1024)] | None = None
    force: bool | None = None


class StagingLocation(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where a client uploads an object itself: the address, and a presigned PUT URL."""

    physical_address: str
    presigned_url: str | None = None
    presigned_url_expiry: Integer | None = None


class StagingLocationIn(Request):
    """A StagingLocation as a client sends it back to linkPhysicalAddress."""

    physical_address: Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]
    presigned_url: Annotated[str, msgspec.Meta(max_length=16 * 1024)] | None = None
    presigned_url_expiry: Integer | None = None


class StagingMetadata(Request):
    """linkPhysicalAddress's body: the blob written at a staging location."""

    staging: StagingLocationIn
    checksum: Annotated[str, msgspec.Meta(max_length=1024)]
    size_bytes: Count
    user_metadata: Metadata | None = None
    content_type: Annotated[str, msgspec.Meta(max_length=1024)] | None = None
    mtime: Integer | None = None
    force: bool | None = None


class StorageURI(msgspec.Struct, frozen=True, kw_only=True):
    """A full address in the object store (lakeFS's StorageURI)."""

    location: str


class PresignMultipartUpload(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    upload_id: str
    physical_address: str
    presigned_urls: list[str] | None = None


PhysicalAddress = Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]


class UploadPartFrom(Request):
    physical_address: PhysicalAddress


class CopyPartSource(Request):
    repository: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
    ref: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
    path: Path
    range: Annotated[str, msgspec.Meta(max_length=100)] | None = None


class UploadPartCopyFrom(Request):
    physical_address: PhysicalAddress
    copy_source: CopyPartSource


class UploadTo(msgspec.Struct, frozen=True, kw_only=True):
    presigned_url: str


class UploadPart(Request):
    part_number: Annotated[int, msgspec.Meta(ge=1, le=10_000)]
    etag: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class CompletePresignMultipartUpload(Request):
    physical_address: PhysicalAddress
    parts: Annotated[list[UploadPart], msgspec.Meta(min_length=1, max_length=10_000)]
    user_metadata: Metadata | None = None
    content_type: Annotated[str, msgspec.Meta(max_length=1024)] | None = None


class AbortPresignMultipartUpload(Request):
    physical_address: PhysicalAddress
