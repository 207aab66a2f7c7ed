"""Commits and refs: get a commit by any ref expression."""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.api import convert
from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire import refs as wire

API_GROUP: Final = "commits"


def get_commit(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    resolved = graveler.resolve_ref(repository, call.path["commitId"])
    return json_response(convert.commit(resolved.commit_id, resolved.commit))


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
)
