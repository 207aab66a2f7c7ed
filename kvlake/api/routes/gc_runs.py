"""Garbage collection runs as a long-running operation (a kvlake extension).

`POST /repositories/{repository}/gc/runs` starts a run on the server's Spark
master and answers 202 with its id; `GET .../gc/runs/{run_id}` answers its
status (`running` with the last phase done, `marked`, `swept`, `dry_run` or
`failed` with the reason) and its summary. Both need
`retention:PrepareGarbageCollectionCommits`, lakeFS's action for preparing GC.
See kvlake/pipelines/gc/runs.py.
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import gc_runs as wire
from kvlake.pipelines.gc.runs import GcRunStatus

API_GROUP: Final = "experimental"
RUNS: Final = "/repositories/{repository}/gc/runs"
PREPARE_GC: Final = "retention:PrepareGarbageCollectionCommits"


def start_run(call: Call[wire.GcRunCreation]) -> Response:
    body = call.body
    run_id = call.services.gc_runs.start(
        call.repository.name,
        mode=body.mode,
        run_id=body.run_id,
        grace_period=body.grace_period_seconds,
        dry_run=body.dry_run,
        created_by=call.user_id,
        creator=call.principal,
    )
    return json_response(wire.GcRunStarted(run_id=run_id), status=202)


def get_run(call: Call[None]) -> Response:
    return json_response(call.services.gc_runs.status(call.repository.name, call.path["run_id"]))


OPERATIONS: Final = (
    Operation(
        "startGarbageCollectionRun",
        "POST",
        RUNS,
        start_run,
        API_GROUP,
        summary="start garbage collection of the repository on Spark (mark, sweep or both)",
        body=wire.GcRunCreation,
        responses={202: wire.GcRunStarted, 400: None, 404: None, 409: None},
        permissions=on_repository(PREPARE_GC),
    ),
    Operation(
        "getGarbageCollectionRun",
        "GET",
        RUNS + "/{run_id}",
        get_run,
        API_GROUP,
        summary="a garbage collection run's status and summary",
        responses={200: GcRunStatus, 404: None},
        permissions=on_repository(PREPARE_GC),
    ),
)
