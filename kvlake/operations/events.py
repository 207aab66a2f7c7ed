"""kvlake's own events about long-running operations, for lakeFS-style actions.

A bulk delete announces `pre-bulk-delete` before it is recorded (a gate whose
hooks can refuse it by branch, prefix or filters), and the runner announces
`post-bulk-delete` and `post-gc-run` once an operation finished, whatever its
status. Each event carries lakeFS's fields where they apply (`repository_id`,
`branch_id`, `source_ref`, `commit_id`, `committer`) and kvlake's in
`Event.extra`: the operation's id and status, its prefix and filters, its
counters. Graveler's `EventHooks` runs them (kvlake/actions, docs/actions.md).
"""

from __future__ import annotations

import msgspec

from kvlake.graveler import Event, Repository
from kvlake.operations.records import BulkDeleteOptions, Filters, Operation


def _filters(filters: Filters) -> dict[str, object]:
    """The filters that are set, by their record names (unset ones left out)."""
    fields: dict[str, object] = msgspec.to_builtins(filters)
    return {name: value for name, value in fields.items() if value not in (None, "", {})}


def _request(prefix: str, options: BulkDeleteOptions) -> dict[str, object]:
    return {"prefix": prefix, "filters": _filters(options.filters), "dry_run": options.dry_run}


def pre_bulk_delete(
    repository: Repository, branch: str, prefix: str, options: BulkDeleteOptions, user: str
) -> Event:
    """The gate before a bulk delete of `prefix` on `branch` is recorded: its hooks read
    the action files at the branch and act as `user`."""
    return Event(
        event_type="pre-bulk-delete",
        repository_id=repository.name,
        source_ref=branch,
        branch_id=branch,
        committer=user,
        extra=_request(prefix, options),
    )


def finished(operation: Operation, repository: Repository) -> Event | None:
    """The post-event of a finished bulk delete or GC run (None for other kinds).

    A bulk delete's actions are read at its commit when it made one (as a post-commit's
    are), else at the branch; a GC run's at the repository's default branch.
    """
    done: dict[str, object] = {"operation_id": operation.id, "status": operation.status}
    if operation.error:
        done["error"] = operation.error
    if operation.kind == "bulk-delete":
        options = operation.options
        counters = msgspec.to_builtins(operation.counters)
        committed = bool(operation.commit_id)
        return Event(
            event_type="post-bulk-delete",
            repository_id=repository.name,
            source_ref=operation.commit_id or operation.branch,
            branch_id=operation.branch,
            commit_id=operation.commit_id,
            commit_message=options.commit_message if committed else "",
            commit_metadata=dict(options.commit_metadata) if committed else {},
            committer=operation.created_by,
            extra=done | _request(operation.prefix, options) | {"counters": counters},
        )
    if operation.kind == "gc-run" and operation.gc is not None:
        request = operation.gc
        return Event(
            event_type="post-gc-run",
            repository_id=repository.name,
            source_ref=repository.default_branch,
            committer=operation.created_by,
            extra=done
            | {"gc_run_id": request.run_id, "mode": request.mode, "dry_run": request.dry_run},
        )
    return None
