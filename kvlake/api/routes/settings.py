"""Repository settings: branch protection rules, and refs dump and restore.

Protection rules follow lakeFS: a rule's pattern (fnmatch-style) blocks direct
writes and commits on matching branches, and deleting them; merges into them
are still allowed. `If-Match` with the ETag of a read makes a replacement
conditional (412 when the rules changed meanwhile).

A refs dump is one id naming three files in the storage namespace; lakeFS's
RefsDump carries three metarange ids, so kvlake puts the dump id in all three,
and a restore takes them back only when they agree. dumpSubmit and restoreSubmit
answer 202 at once with the id of an operation record (kinds `dump` and `restore`,
kvlake/operations/refs_tasks.py) that a runner runs; dumpStatus and restoreStatus
read the record and say `done: false` until it is finished.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.errors import InvalidInputError, NotFoundError, PreconditionFailedError
from kvlake.graveler import Rules
from kvlake.operations import submit_dump, submit_restore, task_status

API_GROUP: Final = "repositories"
RULES: Final = "/repositories/{repository}/settings/branch_protection"
BLOCKED: Final = ("staging_write", "commit", "delete")


def _etag(rules: Rules) -> str:
    text = "\n".join(f"{p}\t{','.join(sorted(a))}" for p, a in sorted(rules.items()))
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


def get_rules(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    rules = graveler.protection.get_rules(repository)
    body = [wire.BranchProtectionRule(pattern=p) for p in sorted(rules)]
    return json_response(body, headers={"ETag": _etag(rules)})


def set_rules(call: Call[list[wire.BranchProtectionRule]]) -> Response:
    wanted = call.body
    graveler = call.services.graveler
    repository = call.repository
    current = graveler.protection.get_rules(repository)
    if_match = call.query.text("If-Match")
    if if_match and if_match != _etag(current):
        raise PreconditionFailedError(
            "branch protection rules changed since they were read; read them again"
        )
    patterns = {rule.pattern for rule in wanted}
    for pattern in sorted(patterns):
        graveler.protection.set_rule(repository, pattern, BLOCKED)
    for pattern in sorted(set(current) - patterns):
        graveler.protection.delete_rule(repository, pattern)
    return no_content()


def dump_refs(call: Call[None]) -> Response:
    graveler = call.services.graveler
    manifest = graveler.dumps.dump(call.repository)
    return json_response(_refs_dump(manifest.dump_id), 201)


def internal_create_rule(call: Call[wire.BranchProtectionRule]) -> Response:
    """lakeFS's deprecated one-rule call: add (or replace) the rule for one pattern."""
    call.services.graveler.protection.set_rule(call.repository, call.body.pattern, BLOCKED)
    return no_content()


def internal_delete_rule(call: Call[wire.BranchProtectionRule]) -> Response:
    """lakeFS's deprecated one-rule call: remove the rule for one pattern (404 if none)."""
    graveler = call.services.graveler
    repository = call.repository
    pattern = call.body.pattern
    if pattern not in graveler.protection.get_rules(repository):
        raise NotFoundError(f"no branch protection rule has pattern {pattern!r}")
    graveler.protection.delete_rule(repository, pattern)
    return no_content()


def _dump_id(request: wire.RefsRestore) -> str:
    ids = {
        request.commits_meta_range_id,
        request.tags_meta_range_id,
        request.branches_meta_range_id,
    }
    if len(ids) != 1:
        raise InvalidInputError(
            "kvlake restores one dump: give the dump id from dumpRefs in all three fields"
        )
    return ids.pop()


def _refs_dump(dump_id: str) -> wire.RefsDump:
    return wire.RefsDump(
        commits_meta_range_id=dump_id, tags_meta_range_id=dump_id, branches_meta_range_id=dump_id
    )


def restore_refs(call: Call[wire.RefsRestore]) -> Response:
    graveler = call.services.graveler
    graveler.dumps.restore(call.repository, _dump_id(call.body))
    return no_content()


def dump_submit(call: Call[None]) -> Response:
    lake = call.services.lake
    now = lake.operations.context.clock()
    task_id = submit_dump(lake.ledger, call.repository, creator=call.principal, now=now)
    lake.operations.wake()  # a runner here (or a worker, at its next pass) runs it
    return json_response(wire.TaskInfo(id=task_id), 202)


def dump_status(call: Call[None]) -> Response:
    task_id = call.query.text("task_id")
    task = task_status(call.services.lake.ledger, call.repository, "dump", task_id)
    finished = task.done and not task.error
    status = wire.RepositoryDumpStatus(
        id=task_id,
        done=task.done,
        update_time=_utc(task.update_time),
        error=task.error or None,
        refs=_refs_dump(task.dump_id) if finished else None,
    )
    return json_response(status)


def restore_submit(call: Call[wire.RefsRestore]) -> Response:
    lake = call.services.lake
    task_id = submit_restore(
        lake.ledger,
        lake.graveler,
        call.repository,
        _dump_id(call.body),
        creator=call.principal,
        now=lake.operations.context.clock(),
    )
    lake.operations.wake()
    return json_response(wire.TaskInfo(id=task_id), 202)


def restore_status(call: Call[None]) -> Response:
    task_id = call.query.text("task_id")
    task = task_status(call.services.lake.ledger, call.repository, "restore", task_id)
    status = wire.RepositoryRestoreStatus(
        id=task_id, done=task.done, update_time=_utc(task.update_time), error=task.error or None
    )
    return json_response(status)


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


_DUMP_NEEDS: Final = on_repository("fs:ListBranches", "fs:ListTags", "fs:ListCommits")
_RESTORE_NEEDS: Final = on_repository("fs:CreateBranch", "fs:CreateTag", "fs:CreateCommit")

_INTERNAL_RULES: Final = "/repositories/{repository}/branch_protection"

OPERATIONS: Final = (
    Operation(
        "internalGetBranchProtectionRules",
        "GET",
        _INTERNAL_RULES,
        get_rules,
        "internal",
        summary="deprecated in lakeFS: getBranchProtectionRules",
        responses={200: list[wire.BranchProtectionRule], 404: None},
        permissions=on_repository("fs:GetBranchProtectionRules"),
    ),
    Operation(
        "internalCreateBranchProtectionRule",
        "POST",
        _INTERNAL_RULES,
        internal_create_rule,
        "internal",
        summary="deprecated in lakeFS: add the rule for one pattern",
        body=wire.BranchProtectionRule,
        responses={204: None, 404: None},
        permissions=on_repository("fs:SetBranchProtectionRules"),
    ),
    Operation(
        "internalDeleteBranchProtectionRule",
        "DELETE",
        _INTERNAL_RULES,
        internal_delete_rule,
        "internal",
        summary="deprecated in lakeFS: remove the rule for one pattern",
        body=wire.BranchProtectionRule,
        responses={204: None, 404: None},
        permissions=on_repository("fs:SetBranchProtectionRules"),
    ),
    Operation(
        "getBranchProtectionRules",
        "GET",
        RULES,
        get_rules,
        API_GROUP,
        responses={200: list[wire.BranchProtectionRule], 404: None},
        permissions=on_repository("fs:GetBranchProtectionRules"),
    ),
    Operation(
        "setBranchProtectionRules",
        "PUT",
        RULES,
        set_rules,
        API_GROUP,
        params=(params.header("If-Match", "the ETag of a read: replace only if unchanged"),),
        body=list[wire.BranchProtectionRule],
        responses={204: None, 404: None, 412: None},
        permissions=on_repository("fs:SetBranchProtectionRules"),
    ),
    Operation(
        "dumpRefs",
        "PUT",
        "/repositories/{repository}/refs/dump",
        dump_refs,
        "internal",
        responses={201: wire.RefsDump, 404: None},
        permissions=_DUMP_NEEDS,
    ),
    Operation(
        "restoreRefs",
        "PUT",
        "/repositories/{repository}/refs/restore",
        restore_refs,
        "internal",
        body=wire.RefsRestore,
        responses={204: None, 400: None, 404: None},
        permissions=_RESTORE_NEEDS,
    ),
    Operation(
        "dumpSubmit",
        "POST",
        "/repositories/{repository}/dump",
        dump_submit,
        "repositories",
        summary="start dumping the refs as a background task (202 and its id)",
        responses={202: wire.TaskInfo, 404: None},
        permissions=_DUMP_NEEDS,
    ),
    Operation(
        "dumpStatus",
        "GET",
        "/repositories/{repository}/dump",
        dump_status,
        "repositories",
        params=(params.text("task_id", "the id dumpSubmit answered", required=True),),
        responses={200: wire.RepositoryDumpStatus, 404: None},
        permissions=_DUMP_NEEDS,
    ),
    Operation(
        "restoreSubmit",
        "POST",
        "/repositories/{repository}/restore",
        restore_submit,
        "repositories",
        summary="start restoring a dump into a bare repository as a background task",
        body=wire.RefsRestore,
        responses={202: wire.TaskInfo, 400: None, 404: None},
        permissions=_RESTORE_NEEDS,
    ),
    Operation(
        "restoreStatus",
        "GET",
        "/repositories/{repository}/restore",
        restore_status,
        "repositories",
        params=(params.text("task_id", "the id restoreSubmit answered", required=True),),
        responses={200: wire.RepositoryRestoreStatus, 404: None},
        permissions=_RESTORE_NEEDS,
    ),
)
