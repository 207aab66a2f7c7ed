"""Action runs: the runs of `_lakefs_actions/` hooks recorded by kvlake/actions.

Runs list newest first (their ids decrease with time, as lakeFS's), filtered by
branch or commit; a run's hooks list in run order; a hook run's output is the
log written under the repository's namespace. Missing runs answer lakeFS's
texts (`not found: not found` for a run, `not found` for an output).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from starlette.responses import Response

from kvlake.actions import HookRun, Run, RunNotFoundError
from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.pages import page
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import actions as wire
from kvlake.errors import NotFoundError

API_GROUP: Final = "actions"
RUNS: Final = "/repositories/{repository}/actions/runs"
_PAGE: Final = tuple(p for p in params.PAGE if p.name != "prefix")
"""lakeFS pages runs and hooks by `after` and `amount` only."""


def _time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _status(passed: bool) -> wire.Status:
    return "completed" if passed else "failed"


def _run(run: Run) -> wire.ActionRun:
    return wire.ActionRun(
        run_id=run.run_id,
        branch=run.branch,
        start_time=_time(run.start_time),
        end_time=_time(run.end_time),
        event_type=run.event_type,
        status=_status(run.passed),
        commit_id=run.commit_id,
    )


def _hook(hook: HookRun) -> wire.HookRun:
    return wire.HookRun(
        hook_run_id=hook.hook_run_id,
        action=hook.action,
        hook_id=hook.hook_id,
        start_time=_time(hook.start_time),
        end_time=_time(hook.end_time),
        status=_status(hook.passed),
    )


def list_repository_runs(call: Call[None]) -> Response:
    repository = call.repository
    branch, commit = call.query.text("branch"), call.query.text("commit")
    runs = (
        _run(run)
        for run in call.services.lake.actions.runs.scan(repository, after=call.query.text("after"))
        if (not branch or run.branch == branch) and (not commit or run.commit_id == commit)
    )
    results, pagination = page(runs, call.query.amount(), lambda run: run.run_id)
    return json_response(wire.ActionRunList(pagination=pagination, results=results))


def get_run(call: Call[None]) -> Response:
    run = call.services.lake.actions.runs.get(call.repository, call.path["run_id"])
    return json_response(_run(run))


def list_run_hooks(call: Call[None]) -> Response:
    try:
        run_hooks = call.services.lake.actions.runs.get(call.repository, call.path["run_id"]).hooks
    except RunNotFoundError:
        run_hooks = ()  # lakeFS lists an unknown run's hooks as an empty page
    after = call.query.text("after")
    hooks = (_hook(hook) for hook in run_hooks if hook.hook_run_id > after)
    results, pagination = page(hooks, call.query.amount(), lambda hook: hook.hook_run_id)
    return json_response(wire.HookRunList(pagination=pagination, results=results))


def get_run_hook_output(call: Call[None]) -> Response:
    output = call.services.lake.actions.runs.output(
        call.repository, call.path["run_id"], call.path["hook_run_id"]
    )
    return Response(output, 200, media_type="application/octet-stream")


OPERATIONS: Final = (
    Operation(
        "listRepositoryRuns",
        "GET",
        RUNS,
        list_repository_runs,
        API_GROUP,
        summary="list runs, newest first",
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
        summary="get a run",
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
        summary="list a run's hooks",
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
        summary="get a hook run's output",
        responses={200: "binary", 404: None},
        permissions=on_repository("fs:ReadActions"),
        lakefs_errors={NotFoundError: "not found"},
    ),
)
