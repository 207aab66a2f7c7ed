"""Wire models of garbage collection runs (a kvlake extension: lakeFS runs GC elsewhere)."""

from __future__ import annotations

from typing import Literal

import msgspec

from kvlake.api.wire.common import Request


class GcRunCreation(Request):
    """`mode`: `run` (mark, then sweep), `mark` (candidates only) or `sweep` (`run_id`'s mark)."""

    mode: Literal["run", "mark", "sweep"] = "run"
    run_id: str | None = None
    grace_period_seconds: float | None = None
    dry_run: bool = False


class GcRunStarted(msgspec.Struct, frozen=True, kw_only=True):
    run_id: str
