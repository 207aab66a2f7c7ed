"""Pull requests: lakeFS's pulls API (create, list, get, update, merge).

As in lakeFS, listings leave descriptions out (reading one needs
`fs:ReadPullRequest`, listing only `fs:ListPullRequests`); kvlake sends an empty
`description` where lakeFS omits it, because the SDK's model requires the field.
Merging needs `fs:CreateCommit` on the destination branch and
`fs:WritePullRequest`; the pull request is read first, to learn its destination,
so an unknown one is 404 before any permission is looked at, as in lakeFS.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_repository
from kvlake.api.pages import page
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import pulls as wire
from kvlake.api.wire.refs import MergeResult
from kvlake.auth import Permission, branch_arn, repository_arn
from kvlake.errors import DirtyBranchError, InvalidInputError
from kvlake.graveler import PullRequest

API_GROUP: Final = "pulls"
PULLS: Final = "/repositories/{repository}/pulls"
PULL: Final = PULLS + "/{pull_request}"
_STATUSES: Final = ("open", "closed", "all")


def _time(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=UTC)


def _wire(pull_id: str, pull: PullRequest, *, description: bool) -> wire.PullRequest:
    return wire.PullRequest(
        id=pull_id,
        status=pull.status,
        title=pull.title,
        description=pull.description if description else "",
        creation_date=datetime.fromtimestamp(pull.creation_date, tz=UTC),
        author=pull.author,
        source_branch=pull.source,
        destination_branch=pull.destination,
        merged_commit_id=pull.merged_commit_id if description else None,
        closed_date=_time(pull.closed_date),
    )


def list_pull_requests(call: Call[None]) -> Response:
    status = call.query.text("status", "all")
    if status not in _STATUSES:
        raise InvalidInputError(f"query parameter 'status' is {status!r}; use open, closed or all")
    pulls = call.services.graveler.pulls.list(
        call.repository,
        prefix=call.query.text("prefix"),
        after=call.query.text("after"),
        status="open" if status == "open" else "closed" if status == "closed" else "all",
    )
    rows = (_wire(pull_id, pull, description=False) for pull_id, pull in pulls)
    results, pagination = page(rows, call.query.amount(), lambda row: row.id)
    return json_response(wire.PullRequestsList(pagination=pagination, results=results))


def create_pull_request(call: Call[wire.PullRequestCreation]) -> Response:
    request = call.body
    pull_id = call.services.graveler.pulls.create(
        call.repository,
        title=request.title,
        description=request.description or "",
        author=call.user_id,
        source=request.source_branch,
        destination=request.destination_branch,
    )
    return json_response(wire.PullRequestCreationResponse(id=pull_id), 201)


def get_pull_request(call: Call[None]) -> Response:
    pull_id = call.path["pull_request"]
    pull = call.services.graveler.pulls.get(call.repository, pull_id)
    return json_response(_wire(pull_id, pull, description=True))


def update_pull_request(call: Call[wire.PullRequestBasic]) -> Response:
    request = call.body
    call.services.graveler.pulls.update(
        call.repository,
        call.path["pull_request"],
        title=request.title,
        description=request.description,
        status=request.status,
    )
    return no_content()


def merge_pull_request(call: Call[None]) -> Response:
    pulls = call.services.graveler.pulls
    call.fields["destination"] = pulls.get(call.repository, call.path["pull_request"]).destination
    commit_id = pulls.merge(call.repository, call.path["pull_request"], committer=call.user_id)
    return json_response(MergeResult(reference=commit_id))


def _merge_needs(call: Call[None]) -> Sequence[Permission]:
    pull = call.services.graveler.pulls.get(call.repository, call.path["pull_request"])
    repository = call.path["repository"]
    return (
        Permission("fs:CreateCommit", branch_arn(repository, pull.destination)),
        Permission("fs:WritePullRequest", repository_arn(repository)),
    )


_WRITE: Final = on_repository("fs:WritePullRequest")

OPERATIONS: Final = (
    Operation(
        "listPullRequests",
        "GET",
        PULLS,
        list_pull_requests,
        API_GROUP,
        params=(
            *params.PAGE,
            params.choice("status", ("open", "closed", "all"), "open, closed (or merged) or all"),
        ),
        responses={200: wire.PullRequestsList, 400: None, 404: None},
        permissions=on_repository("fs:ListPullRequests"),
    ),
    Operation(
        "createPullRequest",
        "POST",
        PULLS,
        create_pull_request,
        API_GROUP,
        body=wire.PullRequestCreation,
        responses={201: wire.PullRequestCreationResponse, 400: None, 404: None},
        permissions=_WRITE,
    ),
    Operation(
        "getPullRequest",
        "GET",
        PULL,
        get_pull_request,
        API_GROUP,
        responses={200: wire.PullRequest, 400: None, 404: None},
        permissions=on_repository("fs:ReadPullRequest"),
    ),
    Operation(
        "updatePullRequest",
        "PATCH",
        PULL,
        update_pull_request,
        API_GROUP,
        body=wire.PullRequestBasic,
        responses={204: None, 400: None, 404: None},
        permissions=_WRITE,
    ),
    Operation(
        "mergePullRequest",
        "PUT",
        PULL + "/merge",
        merge_pull_request,
        API_GROUP,
        responses={200: MergeResult, 400: None, 404: None, 409: None},
        permissions=_merge_needs,
        lakefs_errors={DirtyBranchError: "{destination}: uncommitted changes (dirty branch)"},
    ),
)
