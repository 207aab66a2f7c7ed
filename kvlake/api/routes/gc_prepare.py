"""What lakeFS's own GC client asks for: getGarbageCollectionConfig,
prepareGarbageCollectionCommits (and its async variant with a status call), and
prepareGarbageCollectionUncommitted.

The files are the catalog's (kvlake/catalog/gcprepare.py); the async variant
records an operation of kind `gc-prepare-commits` (kvlake/catalog/gc_prepare_runs.py)
that a runner runs, like dumpSubmit; its status call is a view over that record,
which `GET /api/v1/operations` lists and `DELETE` cancels like any other. Permissions
are lakeFS's: `retention:PrepareGarbageCollectionCommits` for the commits calls,
`retention:PrepareGarbageCollectionUncommitted` for the uncommitted one, and any
signed-in user for the config. A repository without GC rules answers 404, as
lakeFS's blocking call does; the async call refuses it at submit too (lakeFS
would report it in the task), so lakeFS's client, which keeps every commit on a
404, works the same through either call. The uncommitted route keeps lakeFS's
spelling, `prepare_uncommited`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import retention as wire
from kvlake.api.wire.common import Error
from kvlake.catalog import PreparedCommits, decode_mark, encode_mark
from kvlake.catalog.gc_prepare_runs import KIND, submit_gc_prepare_commits
from kvlake.errors import KvlakeError, NotFoundError
from kvlake.operations import task_status

API_GROUP: Final = "internal"
GC: Final = "/repositories/{repository}/gc"
PREPARE_COMMITS: Final = "retention:PrepareGarbageCollectionCommits"
PREPARE_UNCOMMITTED: Final = "retention:PrepareGarbageCollectionUncommitted"
_NO_RULES: Final[dict[type[KvlakeError], str]] = {NotFoundError: "get gc rules: not found"}
"""lakeFS's text when the repository has no rules; a missing repository keeps its own."""


def get_config(call: Call[None]) -> Response:
    grace_period = int(call.services.lake.settings.gc.grace_period)
    return json_response(wire.GarbageCollectionConfig(grace_period=grace_period))


def _prepared(prepared: PreparedCommits) -> wire.GarbageCollectionPrepareResponse:
    return wire.GarbageCollectionPrepareResponse(
        run_id=prepared.run_id,
        gc_commits_location=prepared.commits_location,
        gc_addresses_location=prepared.addresses_location,
        gc_commits_presigned_url=prepared.presigned_url,
    )


def prepare_commits(call: Call[None]) -> Response:
    prepared = call.services.gc_preparation.prepare_commits(call.repository)
    return json_response(_prepared(prepared), 201)


def prepare_commits_async(call: Call[None]) -> Response:
    lake = call.services.lake
    task_id = submit_gc_prepare_commits(
        lake.ledger,
        call.services.gc_preparation,
        call.repository,
        creator=call.principal,
        now=lake.operations.context.clock(),
    )  # no rules: 404 now, not a failed task
    lake.operations.wake()  # a runner here (or a worker, at its next pass) runs it
    return json_response(wire.TaskCreation(id=task_id), 202)


def prepare_commits_status(call: Call[None]) -> Response:
    repository = call.repository
    task_id = call.query.text("id")
    task = task_status(call.services.lake.ledger, repository, KIND, task_id)
    result = None
    if task.done and not task.error:
        result = _prepared(call.services.gc_preparation.commits_of(repository, task_id))
    status = wire.PrepareGarbageCollectionCommitsStatus(
        task_id=task_id,
        completed=task.done,
        update_time=datetime.fromtimestamp(task.update_time, UTC),
        result=result,
        error=Error(message=task.error) if task.error else None,
    )
    return json_response(status)


def prepare_uncommitted(call: Call[wire.PrepareGCUncommittedRequest | None]) -> Response:
    token = call.body.continuation_token if call.body is not None else None
    mark = decode_mark(token) if token else None
    prepared = call.services.gc_preparation.prepare_uncommitted(call.repository, mark)
    answer = wire.PrepareGCUncommittedResponse(
        run_id=prepared.run_id,
        gc_uncommitted_location=prepared.location,
        continuation_token=encode_mark(prepared.mark) if prepared.mark is not None else None,
    )
    return json_response(answer, 201)


OPERATIONS: Final = (
    Operation(
        "getGarbageCollectionConfig",
        "GET",
        "/config/garbage-collection",
        get_config,
        API_GROUP,
        summary="the grace period: objects created this recently are never collected",
        responses={200: wire.GarbageCollectionConfig},
    ),
    Operation(
        "prepareGarbageCollectionCommits",
        "POST",
        GC + "/prepare_commits",
        prepare_commits,
        API_GROUP,
        summary="write the commits the GC rules retain as a CSV in the storage namespace",
        responses={201: wire.GarbageCollectionPrepareResponse, 400: None, 404: None},
        permissions=on_repository(PREPARE_COMMITS),
        lakefs_errors=_NO_RULES,
    ),
    Operation(
        "prepareGarbageCollectionCommitsAsync",
        "POST",
        GC + "/prepare_commits/async",
        prepare_commits_async,
        API_GROUP,
        summary="start writing the retained commits' CSV as a task (202 and its id)",
        responses={202: wire.TaskCreation, 400: None, 404: None},
        permissions=on_repository(PREPARE_COMMITS),
        lakefs_errors=_NO_RULES,
    ),
    Operation(
        "prepareGarbageCollectionCommitsStatus",
        "GET",
        GC + "/prepare_commits/status",
        prepare_commits_status,
        API_GROUP,
        summary="a commits preparation task: running, or its result or error",
        params=(params.text("id", "the id the async call answered", required=True),),
        responses={200: wire.PrepareGarbageCollectionCommitsStatus, 400: None, 404: None},
        permissions=on_repository(PREPARE_COMMITS),
    ),
    Operation[wire.PrepareGCUncommittedRequest | None](
        "prepareGarbageCollectionUncommitted",
        "POST",
        GC + "/prepare_uncommited",
        prepare_uncommitted,
        API_GROUP,
        summary="write the next page of staged objects' addresses as Parquet",
        body=wire.PrepareGCUncommittedRequest,
        optional_body=True,
        responses={201: wire.PrepareGCUncommittedResponse, 400: None, 404: None},
        permissions=on_repository(PREPARE_UNCOMMITTED),
    ),
)
