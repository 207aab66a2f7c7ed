"""Wire models of action runs and hook runs (kvlake defines no actions, so lists are empty)."""

from __future__ import annotations

from typing import Literal

import msgspec

from kvlake.api.wire.common import Pagination


class ActionRun(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    run_id: str
    branch: str
    start_time: str
    end_time: str | None = None
    event_type: str
    status: Literal["failed", "completed"]
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
    status: Literal["failed", "completed"]  # lakeFS's two values (kvlake runs no hooks)


class HookRunList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[HookRun]
