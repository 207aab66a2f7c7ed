"""Tags: list, create, get, delete."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_repository, on_tag
from kvlake.api.pages import page
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import refs as wire
from kvlake.auth import Permission, tag_arn
from kvlake.errors import ConflictError

API_GROUP: Final = "tags"
ONE: Final = "/repositories/{repository}/tags/{tag}"


def list_tags(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    tags = (
        wire.Ref(id=name, commit_id=commit_id)
        for name, commit_id in graveler.list_tags(
            repository, after=call.query.text("after"), prefix=call.query.text("prefix")
        )
    )
    results, pagination = page(
        tags, call.query.amount(), lambda ref: ref.id, prefix=call.query.text("prefix")
    )
    return json_response(wire.RefList(pagination=pagination, results=results))


def create_tag(call: Call[wire.TagCreation]) -> Response:
    request = call.body
    graveler = call.services.graveler
    repository = call.repository
    commit_id = graveler.create_tag(repository, request.id, request.ref)
    return json_response(wire.Ref(id=request.id, commit_id=commit_id), 201)


def get_tag(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    commit_id = graveler.get_tag(repository, call.path["tag"])
    return json_response(wire.Ref(id=call.path["tag"], commit_id=commit_id))


def delete_tag(call: Call[None]) -> Response:
    graveler = call.services.graveler
    repository = call.repository
    graveler.delete_tag(repository, call.path["tag"])
    return no_content()


def _create_needs(call: Call[wire.TagCreation]) -> Sequence[Permission]:
    request = call.body
    return (Permission("fs:CreateTag", tag_arn(call.path["repository"], request.id)),)


OPERATIONS: Final = (
    Operation(
        "listTags",
        "GET",
        "/repositories/{repository}/tags",
        list_tags,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.RefList},
        permissions=on_repository("fs:ListTags"),
    ),
    Operation(
        "createTag",
        "POST",
        "/repositories/{repository}/tags",
        create_tag,
        API_GROUP,
        body=wire.TagCreation,
        responses={201: wire.Ref, 409: None},
        permissions=_create_needs,
        body_permissions=True,
        lakefs_errors={ConflictError: "tag already exists: not unique"},
    ),
    Operation(
        "getTag",
        "GET",
        ONE,
        get_tag,
        API_GROUP,
        responses={200: wire.Ref, 404: None},
        permissions=on_tag("fs:ReadTag"),
    ),
    Operation(
        "deleteTag",
        "DELETE",
        ONE,
        delete_tag,
        API_GROUP,
        params=(params.FORCE,),
        responses={204: None, 404: None},
        permissions=on_tag("fs:DeleteTag"),
    ),
)
