"""Wire models of repositories, branches, tags, commits, diffs and merges."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from kvlake.api.wire.common import Count, Error, Integer, Metadata, Name, Pagination, Request, Text

RefName = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class Repository(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    creation_date: int
    default_branch: str
    storage_namespace: str
    storage_id: str = ""
    read_only: bool = False


class RepositoryCreation(Request):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    storage_namespace: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
    default_branch: RefName | None = None
    sample_data: bool | None = None
    read_only: bool | None = None
    storage_id: Name | None = None


class RepositoryMetadataSet(Request):
    metadata: Metadata


class RepositoryMetadataKeys(Request):
    keys: Annotated[list[Name], msgspec.Meta(max_length=1000)]


class RepositoryList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[Repository]


class Ref(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    commit_id: str


class RefList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[Ref]


class BranchCreation(Request):
    name: RefName
    source: RefName
    force: bool | None = None
    hidden: bool | None = None


class TagCreation(Request):
    id: RefName
    ref: RefName
    force: bool | None = None


class Commit(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    parents: list[str]
    committer: str
    message: str
    creation_date: int
    meta_range_id: str
    metadata: dict[str, str]
    generation: int
    version: int = 1


class CommitList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[Commit]


class CommitCreation(Request):
    message: Text
    metadata: Metadata | None = None
    date: Integer | None = None
    allow_empty: bool | None = None
    force: bool | None = None


class CommitRecordCreation(Request):
    """createCommitRecord's body: a commit with the id it hashes to (a restore)."""

    commit_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    version: Annotated[int, msgspec.Meta(ge=0, le=1)]
    committer: Text
    message: Text
    metarange_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    creation_date: Integer
    parents: Annotated[list[RefName], msgspec.Meta(max_length=64)]
    generation: Count
    metadata: Metadata | None = None
    force: bool | None = None


class CommitOverrides(Request):
    message: Text | None = None
    metadata: Metadata | None = None


class DiffObjectStat(msgspec.Struct, frozen=True, kw_only=True):
    checksum: str
    mtime: int
    content_type: str
    metadata: dict[str, str]


class Diff(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    type: Literal["added", "removed", "changed", "conflict", "prefix_changed"]
    path: str
    path_type: Literal["common_prefix", "object"]
    size_bytes: int | None = None
    right: DiffObjectStat | None = None


class DiffList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[Diff]


class Merge(Request):
    message: Text | None = None
    metadata: Metadata | None = None
    strategy: Literal["dest-wins", "source-wins", ""] | None = None
    force: bool | None = None
    allow_empty: bool | None = None
    squash_merge: bool | None = None


class MergeResult(msgspec.Struct, frozen=True, kw_only=True):
    reference: str


class FindMergeBaseResult(msgspec.Struct, frozen=True, kw_only=True):
    source_commit_id: str
    destination_commit_id: str
    base_commit_id: str


class ResetCreation(Request):
    type: Literal["object", "common_prefix", "reset"]
    path: Annotated[str, msgspec.Meta(max_length=1024)] | None = None
    force: bool | None = None


class RevertCreation(Request):
    ref: RefName
    parent_number: Integer
    commit_overrides: CommitOverrides | None = None
    force: bool | None = None
    allow_empty: bool | None = None


class CherryPickCreation(Request):
    ref: RefName
    parent_number: Integer | None = None
    commit_overrides: CommitOverrides | None = None
    force: bool | None = None


class BranchProtectionRule(Request):
    pattern: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class RefsDump(msgspec.Struct, frozen=True, kw_only=True):
    commits_meta_range_id: str
    tags_meta_range_id: str
    branches_meta_range_id: str


class RefsRestore(Request):
    commits_meta_range_id: Name
    tags_meta_range_id: Name
    branches_meta_range_id: Name
    force: bool | None = None


class TaskInfo(msgspec.Struct, frozen=True, kw_only=True):
    id: str


class RepositoryRestoreStatus(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    done: bool
    update_time: datetime
    error: str | None = None


class RepositoryDumpStatus(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    done: bool
    update_time: datetime
    error: str | None = None
    refs: RefsDump | None = None


class ImportLocation(Request):
    type: Literal["common_prefix", "object"]
    path: Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]
    destination: Annotated[str, msgspec.Meta(max_length=1024)]


class ImportCreation(Request):
    paths: Annotated[list[ImportLocation], msgspec.Meta(min_length=1, max_length=1000)]
    commit: CommitCreation
    force: bool | None = None


class ImportCreationResponse(msgspec.Struct, frozen=True, kw_only=True):
    id: str


class ImportStatus(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    completed: bool
    update_time: str
    """RFC 3339, as lakeFS's date-time."""
    ingested_objects: int
    metarange_id: str | None = None
    commit: Commit | None = None
    error: Error | None = None
