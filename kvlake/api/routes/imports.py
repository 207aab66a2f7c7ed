"""Zero-copy imports: importStart (202 and an id), importStatus, importCancel.

An import is an `import` operation: its record in the KV is run by whichever
runner claims it (this server's, another's, a `kvlake worker`'s) and is what
importStatus answers from, so any server process answers it; `/operations`
lists and cancels it too. The work, and why imported objects are never deleted,
is the catalog's `Importer` and its engine (kvlake/catalog/import_runs.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from starlette.responses import Response

from kvlake.api import convert, params
from kvlake.api.needs import on_branch
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.api.wire.common import Error
from kvlake.auth import Permission, branch_arn, object_arn
from kvlake.blockstore import canonical_prefix
from kvlake.catalog import ImportSource
from kvlake.errors import InvalidInputError

IMPORT: Final = "/repositories/{repository}/branches/{branch}/import"
_ID: Final = params.text("id", "the id importStart returned", required=True)


def import_start(call: Call[wire.ImportCreation]) -> Response:
    body = call.body
    lake = call.services.lake
    job = lake.catalog.imports.prepare(
        call.repository,
        call.path["branch"],
        [ImportSource(p.path, p.destination, p.type) for p in body.paths],
        committer=call.user_id,
        message=body.commit.message,
        metadata=dict(body.commit.metadata or {}),
        creator=call.principal,
    )
    lake.operations.wake()  # a runner here (or a worker, at its next pass) runs it
    return json_response(wire.ImportCreationResponse(id=job.import_id), 202)


def import_status(call: Call[None]) -> Response:
    repository = call.repository
    status = call.services.catalog.imports.status(repository, call.query.text("id"))
    commit = None
    if status.commit_id:
        record = call.services.graveler.get_commit(repository, status.commit_id)
        commit = convert.commit(status.commit_id, record)
    answer = wire.ImportStatus(
        completed=status.completed,
        update_time=datetime.fromtimestamp(status.updated, UTC).isoformat(),
        ingested_objects=status.ingested,
        metarange_id=status.metarange_id or None,
        commit=commit,
        error=Error(message=status.error) if status.error else None,
    )
    return json_response(answer)


def import_cancel(call: Call[None]) -> Response:
    call.services.catalog.imports.cancel(call.repository, call.query.text("id"))
    return no_content()


def _start_needs(call: Call[wire.ImportCreation]) -> Sequence[Permission]:
    """lakeFS's: write and commit on the branch, import from each source, write each
    destination. A `common_prefix` location reads every blob under its source and writes
    every path under its destination, so it needs both on everything under them: a deny
    on a sub-folder of either refuses it, as it refuses a bulk delete (issue 23)."""
    repository, branch = call.path["repository"], call.path["branch"]
    needs = [
        Permission("fs:WriteObject", branch_arn(repository, branch)),
        Permission("fs:CreateCommit", branch_arn(repository, branch)),
    ]
    for location in call.body.paths:
        folder = location.type == "common_prefix"
        source = f"arn:lakefs:fs:::namespace/{_canonical(location.path)}"
        needs.append(Permission("fs:ImportFromStorage", source, under=folder))
        destination = object_arn(repository, location.destination)
        needs.append(Permission("fs:WriteObject", destination, under=folder))
    return needs


def _canonical(path: str) -> str:
    """The source as the blockstore reads it, so a deny on `s3://b/secret/*` holds for
    `s3:///b/secret/` and `s3://b//secret/` too (invariant 7: normalised before any
    permission check). A path that does not parse is refused by the import itself."""
    try:
        return canonical_prefix(path, what="import path")
    except InvalidInputError:
        return path


OPERATIONS: Final = (
    Operation(
        "importStart",
        "POST",
        IMPORT,
        import_start,
        "import",
        summary="import objects of an s3:// or local:// location as one commit, without copying"
        " them",
        body=wire.ImportCreation,
        responses={202: wire.ImportCreationResponse, 400: None, 404: None},
        permissions=_start_needs,
        body_permissions=True,
    ),
    Operation(
        "importStatus",
        "GET",
        IMPORT,
        import_status,
        "import",
        params=(_ID,),
        responses={200: wire.ImportStatus, 404: None},
        permissions=on_branch("fs:ReadBranch"),
    ),
    Operation(
        "importCancel",
        "DELETE",
        IMPORT,
        import_cancel,
        "import",
        params=(_ID,),
        responses={204: None, 404: None, 409: None},
        permissions=on_branch("fs:ImportCancel"),
    ),
)
