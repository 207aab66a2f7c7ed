"""Action runs, answered as a lakeFS with no actions defined answers.

kvlake runs no hooks yet, so no repository has runs: the listings are empty
pages (after the repository is read, as lakeFS reads it), a run is
`not found: not found` and a hook's output `not found`, lakeFS's texts for a
run or task its actions store does not hold.
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import actions as wire
from kvlake.api.wire.common import pagination
from kvlake.errors import NotFoundError

API_GROUP: Final = "actions"
RUNS: Final = "/repositories/{repository}/actions/runs"
_PAGE: Final = tuple(p for p in params.PAGE if p.name != "prefix")
"""lakeFS pages runs and hooks by `after` and `amount` only."""
_NO_RUNS: Final = "kvlake defines no actions, so repository {!r} has no run {!r}"


def list_repository_runs(call: Call[None]) -> Response:
    call.repository  # noqa: B018 -- read for its 404, as lakeFS reads it
    return json_response(
        wire.ActionRunList(pagination=pagination(0, has_more=False, next_offset=""), results=[])
    )


def get_run(call: Call[None]) -> Response:
    call.repository  # noqa: B018
    raise NotFoundError(_NO_RUNS.format(call.path["repository"], call.path["run_id"]))


def list_run_hooks(call: Call[None]) -> Response:
    call.repository  # noqa: B018
    return json_response(
        wire.HookRunList(pagination=pagination(0, has_more=False, next_offset=""), results=[])
    )


def get_run_hook_output(call: Call[None]) -> Response:
    call.repository  # noqa: B018
    raise NotFoundError(_NO_RUNS.format(call.path["repository"], call.path["run_id"]))


OPERATIONS: Final = (
    Operation(
        "listRepositoryRuns",
        "GET",
        RUNS,
        list_repository_runs,
        API_GROUP,
        summary="list runs (always empty: kvlake defines no actions)",
        params=(
            *_PAGE,
            params.text("branch", "only runs on this branch"),
            params.text("commit", "only runs of this commit"),
        ),
        responses={200: wire.ActionRunList, 404: None},
        permissions=on_repository("fs:ReadActions"),
    ),
    Operation(
        "getRun",
        "GET",
        RUNS + "/{run_id}",
        get_run,
        API_GROUP,
        summary="get a run (none exist: kvlake defines no actions)",
        responses={200: wire.ActionRun, 404: None},
        permissions=on_repository("fs:ReadActions"),
        lakefs_errors={NotFoundError: "not found: not found"},
    ),
    Operation(
        "listRunHooks",
        "GET",
        RUNS + "/{run_id}/hooks",
        list_run_hooks,
        API_GROUP,
        summary="list a run's hooks (always empty)",
        params=_PAGE,
        responses={200: wire.HookRunList, 404: None},
        permissions=on_repository("fs:ReadActions"),
    ),
    Operation(
        "getRunHookOutput",
        "GET",
        RUNS + "/{run_id}/hooks/{hook_run_id}/output",
        get_run_hook_output,
        API_GROUP,
        summary="get a hook run's output (none exist)",
        responses={200: "binary", 404: None},
        permissions=on_repository("fs:ReadActions"),
        lakefs_errors={NotFoundError: "not found"},
    ),
)
