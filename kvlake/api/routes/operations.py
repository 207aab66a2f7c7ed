"""kvlake's operations extension: asynchronous bulk deletes, their status, failures, cancel.

Only the creator of an operation and admins (whoever may `auth:*`, as the
Admins group) see or cancel it; anyone else gets 404, as if it did not
exist. The right to delete every object under the path (`fs:DeleteObject`
allowed on `<prefix>*`, and denied by no statement on anything under it) is
checked when the operation is created, and `commit` needs `fs:CreateCommit` on
the branch, as a commit does; a request whose path, branch or filters are
wrong is refused before anything is recorded. The work runs in the servers'
background (kvlake/operations).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Final

import msgspec
from starlette.responses import Response

from kvlake.api import params
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import operations as wire
from kvlake.api.wire.common import pagination
from kvlake.auth import Permission, branch_arn, object_arn
from kvlake.errors import NotFoundError, PermissionDeniedError
from kvlake.operations import (
    KINDS,
    BranchPath,
    BulkDeleteOptions,
    Filters,
    Progress,
    parse_branch_path,
    progress_of,
)
from kvlake.operations import Operation as Record
from kvlake.uri import SCHEME

API_GROUP: Final = "operations"
ADMIN: Final = Permission("auth:ManageOperations", "*")
"""What makes a caller an admin of operations: the Admins group's `auth:*` grants it."""


def is_admin(call: Call[Any]) -> bool:
    assert call.user is not None
    try:
        call.services.authenticator.authorize(call.user, (ADMIN,))
    except PermissionDeniedError:
        return False
    return True


def _delete_needs(call: Call[wire.BulkDeleteCreation | None]) -> Sequence[Permission]:
    """Issue 23: a deny anywhere under the prefix refuses the whole request (the engines
    then delete everything listed without asking again), and committing takes what
    others staged on the branch too, so it needs what a commit needs."""
    path = parse_branch_path(call.query.text("path"))
    needs = [Permission("fs:DeleteObject", object_arn(path.repository, path.prefix), under=True)]
    if call.body is not None and call.body.commit is not None:
        needs.append(Permission("fs:CreateCommit", branch_arn(path.repository, path.branch)))
    return needs


def _options(body: wire.BulkDeleteCreation | None) -> BulkDeleteOptions:
    if body is None:
        return BulkDeleteOptions()
    given = body.filters or wire.BulkDeleteFilters()
    return BulkDeleteOptions(
        filters=Filters(
            modified_before=given.modified_before,
            modified_after=given.modified_after,
            min_size=given.min_size,
            max_size=given.max_size,
            glob=given.glob,
            metadata=dict(given.metadata),
        ),
        dry_run=body.dry_run,
        commit=body.commit is not None,
        commit_message=body.commit.message if body.commit else "",
        commit_metadata=dict(body.commit.metadata) if body.commit else {},
        purge=body.purge,
        engine=body.engine,
        free_storage=body.free_storage,
    )


def status_of(progress: Progress) -> wire.OperationStatus:
    """The one status shape of every kind (a kind without a branch, a GC run or a dump,
    names its repository as its path)."""
    op = progress.operation
    counters = op.counters
    where = BranchPath(op.repository, op.branch, op.prefix)
    path = str(where) if op.branch else f"{SCHEME}{op.repository}/"
    if op.gc is not None:
        dry_run, engine = op.gc.dry_run, "spark"
    else:
        dry_run, engine = op.options.dry_run, op.options.engine
    return wire.OperationStatus(
        operation_id=op.id,
        kind=op.kind,
        path=path,
        status=op.status,
        created_at=op.created_at,
        created_by=op.created_by,
        last_updated_at=op.last_updated_at,
        total_count=progress.total_count,
        enumerated_count=counters.enumerated,
        deleted_count=counters.deleted,
        failed_count=counters.failed,
        skipped_count=counters.skipped,
        rate_per_second=progress.rate_per_second,
        eta_seconds=progress.eta_seconds,
        dry_run=dry_run,
        engine=engine,
        cancel_requested=op.cancel_requested,
        commit_id=op.commit_id if op.options.commit else None,
        error=op.error or None,
        summary=_summary(op, progress.total_count, dry_run=dry_run),
        phase=(op.phase or None) if op.gc is not None else None,
    )


def _summary(op: Record, total: int | None, *, dry_run: bool) -> str:
    """The status in words, as the CLI prints it: a dry run never says "deleted"."""
    if op.gc is not None:
        done = f"last phase {op.phase}" if op.phase else "no phase finished"
        return f"garbage collection {op.status}{' (dry run)' if dry_run else ''}: {done}"
    c = op.counters
    verb = "would delete" if dry_run else "deleted"
    of = "?" if total is None else f"{total:,}"
    text = f"{verb} {c.deleted:,} of {of}, {c.failed:,} failed, {c.skipped:,} skipped"
    return f"{text} (dry run: nothing changed)" if dry_run else text


def _status(call: Call[Any], operation: Record) -> wire.OperationStatus:
    status = status_of(progress_of(operation, call.services.lake.clock()))
    if not operation.options.free_storage:
        return status
    return msgspec.structs.replace(
        status,
        free_storage=True,
        gc_run_id=operation.follow_up or None,
        bytes_freed=_bytes_freed(call, operation),
    )


def _bytes_freed(call: Call[Any], operation: Record) -> int | None:
    """What the follow-up garbage collection deleted, once its run has a summary."""
    if not operation.follow_up:
        return None
    try:
        run = call.services.gc_runs.status(operation.repository, operation.follow_up)
    except NotFoundError:
        return None  # recorded, not started yet
    if run.status == "running" or run.summary is None:
        return None
    return run.summary.counts.bytes_freed


def create_bulk_delete(call: Call[wire.BulkDeleteCreation | None]) -> Response:
    lake = call.services.lake
    path = parse_branch_path(call.query.text("path"))
    operation = lake.bulk_deletes.create(
        path, _options(call.body), created_by=call.user_id, creator=call.principal
    )
    lake.operations.wake()
    return json_response(wire.OperationCreated(operation_id=operation.id), 202)


def get_bulk_delete_status(call: Call[None]) -> Response:
    operation = call.services.lake.bulk_deletes.get(
        call.path["operation_id"], user=call.principal, admin=is_admin(call)
    )
    return json_response(_status(call, operation))


def list_bulk_delete_failures(call: Call[None]) -> Response:
    page = call.services.lake.bulk_deletes.failures(
        call.path["operation_id"],
        user=call.principal,
        admin=is_admin(call),
        after=call.query.text("after"),
        amount=call.query.amount() or 1,
    )
    results = [
        wire.OperationFailure(path=path, outcome=failure.outcome, reason=failure.reason)
        for path, failure in page.failures
    ]
    meta = pagination(len(results), has_more=bool(page.next), next_offset=page.next)
    return json_response(wire.OperationFailureList(pagination=meta, results=results))


def list_operations(call: Call[None]) -> Response:
    query = call.query
    after, amount = query.text("after"), query.amount() or 1
    visible = call.services.lake.bulk_deletes.list(
        user=call.principal,
        admin=is_admin(call),
        status=query.text("status"),
        kind=query.text("kind"),
        repository=query.text("repository"),
        creator=query.text("creator"),
    )
    page = list(itertools.islice((op for op in visible if op.id > after), amount + 1))
    more = len(page) > amount
    page = page[:amount]
    results = [_status(call, op) for op in page]
    meta = pagination(len(results), has_more=more, next_offset=page[-1].id if more else "")
    return json_response(wire.OperationList(pagination=meta, results=results))


def get_operation(call: Call[None]) -> Response:
    """Any kind's status, in the one shape (the bulk-delete status route is a view of it)."""
    operation = call.services.lake.bulk_deletes.get(
        call.path["operation_id"], user=call.principal, admin=is_admin(call)
    )
    return json_response(_status(call, operation))


def cancel_operation(call: Call[None]) -> Response:
    operation = call.services.lake.bulk_deletes.cancel(
        call.path["operation_id"], user=call.principal, admin=is_admin(call)
    )
    return json_response(_status(call, operation), 202)


_STATUS_PATH: Final = "/operations/bulk-delete/status/{operation_id}"

OPERATIONS: Final = (
    Operation[wire.BulkDeleteCreation | None](
        "createBulkDelete",
        "PUT",
        "/operations/bulk-delete",
        create_bulk_delete,
        API_GROUP,
        summary="delete everything under lakefs://repo/branch/prefix, asynchronously",
        params=(params.text("path", "lakefs://<repository>/<branch>/<prefix>", required=True),),
        body=wire.BulkDeleteCreation,
        optional_body=True,
        responses={202: wire.OperationCreated, 400: None, 401: None, 403: None, 404: None},
        permissions=_delete_needs,
        body_permissions=True,
    ),
    Operation(
        "getBulkDeleteStatus",
        "GET",
        _STATUS_PATH,
        get_bulk_delete_status,
        API_GROUP,
        summary="a bulk delete's status, counters, rate and ETA",
        responses={200: wire.OperationStatus, 404: None},
    ),
    Operation(
        "listBulkDeleteFailures",
        "GET",
        _STATUS_PATH + "/failures",
        list_bulk_delete_failures,
        API_GROUP,
        summary="the paths a bulk delete failed or skipped, and why (paginated)",
        params=(
            params.text("after", "return paths after this one"),
            params.Param("amount", "int", minimum=-1, maximum=1000, description="how many"),
        ),
        responses={200: wire.OperationFailureList, 404: None},
    ),
    Operation(
        "listOperations",
        "GET",
        "/operations",
        list_operations,
        API_GROUP,
        summary="the caller's operations of every kind (an admin's: all), oldest first",
        params=(
            params.text("status", "only operations in this status"),
            params.text("kind", f"only operations of this kind ({', '.join(KINDS)})"),
            params.text("repository", "only operations on this repository"),
            params.text("creator", "only operations this user (id) created"),
            params.text("after", "return operations after this id"),
            params.Param("amount", "int", minimum=-1, maximum=1000, description="how many"),
        ),
        responses={200: wire.OperationList, 400: None},
    ),
    Operation(
        "getOperation",
        "GET",
        "/operations/{operation_id}",
        get_operation,
        API_GROUP,
        summary="an operation's status, counters, rate and ETA, whatever its kind",
        responses={200: wire.OperationStatus, 404: None},
    ),
    Operation(
        "cancelOperation",
        "DELETE",
        "/operations/{operation_id}",
        cancel_operation,
        API_GROUP,
        summary="cancel at the next batch boundary; what is done stays done",
        responses={202: wire.OperationStatus, 404: None, 409: None},
    ),
)
