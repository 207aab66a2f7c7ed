"""Wire models of kvlake's operations extension: bulk deletes, their status, object locks."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from kvlake.api.wire.common import Count, Metadata, Name, Pagination, Request, Text
from kvlake.operations import OperationStatus as OperationState

Glob = Annotated[str, msgspec.Meta(max_length=1024)]


class BulkDeleteFilters(Request):
    """All set filters must match. Times are seconds since the epoch."""

    modified_before: float | None = None
    modified_after: float | None = None
    min_size: Count | None = None
    max_size: Count | None = None
    glob: Glob = ""
    metadata: Metadata = {}
    """User metadata every deleted object must hold (all pairs, exact values)."""


class BulkDeleteCommit(Request):
    message: Text = ""
    metadata: Metadata = {}


class BulkDeleteCreation(Request):
    """The options of `PUT /operations/bulk-delete?path=...` (an empty body: defaults)."""

    filters: BulkDeleteFilters | None = None
    dry_run: bool = False
    commit: BulkDeleteCommit | None = None
    """Commit the branch when done, with this message and metadata."""
    purge: bool = True
    engine: Name = ""
    """`local`, `spark` or `auto` (empty: the server's default)."""
    free_storage: bool = False
    """Run the repository's garbage collection once the delete (and its commit) completed,
    and report the bytes it freed."""


class OperationCreated(msgspec.Struct, frozen=True, kw_only=True):
    operation_id: str


class OperationStatus(msgspec.Struct, frozen=True, kw_only=True):
    operation_id: str
    kind: str
    path: str
    status: OperationState
    created_at: float
    created_by: str
    last_updated_at: float
    total_count: int | None
    enumerated_count: int
    deleted_count: int
    failed_count: int
    skipped_count: int
    rate_per_second: float
    eta_seconds: float | None
    dry_run: bool
    engine: str
    cancel_requested: bool
    commit_id: str | None = None
    error: str | None = None
    free_storage: bool = False
    """Whether garbage collection runs once the bulk delete completed."""
    gc_run_id: str | None = None
    """That garbage collection's run (an operation of kind `gc-run`), once started."""
    bytes_freed: int | None = None
    """Bytes that run deleted, once it finished (a dry run's: would delete)."""
    summary: str = ""
    """What it did, in words: a dry run says "would delete", never "deleted"; a GC run
    names its last phase."""
    phase: str | None = None
    """A GC run's last phase finished (null for kinds without phases)."""


class OperationList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[OperationStatus]


class OperationFailure(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    outcome: Literal["failed", "skipped"]
    reason: str


class OperationFailureList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[OperationFailure]


class ObjectLock(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    kind: Literal["write", "delete"]
    owner: str
    expires_at: float


class ObjectLockList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[ObjectLock]
