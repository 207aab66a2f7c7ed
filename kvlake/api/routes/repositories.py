"""Repositories: list, create (optionally with the quickstart sample), get, delete, metadata."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_all, on_repository
from kvlake.api.pages import page, search_page
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.auth import Permission, repository_arn
from kvlake.errors import ConflictError, InvalidInputError
from kvlake.graveler import Repository
from kvlake.sample import COMMIT_MESSAGE, sample_files

API_GROUP: Final = "repositories"


def to_wire(repository: Repository) -> wire.Repository:
    return wire.Repository(
        id=repository.name,
        creation_date=int(repository.creation_date),
        default_branch=repository.default_branch,
        storage_namespace=repository.storage_namespace,
        storage_id="",
    )


def list_repositories(call: Call[None]) -> Response:
    query = call.query
    repositories = call.services.graveler.list_repositories(
        after=query.text("after"), prefix=query.text("prefix")
    )
    search = query.text("search")
    if search:
        results, pagination = search_page(
            repositories, query.amount(), lambda r: r.name, lambda r: search in r.name
        )
    else:
        results, pagination = page(
            repositories, query.amount(), lambda r: r.name, prefix=query.text("prefix")
        )
    return json_response(
        wire.RepositoryList(pagination=pagination, results=[to_wire(r) for r in results])
    )


def create_repository(call: Call[wire.RepositoryCreation]) -> Response:
    request = call.body
    if request.read_only:
        raise InvalidInputError("read-only repositories are not supported; omit read_only")
    if request.storage_id:
        raise InvalidInputError("kvlake has one storage: omit storage_id or pass ''")
    graveler = call.services.graveler
    default_branch = request.default_branch or "main"
    if call.query.flag("bare"):
        repository = graveler.create_bare_repository(
            request.name, storage_namespace=request.storage_namespace, default_branch=default_branch
        )
    else:
        repository = graveler.create_repository(
            request.name, storage_namespace=request.storage_namespace, default_branch=default_branch
        )
    if request.sample_data:
        for sample in sample_files(repository.name, default_branch):
            call.services.catalog.upload(
                repository,
                default_branch,
                sample.path,
                io.BytesIO(sample.data),
                content_type=sample.content_type,
            )
        graveler.commit(repository, default_branch, committer=call.user_id, message=COMMIT_MESSAGE)
        # As lakeFS's quickstart: the default branch changes only by merges.
        graveler.protection.set_rule(repository, default_branch, ("staging_write", "commit"))
    return json_response(to_wire(repository), 201)


def get_repository(call: Call[None]) -> Response:
    return json_response(to_wire(call.services.graveler.get_repository(call.path["repository"])))


def delete_repository(call: Call[None]) -> Response:
    purge = call.query.flag("purge")
    call.services.lake.purges.delete_repository(call.path["repository"], purge=purge)
    return no_content()


def get_repository_metadata(call: Call[None]) -> Response:
    return json_response(call.services.graveler.metadata.get(call.repository))


def set_repository_metadata(call: Call[wire.RepositoryMetadataSet]) -> Response:
    if call.body.metadata:  # as lakeFS: nothing to set is done at once, repository unread
        call.services.graveler.metadata.set(call.repository, call.body.metadata)
    return no_content()


def delete_repository_metadata(call: Call[wire.RepositoryMetadataKeys]) -> Response:
    if call.body.keys:
        call.services.graveler.metadata.delete(call.repository, call.body.keys)
    return no_content()


def _create(call: Call[wire.RepositoryCreation]) -> Sequence[Permission]:
    request = call.body
    # Checked against the namespace as storage will use it: a deny on `local://prod`
    # must also hold for `local://prod/`, `local://prod//` and `local:///prod`.
    namespace = call.services.blockstore.check_namespace(request.storage_namespace)
    return (
        Permission("fs:CreateRepository", repository_arn(request.name)),
        Permission("fs:AttachStorageNamespace", namespace),
    )


OPERATIONS: Final = (
    Operation(
        "listRepositories",
        "GET",
        "/repositories",
        list_repositories,
        API_GROUP,
        params=(*params.PAGE, params.text("search", "only repositories whose name contains it")),
        responses={200: wire.RepositoryList},
        permissions=on_all("fs:ListRepositories"),
    ),
    Operation(
        "createRepository",
        "POST",
        "/repositories",
        create_repository,
        API_GROUP,
        params=(params.flag("bare", "create without an initial commit and branch"),),
        body=wire.RepositoryCreation,
        responses={201: wire.Repository, 409: None},
        permissions=_create,
        body_permissions=True,
        lakefs_errors={ConflictError: "error creating repository: not unique"},
    ),
    Operation(
        "getRepository",
        "GET",
        "/repositories/{repository}",
        get_repository,
        API_GROUP,
        responses={200: wire.Repository, 404: None},
        permissions=on_repository("fs:ReadRepository"),
    ),
    Operation(
        "deleteRepository",
        "DELETE",
        "/repositories/{repository}",
        delete_repository,
        API_GROUP,
        params=(
            params.FORCE,
            params.flag("purge", "also delete every blob of the storage namespace (kvlake)"),
        ),
        responses={204: None, 404: None},
        permissions=on_repository("fs:DeleteRepository"),
    ),
    Operation(
        "getRepositoryMetadata",
        "GET",
        "/repositories/{repository}/metadata",
        get_repository_metadata,
        API_GROUP,
        responses={200: "metadata", 404: None},
        permissions=on_repository("fs:ReadRepository"),
    ),
    Operation(
        "setRepositoryMetadata",
        "POST",
        "/repositories/{repository}/metadata",
        set_repository_metadata,
        "internal",
        summary="add or replace these keys of the repository's metadata; others stay",
        body=wire.RepositoryMetadataSet,
        responses={204: None, 400: None, 404: None},
        permissions=on_repository("fs:UpdateRepository"),
    ),
    Operation(
        "deleteRepositoryMetadata",
        "DELETE",
        "/repositories/{repository}/metadata",
        delete_repository_metadata,
        "internal",
        summary="delete these keys of the repository's metadata (absent ones are ignored)",
        body=wire.RepositoryMetadataKeys,
        responses={204: None, 400: None, 404: None},
        permissions=on_repository("fs:UpdateRepository"),
    ),
)
