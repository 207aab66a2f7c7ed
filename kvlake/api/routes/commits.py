"""Commits: get one by any ref expression; store a commit record built elsewhere (a restore).

createCommitRecord stores a commit under the id it claims, which must be its
content address as kvlake computes it (so records dumped by kvlake restore;
lakeFS's ids hash other fields and are refused), over a metarange that is in
the namespace; it moves no ref. It needs `fs:CreateCommit` on the repository,
as in lakeFS.
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.api import convert
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.errors import CommitIdError, ConflictError
from kvlake.graveler import Commit

API_GROUP: Final = "commits"


def get_commit(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    resolved = graveler.resolve_ref(repository, call.path["commitId"])
    return json_response(convert.commit(resolved.commit_id, resolved.commit))


def create_commit_record(call: Call[wire.CommitRecordCreation]) -> Response:
    request = call.body
    commit = Commit(
        committer=request.committer,
        message=request.message,
        metarange_id=request.metarange_id,
        creation_date=request.creation_date,
        parents=tuple(request.parents),
        metadata=dict(request.metadata or {}),
        generation=request.generation,
    )
    call.services.graveler.create_commit_record(call.repository, request.commit_id, commit)
    return no_content()


OPERATIONS: Final = (
    Operation(
        "getCommit",
        "GET",
        "/repositories/{repository}/commits/{commitId}",
        get_commit,
        API_GROUP,
        responses={200: wire.Commit, 404: None},
        permissions=on_repository("fs:ReadCommit"),
    ),
    Operation(
        "CreateCommitRecord",
        "POST",
        "/repositories/{repository}/commits",
        create_commit_record,
        "internal",
        summary="store a commit record under its content address (restores); no ref moves",
        body=wire.CommitRecordCreation,
        responses={204: None, 400: None, 404: None, 409: None},
        permissions=on_repository("fs:CreateCommit"),
        lakefs_errors={
            CommitIdError: "commit id: invalid value: validation error",
            ConflictError: "commit already exists: not unique",
        },
    ),
)
