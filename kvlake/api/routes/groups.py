"""Groups, their members, their policies and their ACLs.

A group's ACL (lakeFS's simplified permissions: Read, Write, Super, Admin) is one
policy, `ACL(_-_)<group>`, that setGroupACL writes and attaches alone
(kvlake/auth/acl.py); getGroupACL reads it back, and answers lakeFS's 404 with
`no_acl` when the group's policies are something else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_all
from kvlake.api.pages import page
from kvlake.api.routes.auth_common import group, on_group, on_policy, policy, user
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import auth as wire
from kvlake.auth import (
    Permission,
    acl_policy_id,
    group_arn,
    policy_arn,
    read_group_acl,
    write_group_acl,
)
from kvlake.errors import AclPermissionError, ConflictError, NotFoundError

API_GROUP: Final = "auth"
GROUP: Final = "/auth/groups/{groupId}"


def list_groups(call: Call[None]) -> Response:
    query = call.query
    groups = call.services.auth.list_groups(prefix=query.text("prefix"), after=query.text("after"))
    results, pagination = page(groups, query.amount(), lambda g: g.id)
    return json_response(wire.GroupList(pagination=pagination, results=[group(g) for g in results]))


def create_group(call: Call[wire.GroupCreation]) -> Response:
    request = call.body
    made = call.services.auth.create_group(request.id, description=request.description)
    return json_response(group(made), 201)


def get_group(call: Call[None]) -> Response:
    return json_response(group(call.services.auth.get_group(call.path["groupId"])))


def delete_group(call: Call[None]) -> Response:
    call.services.auth.delete_group(call.path["groupId"])
    return no_content()


def list_group_members(call: Call[None]) -> Response:
    auth, query = call.services.auth, call.query
    ids = auth.group_members(call.path["groupId"], after=query.text("after"))
    results, pagination = page(ids, query.amount(), lambda i: i, prefix=query.text("prefix"))
    return json_response(
        wire.UserList(pagination=pagination, results=[user(auth.get_user(i)) for i in results])
    )


def add_group_membership(call: Call[None]) -> Response:
    call.services.auth.add_member(call.path["groupId"], call.path["userId"])
    return Response(status_code=201)


def delete_group_membership(call: Call[None]) -> Response:
    call.services.auth.remove_member(call.path["groupId"], call.path["userId"])
    return no_content()


def list_group_policies(call: Call[None]) -> Response:
    auth, query = call.services.auth, call.query
    ids = auth.group_policies(call.path["groupId"], after=query.text("after"))
    results, pagination = page(ids, query.amount(), lambda i: i, prefix=query.text("prefix"))
    policies = [policy(auth.get_policy(i)) for i in results]
    return json_response(wire.PolicyList(pagination=pagination, results=policies))


def attach_policy_to_group(call: Call[None]) -> Response:
    call.services.auth.attach_to_group(call.path["groupId"], call.path["policyId"])
    return Response(status_code=201)


def detach_policy_from_group(call: Call[None]) -> Response:
    call.services.auth.detach_from_group(call.path["groupId"], call.path["policyId"])
    return no_content()


def get_group_acl(call: Call[None]) -> Response:
    found = read_group_acl(call.services.auth, call.path["groupId"])
    if found.problem:
        return json_response(wire.ErrorNoACL(message=found.problem), 404)
    return json_response(wire.ACL(permission=found.permission))


def set_group_acl(call: Call[wire.ACL]) -> Response:
    write_group_acl(call.services.auth, call.path["groupId"], call.body.permission)
    return Response(status_code=201)


def _acl_needs(*policy_actions: str) -> Callable[[Call[Any]], Sequence[Permission]]:
    """lakeFS's: auth:ReadGroup on the group and the actions on its ACL policy."""

    def needed(call: Call[Any]) -> Sequence[Permission]:
        group_id = call.path["groupId"]
        acl_policy = policy_arn(acl_policy_id(group_id))
        return (
            Permission("auth:ReadGroup", group_arn(group_id)),
            *(Permission(action, acl_policy) for action in policy_actions),
        )

    return needed


def _create_needs(call: Call[wire.GroupCreation]) -> Sequence[Permission]:
    request = call.body
    return (Permission("auth:CreateGroup", group_arn(request.id)),)


MEMBER: Final = GROUP + "/members/{userId}"
POLICY: Final = GROUP + "/policies/{policyId}"
OPERATIONS: Final = (
    Operation(
        "listGroups",
        "GET",
        "/auth/groups",
        list_groups,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.GroupList},
        permissions=on_all("auth:ListGroups"),
    ),
    Operation(
        "createGroup",
        "POST",
        "/auth/groups",
        create_group,
        API_GROUP,
        body=wire.GroupCreation,
        responses={201: wire.Group, 409: None},
        permissions=_create_needs,
        body_permissions=True,
        lakefs_errors={ConflictError: "Already exists"},
    ),
    Operation(
        "getGroup",
        "GET",
        GROUP,
        get_group,
        API_GROUP,
        responses={200: wire.Group, 404: None},
        permissions=on_group("auth:ReadGroup"),
        lakefs_errors={NotFoundError: "group not found"},
    ),
    Operation(
        "deleteGroup",
        "DELETE",
        GROUP,
        delete_group,
        API_GROUP,
        responses={204: None, 404: None},
        permissions=on_group("auth:DeleteGroup"),
        lakefs_errors={NotFoundError: "group not found"},
    ),
    Operation(
        "listGroupMembers",
        "GET",
        GROUP + "/members",
        list_group_members,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.UserList, 404: None},
        permissions=on_group("auth:ReadGroup"),
    ),
    Operation(
        "addGroupMembership",
        "PUT",
        MEMBER,
        add_group_membership,
        API_GROUP,
        responses={201: None, 404: None},
        permissions=on_group("auth:AddGroupMember"),
    ),
    Operation(
        "deleteGroupMembership",
        "DELETE",
        MEMBER,
        delete_group_membership,
        API_GROUP,
        responses={204: None, 404: None},
        permissions=on_group("auth:RemoveGroupMember"),
    ),
    Operation(
        "getGroupACL",
        "GET",
        GROUP + "/acl",
        get_group_acl,
        API_GROUP,
        responses={200: wire.ACL, 404: wire.ErrorNoACL},
        permissions=_acl_needs("auth:ReadPolicy"),
        lakefs_errors={NotFoundError: "group not found"},
    ),
    Operation(
        "setGroupACL",
        "POST",
        GROUP + "/acl",
        set_group_acl,
        API_GROUP,
        body=wire.ACL,
        responses={201: None, 400: None, 404: None},
        permissions=_acl_needs("auth:AttachPolicy", "auth:UpdatePolicy"),
        lakefs_errors={
            NotFoundError: "group not found",
            AclPermissionError: (
                "{groupId}: translate ACL {{Permission:{permission}}} to statements:"
                ' validation error: Bad ACL permission "{permission}"'
            ),
        },
    ),
    Operation(
        "listGroupPolicies",
        "GET",
        GROUP + "/policies",
        list_group_policies,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.PolicyList, 404: None},
        permissions=on_group("auth:ReadGroup"),
    ),
    Operation(
        "attachPolicyToGroup",
        "PUT",
        POLICY,
        attach_policy_to_group,
        API_GROUP,
        responses={201: None, 404: None},
        permissions=on_policy("auth:AttachPolicy"),
    ),
    Operation(
        "detachPolicyFromGroup",
        "DELETE",
        POLICY,
        detach_policy_from_group,
        API_GROUP,
        responses={204: None, 404: None},
        permissions=on_policy("auth:DetachPolicy"),
    ),
)
