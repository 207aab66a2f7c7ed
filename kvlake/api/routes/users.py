"""Users, their credentials, and the groups and policies they hold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_all
from kvlake.api.pages import page
from kvlake.api.routes.auth_common import group, on_policy, on_user, policy, user
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import auth as wire
from kvlake.auth import Permission, user_arn
from kvlake.errors import ConflictError, NotFoundError

API_GROUP: Final = "auth"
USER: Final = "/auth/users/{userId}"


def list_users(call: Call[None]) -> Response:
    query = call.query
    users = call.services.auth.list_users(prefix=query.text("prefix"), after=query.text("after"))
    results, pagination = page(users, query.amount(), lambda u: u.id)
    return json_response(wire.UserList(pagination=pagination, results=[user(u) for u in results]))


def create_user(call: Call[wire.UserCreation]) -> Response:
    request = call.body
    return json_response(user(call.services.auth.create_user(request.id)), 201)


def get_user(call: Call[None]) -> Response:
    return json_response(user(call.services.auth.get_user(call.path["userId"])))


def delete_user(call: Call[None]) -> Response:
    call.services.auth.delete_user(call.path["userId"])
    return no_content()


def list_user_credentials(call: Call[None]) -> Response:
    auth, query = call.services.auth, call.query
    ids = auth.user_credentials(
        call.path["userId"], prefix=query.text("prefix"), after=query.text("after")
    )
    results, pagination = page(ids, query.amount(), lambda i: i)
    credentials = [
        wire.Credentials(access_key_id=i, creation_date=auth.get_credential(i).creation_date)
        for i in results
    ]
    return json_response(wire.CredentialsList(pagination=pagination, results=credentials))


def create_credentials(call: Call[None]) -> Response:
    credential, secret = call.services.auth.create_credentials(call.path["userId"])
    return json_response(
        wire.CredentialsWithSecret(
            access_key_id=credential.access_key_id,
            secret_access_key=secret,
            creation_date=credential.creation_date,
        ),
        201,
    )


def get_credentials(call: Call[None]) -> Response:
    credential = call.services.auth.user_credential(call.path["userId"], call.path["accessKeyId"])
    return json_response(
        wire.Credentials(
            access_key_id=credential.access_key_id, creation_date=credential.creation_date
        )
    )


def delete_credentials(call: Call[None]) -> Response:
    call.services.auth.delete_credentials(call.path["userId"], call.path["accessKeyId"])
    return no_content()


def list_user_groups(call: Call[None]) -> Response:
    auth, query = call.services.auth, call.query
    ids = auth.user_groups(call.path["userId"], after=query.text("after"))
    results, pagination = page(ids, query.amount(), lambda i: i, prefix=query.text("prefix"))
    groups = [group(auth.get_group(i)) for i in results]
    return json_response(wire.GroupList(pagination=pagination, results=groups))


def list_user_policies(call: Call[None]) -> Response:
    auth, query = call.services.auth, call.query
    user_id = call.path["userId"]
    if query.flag("effective"):
        auth.get_user(user_id)
        policies = (p for p in auth.effective_policies(user_id) if p.id > query.text("after"))
        results, pagination = page(
            policies, query.amount(), lambda p: p.id, prefix=query.text("prefix")
        )
    else:
        ids = auth.user_policies(user_id, after=query.text("after"))
        names, pagination = page(ids, query.amount(), lambda i: i, prefix=query.text("prefix"))
        results = [auth.get_policy(i) for i in names]
    return json_response(
        wire.PolicyList(pagination=pagination, results=[policy(p) for p in results])
    )


def attach_policy_to_user(call: Call[None]) -> Response:
    call.services.auth.attach_to_user(call.path["userId"], call.path["policyId"])
    return Response(status_code=201)


def detach_policy_from_user(call: Call[None]) -> Response:
    call.services.auth.detach_from_user(call.path["userId"], call.path["policyId"])
    return no_content()


def _create_needs(call: Call[wire.UserCreation]) -> Sequence[Permission]:
    request = call.body
    return (Permission("auth:CreateUser", user_arn(request.id)),)


OPERATIONS: Final = (
    Operation(
        "listUsers",
        "GET",
        "/auth/users",
        list_users,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.UserList},
        permissions=on_all("auth:ListUsers"),
    ),
    Operation(
        "createUser",
        "POST",
        "/auth/users",
        create_user,
        API_GROUP,
        body=wire.UserCreation,
        responses={201: wire.User, 409: None},
        permissions=_create_needs,
        body_permissions=True,
        lakefs_errors={ConflictError: "Already exists"},
    ),
    Operation(
        "getUser",
        "GET",
        USER,
        get_user,
        API_GROUP,
        responses={200: wire.User, 404: None},
        permissions=on_user("auth:ReadUser"),
        lakefs_errors={NotFoundError: "user not found"},
    ),
    Operation(
        "deleteUser",
        "DELETE",
        USER,
        delete_user,
        API_GROUP,
        responses={204: None, 404: None},
        permissions=on_user("auth:DeleteUser"),
        lakefs_errors={NotFoundError: "user not found"},
    ),
    Operation(
        "listUserCredentials",
        "GET",
        USER + "/credentials",
        list_user_credentials,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.CredentialsList, 404: None},
        permissions=on_user("auth:ListCredentials"),
    ),
    Operation(
        "createCredentials",
        "POST",
        USER + "/credentials",
        create_credentials,
        API_GROUP,
        responses={201: wire.CredentialsWithSecret, 404: None},
        permissions=on_user("auth:CreateCredentials"),
    ),
    Operation(
        "getCredentials",
        "GET",
        USER + "/credentials/{accessKeyId}",
        get_credentials,
        API_GROUP,
        responses={200: wire.Credentials, 404: None},
        permissions=on_user("auth:ReadCredentials"),
        lakefs_errors={NotFoundError: "credentials not found"},
    ),
    Operation(
        "deleteCredentials",
        "DELETE",
        USER + "/credentials/{accessKeyId}",
        delete_credentials,
        API_GROUP,
        responses={204: None, 404: None},
        permissions=on_user("auth:DeleteCredentials"),
        lakefs_errors={NotFoundError: "credentials not found"},
    ),
    Operation(
        "listUserGroups",
        "GET",
        USER + "/groups",
        list_user_groups,
        API_GROUP,
        params=params.PAGE,
        responses={200: wire.GroupList, 404: None},
        permissions=on_user("auth:ReadUser"),
    ),
    Operation(
        "listUserPolicies",
        "GET",
        USER + "/policies",
        list_user_policies,
        API_GROUP,
        params=(*params.PAGE, params.flag("effective", "include the groups' policies")),
        responses={200: wire.PolicyList, 404: None},
        permissions=on_user("auth:ReadUser"),
    ),
    Operation(
        "attachPolicyToUser",
        "PUT",
        USER + "/policies/{policyId}",
        attach_policy_to_user,
        API_GROUP,
        responses={201: None, 404: None},
        permissions=on_policy("auth:AttachPolicy"),
    ),
    Operation(
        "detachPolicyFromUser",
        "DELETE",
        USER + "/policies/{policyId}",
        detach_policy_from_user,
        API_GROUP,
        responses={204: None, 404: None},
        permissions=on_policy("auth:DetachPolicy"),
    ),
)
