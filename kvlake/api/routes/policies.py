"""Policies: list, create, get, update, delete."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_all
from kvlake.api.pages import page
from kvlake.api.routes.auth_common import on_policy, policy, statements
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import auth as wire
from kvlake.auth import Permission, policy_arn
from kvlake.errors import ConflictError, InvalidInputError, NotFoundError

API_GROUP: Final = "auth"
POLICY: Final = "/auth/policies/{policyId}"


def list_policies(call: Call[None]) -> Response:
    query = call.query
    found = call.services.auth.list_policies(prefix=query.text("prefix"), after=query.text("after"))
    results, pagination = page(found, query.amount(), lambda p: p.id)
    return json_response(
        wire.PolicyList(pagination=pagination, results=[policy(p) for p in results])
    )


def create_policy(call: Call[wire.Policy]) -> Response:
    request = call.body
    return json_response(
        policy(call.services.auth.create_policy(request.id, statements(request))), 201
    )


def get_policy(call: Call[None]) -> Response:
    return json_response(policy(call.services.auth.get_policy(call.path["policyId"])))


def update_policy(call: Call[wire.Policy]) -> Response:
    request = call.body
    if request.id != call.path["policyId"]:
        raise InvalidInputError(
            f"policy id {request.id!r} in the body differs from {call.path['policyId']!r} in the"
            " path; a policy cannot be renamed"
        )
    updated = call.services.auth.update_policy(request.id, statements(request))
    return json_response(policy(updated))


def delete_policy(call: Call[None]) -> Response:
    call.services.auth.delete_policy(call.path["policyId"])
    return no_content()


def _create_needs(call: Call[wire.Policy]) -> Sequence[Permission]:
    request = call.body
    return (Permission("auth:CreatePolicy", policy_arn(request.id)),)


OPERATIONS: Final = (
    Operation(
        "listPolicies",
        "GET",
        "/auth/policies",
        list_policies,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.PolicyList},
        permissions=on_all("auth:ListPolicies"),
    ),
    Operation(
        "createPolicy",
        "POST",
        "/auth/policies",
        create_policy,
        API_GROUP,
        body=wire.Policy,
        responses={201: wire.Policy, 409: None},
        permissions=_create_needs,
        body_permissions=True,
        lakefs_errors={ConflictError: "Already exists"},
    ),
    Operation(
        "getPolicy",
        "GET",
        POLICY,
        get_policy,
        API_GROUP,
        responses={200: wire.Policy, 404: None},
        permissions=on_policy("auth:ReadPolicy"),
        lakefs_errors={NotFoundError: "policy not found"},
    ),
    Operation(
        "updatePolicy",
        "PUT",
        POLICY,
        update_policy,
        API_GROUP,
        body=wire.Policy,
        responses={200: wire.Policy, 404: None},
        permissions=on_policy("auth:UpdatePolicy"),
        lakefs_errors={NotFoundError: "policy not found"},
    ),
    Operation(
        "deletePolicy",
        "DELETE",
        POLICY,
        delete_policy,
        API_GROUP,
        responses={204: None, 404: None},
        permissions=on_policy("auth:DeletePolicy"),
        lakefs_errors={NotFoundError: "policy not found"},
    ),
)
