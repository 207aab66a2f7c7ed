"""Repository settings: branch protection rules, and refs dump and restore.

Protection rules follow lakeFS: a rule's pattern (fnmatch-style) blocks direct
writes and commits on matching branches, and deleting them; merges into them
are still allowed. `If-Match` with the ETag of a read makes a replacement
conditional (412 when the rules changed meanwhile).

A refs dump is one id naming three files in the storage namespace; lakeFS's
RefsDump carries three metarange ids, so kvlake puts the dump id in all three,
and a restore takes them back only when they agree.
"""

from __future__ import annotations

import hashlib
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.errors import InvalidInputError, PreconditionFailedError
from kvlake.graveler import Rules

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
    dump_id = manifest.dump_id
    return json_response(
        wire.RefsDump(
            commits_meta_range_id=dump_id,
            tags_meta_range_id=dump_id,
            branches_meta_range_id=dump_id,
        ),
        201,
    )


def restore_refs(call: Call[wire.RefsRestore]) -> Response:
    request = call.body
    ids = {
        request.commits_meta_range_id,
        request.tags_meta_range_id,
        request.branches_meta_range_id,
    }
    if len(ids) != 1:
        raise InvalidInputError(
            "kvlake restores one dump: give the dump id from dumpRefs in all three fields"
        )
    graveler = call.services.graveler
    graveler.dumps.restore(call.repository, ids.pop())
    return no_content()


OPERATIONS: Final = (
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
        permissions=on_repository("fs:ListBranches", "fs:ListTags", "fs:ListCommits"),
    ),
    Operation(
        "restoreRefs",
        "PUT",
        "/repositories/{repository}/refs/restore",
        restore_refs,
        "internal",
        body=wire.RefsRestore,
        responses={204: None, 400: None, 404: None},
        permissions=on_repository("fs:CreateBranch", "fs:CreateTag", "fs:CreateCommit"),
    ),
)
