"""Branches: list (hidden ones on request), create, get, delete, commit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_branch, on_repository
from kvlake.api.pages import page
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.auth import Permission, branch_arn
from kvlake.errors import (
    ConflictError,
    DirtyBranchError,
    ProtectedBranchError,
    RefNotFoundError,
)

API_GROUP: Final = "branches"
BRANCH: Final = "/repositories/{repository}/branches/{branch}"


def list_branches(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    show_hidden = call.query.flag("show_hidden")
    branches = (
        wire.Ref(id=name, commit_id=branch.commit_id)
        for name, branch in graveler.list_branches(
            repository,
            after=call.query.text("after"),
            prefix=call.query.text("prefix"),
            visible_only=not show_hidden,
        )
    )
    results, pagination = page(
        branches, call.query.amount(), lambda ref: ref.id, prefix=call.query.text("prefix")
    )
    return json_response(wire.RefList(pagination=pagination, results=results))


def create_branch(call: Call[wire.BranchCreation]) -> Response:
    request = call.body
    graveler = call.services.graveler
    read = call.read_branch(request.source)  # the record and the source in one round trip
    branch = graveler.create_branch(
        read.repository, request.name, request.source, hidden=bool(request.hidden), read=read
    )
    return Response(branch.commit_id, 201, media_type="text/html")


def get_branch(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    branch = graveler.get_branch(repository, call.path["branch"])
    return json_response(wire.Ref(id=call.path["branch"], commit_id=branch.commit_id))


def delete_branch(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    graveler.delete_branch(repository, call.path["branch"])
    return no_content()


def commit(call: Call[wire.CommitCreation]) -> Response:
    request = call.body
    source = call.query.text("source_metarange") or None  # empty: none, as in lakeFS
    graveler = call.services.graveler
    repository = call.repository
    commit_id = graveler.commit(
        repository,
        call.path["branch"],
        committer=call.user_id,
        message=request.message,
        metadata=dict(request.metadata or {}),
        allow_empty=bool(request.allow_empty),
        date=request.date,
        source_metarange=source,
    )
    record = graveler.get_commit(repository, commit_id)
    return json_response(convert.commit(commit_id, record), 201)


def _create_needs(call: Call[wire.BranchCreation]) -> Sequence[Permission]:
    request = call.body
    return (Permission("fs:CreateBranch", branch_arn(call.path["repository"], request.name)),)


OPERATIONS: Final = (
    Operation(
        "listBranches",
        "GET",
        "/repositories/{repository}/branches",
        list_branches,
        API_GROUP,
        params=(*params.PAGE, params.flag("show_hidden", "include hidden branches")),
        responses={200: wire.RefList},
        permissions=on_repository("fs:ListBranches"),
    ),
    Operation(
        "createBranch",
        "POST",
        "/repositories/{repository}/branches",
        create_branch,
        API_GROUP,
        body=wire.BranchCreation,
        responses={201: "text", 409: None},
        permissions=_create_needs,
        body_permissions=True,
        lakefs_errors={
            ConflictError: "branch already exists: not unique",
            RefNotFoundError: "source reference '{source}': not found",
        },
    ),
    Operation(
        "getBranch",
        "GET",
        BRANCH,
        get_branch,
        API_GROUP,
        responses={200: wire.Ref, 404: None},
        permissions=on_branch("fs:ReadBranch"),
        inline=True,
    ),
    Operation(
        "deleteBranch",
        "DELETE",
        BRANCH,
        delete_branch,
        API_GROUP,
        params=(params.FORCE,),
        responses={204: None, 404: None},
        permissions=on_branch("fs:DeleteBranch"),
    ),
    Operation(
        "commit",
        "POST",
        BRANCH + "/commits",
        commit,
        "commits",
        params=(
            params.text(
                "source_metarange",
                "commit this metarange (one of the repository's) on a clean branch",
            ),
        ),
        body=wire.CommitCreation,
        responses={201: wire.Commit, 400: None, 404: None},
        permissions=on_branch("fs:CreateCommit"),
        lakefs_errors={
            ProtectedBranchError: "cannot commit to protected branch",
            DirtyBranchError: "cannot use source MetaRange on a branch with uncommitted changes",
        },
    ),
)
