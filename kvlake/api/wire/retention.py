"""Wire models of garbage collection rules and of GC preparation, in lakeFS's shapes
(swagger `GarbageCollectionRules`, `GarbageCollectionPrepareResponse`,
`PrepareGarbageCollectionCommitsStatus`, `PrepareGCUncommitted*`).

Day counts are plain integers here: the graveler refuses a negative one with a
message that says what to give instead (kvlake/graveler/lifecycle/gcrules.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from kvlake.api.wire.common import Error, Integer, Name, Request


class GarbageCollectionRule(Request):
    branch_id: Name
    retention_days: Integer


class GarbageCollectionRules(Request):
    default_retention_days: Integer
    branches: Annotated[list[GarbageCollectionRule], msgspec.Meta(max_length=10_000)]


class GarbageCollectionConfig(msgspec.Struct, frozen=True, kw_only=True):
    grace_period: int
    """Seconds: objects created this recently are never collected."""


class GarbageCollectionPrepareResponse(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True
):
    run_id: str
    gc_commits_location: str
    gc_addresses_location: str
    gc_commits_presigned_url: str | None = None


class TaskCreation(msgspec.Struct, frozen=True, kw_only=True):
    id: str


class PrepareGarbageCollectionCommitsStatus(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True
):
    task_id: str
    completed: bool
    update_time: datetime
    result: GarbageCollectionPrepareResponse | None = None
    error: Error | None = None


class PrepareGCUncommittedRequest(Request):
    continuation_token: Annotated[str, msgspec.Meta(max_length=64 * 1024)] | None = None


class PrepareGCUncommittedResponse(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    run_id: str
    gc_uncommitted_location: str
    continuation_token: str | None = None
