"""`GET /repositories/{repository}/purge`: how a purge of a deleted repository is going.

A kvlake extension: `DELETE /repositories/{repository}?purge=true` answers at once, and the
server's cleaner and deletion workers delete the namespace's blobs after the send delay.
This answers the newest purge of the name (the repository itself is gone), so a client
(`kvlake repo delete --purge --wait`) can count down the delay and show the deletion.
Who may delete the repository may read its purge.
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response
from kvlake.api.wire.purges import PurgeStatus
from kvlake.errors import NotFoundError

API_GROUP: Final = "experimental"


def get_purge(call: Call[None]) -> Response:
    name = call.path["repository"]
    purges = call.services.lake.purges
    report = purges.latest(name)
    if report is None:
        raise NotFoundError(f"repository {name!r} has no purge: it was never deleted with purge")
    request, counts = report
    finished = counts.deleted + counts.dead_lettered >= request.logged
    due = purges.due(request)
    return json_response(
        PurgeStatus(
            repository=request.repository,
            instance_uid=request.instance_uid,
            storage_namespace=request.storage_namespace,
            state="done" if request.state == "logged" and finished else request.state,
            requested=request.requested,
            due=due,
            seconds_until_due=max(0.0, due - call.services.lake.clock()),
            logged=request.logged,
            deleted=counts.deleted,
            dead_lettered=counts.dead_lettered,
        )
    )


OPERATIONS: Final = (
    Operation(
        "getRepositoryPurge",
        "GET",
        "/repositories/{repository}/purge",
        get_purge,
        API_GROUP,
        summary="how the newest purge of a deleted repository's storage namespace is going",
        responses={200: PurgeStatus, 404: None},
        permissions=on_repository("fs:DeleteRepository"),
    ),
)
