"""Wire models of action runs and hook runs (lakeFS's ActionRun and HookRun)."""

from __future__ import annotations

from typing import Literal

import msgspec

from kvlake.api.wire.common import Pagination

Status = Literal["failed", "completed"]
"""lakeFS's two statuses of a finished run or hook run."""


class ActionRun(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    run_id: str
    branch: str
    start_time: str
    end_time: str | None = None
    event_type: str
    status: Status
    commit_id: str


class ActionRunList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[ActionRun]


class HookRun(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    hook_run_id: str
    action: str
    hook_id: str
    start_time: str
    end_time: str | None = None
    status: Status


class HookRunList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[HookRun]
