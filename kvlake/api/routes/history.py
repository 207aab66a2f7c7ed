"""History that moves branches: merge and merge base, reset, revert, cherry-pick.

Each handler maps one lakeFS operation onto one `Graveler` history method;
the facade checks branch protection and publishes by compare-and-swap, so the
API adds only translation between wire models and records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_branch, on_repository
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.auth import Permission, branch_arn
from kvlake.errors import DirtyBranchError, InvalidInputError, NotFoundError

API_GROUP: Final = "refs"
BRANCH: Final = "/repositories/{repository}/branches/{branch}"
MERGE: Final = "/repositories/{repository}/refs/{sourceRef}/merge/{destinationBranch}"


def merge_into_branch(call: Call[wire.Merge | None]) -> Response:
    request = call.body or wire.Merge()
    graveler = call.services.graveler
    repository = call.repository
    strategy = request.strategy or "none"
    commit_id = graveler.merges.merge(
        repository,
        call.path["sourceRef"],
        call.path["destinationBranch"],
        committer=call.user_id,
        message=request.message or "",
        metadata=dict(request.metadata or {}),
        strategy="source-wins"
        if strategy == "source-wins"
        else "dest-wins"
        if strategy == "dest-wins"
        else "none",
        squash=bool(request.squash_merge),
        # lakeFS: `force` also records a merge that brings no changes.
        allow_empty=bool(request.allow_empty or request.force),
    )
    return json_response(wire.MergeResult(reference=commit_id))


def find_merge_base(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    source, destination = call.path["sourceRef"], call.path["destinationBranch"]
    base = graveler.merges.merge_base(repository, source, destination)
    if base is None:
        raise NotFoundError(f"{source!r} and {destination!r} have no common ancestor")
    return json_response(
        wire.FindMergeBaseResult(
            source_commit_id=graveler.resolve_ref(repository, source).commit_id,
            destination_commit_id=graveler.resolve_ref(repository, destination).commit_id,
            base_commit_id=base,
        )
    )


def reset_branch(call: Call[wire.ResetCreation]) -> Response:
    request = call.body
    graveler = call.services.graveler
    repository = call.repository
    branch = call.path["branch"]
    if request.type == "reset":
        graveler.resets.reset_branch(repository, branch)
    elif not request.path:
        raise InvalidInputError(f"reset of type {request.type!r} needs a path")
    elif request.type == "object":
        path = params.check_object_path("path", request.path)
        call.services.catalog.reset_object(
            repository, branch, path, prefix=False, owner=call.principal
        )
    else:
        call.services.catalog.reset_object(
            repository, branch, request.path, prefix=True, owner=call.principal
        )
    return no_content()


def hard_reset_branch(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    graveler.resets.reset_hard(repository, call.path["branch"], call.query.text("ref"))
    return no_content()


def revert_branch(call: Call[wire.RevertCreation]) -> Response:
    request = call.body
    graveler = call.services.graveler
    repository = call.repository
    overrides = request.commit_overrides
    if overrides is not None and overrides.message is not None:
        raise InvalidInputError("commit_overrides.message is not supported on revert; omit it")
    graveler.changes.revert(
        repository,
        call.path["branch"],
        request.ref,
        committer=call.user_id,
        parent_number=request.parent_number,
        metadata=dict(overrides.metadata or {}) if overrides else None,
        allow_empty=bool(request.allow_empty),
    )
    return no_content()


def cherry_pick(call: Call[wire.CherryPickCreation]) -> Response:
    request = call.body
    if request.commit_overrides is not None:
        raise InvalidInputError("commit_overrides is not supported on cherry-pick; omit it")
    graveler = call.services.graveler
    repository = call.repository
    commit_id = graveler.changes.cherry_pick(
        repository,
        call.path["branch"],
        request.ref,
        committer=call.user_id,
        parent_number=request.parent_number or 0,
    )
    return json_response(convert.commit(commit_id, graveler.get_commit(repository, commit_id)), 201)


def _merge_needs(call: Call[None]) -> Sequence[Permission]:
    arn = branch_arn(call.path["repository"], call.path["destinationBranch"])
    return (Permission("fs:CreateCommit", arn),)


OPERATIONS: Final = (
    Operation[wire.Merge | None](
        "mergeIntoBranch",
        "POST",
        MERGE,
        merge_into_branch,
        API_GROUP,
        body=wire.Merge,
        optional_body=True,
        responses={200: wire.MergeResult, 400: None, 403: None, 404: None, 409: None},
        permissions=_merge_needs,
        lakefs_errors={DirtyBranchError: "{destinationBranch}: uncommitted changes (dirty branch)"},
    ),
    Operation(
        "findMergeBase",
        "GET",
        MERGE,
        find_merge_base,
        API_GROUP,
        responses={200: wire.FindMergeBaseResult, 404: None},
        permissions=on_repository("fs:ListCommits"),
    ),
    Operation(
        "resetBranch",
        "PUT",
        BRANCH,
        reset_branch,
        "branches",
        body=wire.ResetCreation,
        responses={204: None, 403: None, 404: None},
        permissions=on_branch("fs:RevertBranch"),
    ),
    Operation(
        "hardResetBranch",
        "PUT",
        BRANCH + "/hard_reset",
        hard_reset_branch,
        "branches",
        params=(
            params.text("ref", "the ref to point the branch at", required=True),
            params.FORCE,
        ),
        responses={204: None, 403: None, 404: None},
        permissions=on_branch("fs:RevertBranch"),
    ),
    Operation(
        "revertBranch",
        "POST",
        BRANCH + "/revert",
        revert_branch,
        "branches",
        body=wire.RevertCreation,
        responses={204: None, 403: None, 404: None, 409: None},
        permissions=on_branch("fs:RevertBranch"),
        lakefs_errors={DirtyBranchError: "{branch}: uncommitted changes (dirty branch)"},
    ),
    Operation(
        "cherryPick",
        "POST",
        BRANCH + "/cherry-pick",
        cherry_pick,
        "branches",
        body=wire.CherryPickCreation,
        responses={201: wire.Commit, 403: None, 404: None, 409: None},
        permissions=on_branch("fs:CreateCommit"),
        lakefs_errors={DirtyBranchError: "{branch}: uncommitted changes (dirty branch)"},
    ),
)
