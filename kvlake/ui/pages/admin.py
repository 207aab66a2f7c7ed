"""Administration: users (their groups, policies and credentials), groups (their members
and policies) and policies (their JSON).

Every page and action is the API's auth operation of the same name (lakeFS's ids), run as
the signed-in user, so a user whose policies do not allow it gets the API's refusal page;
the navigation links and each form show only to users allowed their operation
(`Page.may`). Ids travel in the query string and form fields, never as address segments,
so any id reaches the API exactly as typed. A new credential's secret is shown once, on
the page that answers its creation; it is never stored where a page could read it again.
"""

from __future__ import annotations

import json
from typing import Any, Final

from starlette.responses import Response

from kvlake.errors import InvalidInputError
from kvlake.ui.page import NavItem, Page, next_after, page, url

PER_PAGE: Final = 100
PROBE: Final = "new-id"
"""An id to ask the policies about creating a user, group or policy before one is typed
(the operation's own check, on the typed id, decides when the form is sent)."""
_PROBE_POLICY: Final = {
    "id": PROBE,
    "statement": [{"effect": "allow", "action": ["fs:ReadRepository"], "resource": "*"}],
}


def _listing(page: Page, operation_id: str, **inputs: Any) -> tuple[list[Any], str, str]:
    after = page.query.get("after", "")
    listed = page.api(operation_id, query={"after": after, "amount": PER_PAGE}, **inputs)
    return listed["results"], after, next_after(listed)


def users(page: Page) -> Response:
    results, after, following = _listing(page, "listUsers")
    return page.render(
        "admin/users.html",
        users=results,
        after=after,
        next_after=following,
        may_create=page.may("createUser", body={"id": PROBE}),
        may_delete={u["id"]: page.may("deleteUser", path={"userId": u["id"]}) for u in results},
    )


def create_user(page: Page) -> Response:
    created = page.api("createUser", body={"id": page.field("id")})
    return page.redirect(url("admin", "user", id=created["id"]))


def delete_user(page: Page) -> Response:
    page.api_response("deleteUser", path={"userId": page.field("id")})
    return page.redirect(url("admin", "users"))


def user(page: Page, secret: dict[str, Any] | None = None) -> Response:
    user_id = page.query.get("id", "") or str(page.form.get("id", ""))
    path = {"userId": user_id}
    found = page.api("getUser", path=path)
    groups = page.api("listUserGroups", path=path, query={"amount": PER_PAGE})
    policies = page.api("listUserPolicies", path=path, query={"amount": PER_PAGE})
    credentials = None
    if page.may("listUserCredentials", path=path):
        credentials = page.api("listUserCredentials", path=path, query={"amount": PER_PAGE})
    return page.render(
        "admin/user.html",
        found=found,
        groups=groups["results"],
        policies=policies["results"],
        credentials=credentials["results"] if credentials is not None else None,
        secret=secret,
        may_attach=page.may("attachPolicyToUser", path=path | {"policyId": PROBE}),
        may_detach=page.may("detachPolicyFromUser", path=path | {"policyId": PROBE}),
        may_join=page.may("addGroupMembership", path={"groupId": PROBE, "userId": user_id}),
        may_leave=page.may("deleteGroupMembership", path={"groupId": PROBE, "userId": user_id}),
        may_create_key=page.may("createCredentials", path=path),
        may_delete_key=page.may("deleteCredentials", path=path | {"accessKeyId": PROBE}),
    )


def _user_action(page: Page, operation_id: str, **path: str) -> Response:
    user_id = page.field("id")
    page.api_response(operation_id, path={"userId": user_id, **path})
    return page.redirect(url("admin", "user", id=user_id))


def attach_user_policy(page: Page) -> Response:
    return _user_action(page, "attachPolicyToUser", policyId=page.field("policy"))


def detach_user_policy(page: Page) -> Response:
    return _user_action(page, "detachPolicyFromUser", policyId=page.field("policy"))


def join_group(page: Page) -> Response:
    return _user_action(page, "addGroupMembership", groupId=page.field("group"))


def leave_group(page: Page) -> Response:
    return _user_action(page, "deleteGroupMembership", groupId=page.field("group"))


def delete_credentials(page: Page) -> Response:
    return _user_action(page, "deleteCredentials", accessKeyId=page.field("key"))


def create_credentials(page: Page) -> Response:
    """The new key's secret, shown on this one answer only (it is never readable again)."""
    created = page.api("createCredentials", path={"userId": page.field("id")})
    return user(page, secret=created)


def groups(page: Page) -> Response:
    results, after, following = _listing(page, "listGroups")
    return page.render(
        "admin/groups.html",
        groups=results,
        after=after,
        next_after=following,
        may_create=page.may("createGroup", body={"id": PROBE}),
        may_delete={g["id"]: page.may("deleteGroup", path={"groupId": g["id"]}) for g in results},
    )


def create_group(page: Page) -> Response:
    body = {"id": page.field("id")}
    description = str(page.form.get("description", "")).strip()
    if description:
        body["description"] = description
    created = page.api("createGroup", body=body)
    return page.redirect(url("admin", "group", id=created["id"]))


def delete_group(page: Page) -> Response:
    page.api_response("deleteGroup", path={"groupId": page.field("id")})
    return page.redirect(url("admin", "groups"))


def group(page: Page) -> Response:
    group_id = page.query.get("id", "")
    path = {"groupId": group_id}
    found = page.api("getGroup", path=path)
    members = page.api("listGroupMembers", path=path, query={"amount": PER_PAGE})
    policies = page.api("listGroupPolicies", path=path, query={"amount": PER_PAGE})
    return page.render(
        "admin/group.html",
        found=found,
        members=members["results"],
        policies=policies["results"],
        may_add=page.may("addGroupMembership", path=path | {"userId": PROBE}),
        may_remove=page.may("deleteGroupMembership", path=path | {"userId": PROBE}),
        may_attach=page.may("attachPolicyToGroup", path=path | {"policyId": PROBE}),
        may_detach=page.may("detachPolicyFromGroup", path=path | {"policyId": PROBE}),
    )


def _group_action(page: Page, operation_id: str, **path: str) -> Response:
    group_id = page.field("id")
    page.api_response(operation_id, path={"groupId": group_id, **path})
    return page.redirect(url("admin", "group", id=group_id))


def add_member(page: Page) -> Response:
    return _group_action(page, "addGroupMembership", userId=page.field("user"))


def remove_member(page: Page) -> Response:
    return _group_action(page, "deleteGroupMembership", userId=page.field("user"))


def attach_group_policy(page: Page) -> Response:
    return _group_action(page, "attachPolicyToGroup", policyId=page.field("policy"))


def detach_group_policy(page: Page) -> Response:
    return _group_action(page, "detachPolicyFromGroup", policyId=page.field("policy"))


def policies(page: Page) -> Response:
    results, after, following = _listing(page, "listPolicies")
    return page.render(
        "admin/policies.html",
        policies=results,
        after=after,
        next_after=following,
        may_create=page.may("createPolicy", body=_PROBE_POLICY),
        may_delete={p["id"]: page.may("deletePolicy", path={"policyId": p["id"]}) for p in results},
        example=json.dumps(_PROBE_POLICY | {"id": ""}, indent=2),
    )


def policy(page: Page) -> Response:
    found = page.api("getPolicy", path={"policyId": page.query.get("id", "")})
    document = {k: v for k, v in found.items() if k != "creation_date"}
    return page.render(
        "admin/policy.html",
        found=found,
        document=json.dumps(document, indent=2, ensure_ascii=False),
        may_delete=page.may("deletePolicy", path={"policyId": found["id"]}),
    )


def create_policy(page: Page) -> Response:
    """A policy from its JSON (the shape a policy's page shows: id and statement); an id
    typed in the form names it whatever the JSON says."""
    text = page.field("document")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"the policy is not valid JSON ({exc}): nothing was created"
        ) from None
    if not isinstance(document, dict):
        raise InvalidInputError('the policy must be a JSON object: {"id": ..., "statement": [...]}')
    typed = str(page.form.get("id", "")).strip()
    if typed:
        document["id"] = typed
    created = page.api("createPolicy", body=document)
    return page.redirect(url("admin", "policy", id=created["id"]))


def delete_policy(page: Page) -> Response:
    page.api_response("deletePolicy", path={"policyId": page.field("id")})
    return page.redirect(url("admin", "policies"))


def _post(path: str, handler: Any) -> Any:
    return page("/admin" + path, handler, methods=("POST",))


ROUTES: Final = [
    page("/admin/users", users),
    page("/admin/user", user),
    _post("/users/create", create_user),
    _post("/users/delete", delete_user),
    _post("/user/policies/attach", attach_user_policy),
    _post("/user/policies/detach", detach_user_policy),
    _post("/user/groups/join", join_group),
    _post("/user/groups/leave", leave_group),
    _post("/user/credentials/create", create_credentials),
    _post("/user/credentials/delete", delete_credentials),
    page("/admin/groups", groups),
    page("/admin/group", group),
    _post("/groups/create", create_group),
    _post("/groups/delete", delete_group),
    _post("/group/members/add", add_member),
    _post("/group/members/remove", remove_member),
    _post("/group/policies/attach", attach_group_policy),
    _post("/group/policies/detach", detach_group_policy),
    page("/admin/policies", policies),
    page("/admin/policy", policy),
    _post("/policies/create", create_policy),
    _post("/policies/delete", delete_policy),
]
NAV: Final = [
    NavItem("Users", "/ui/admin/users", "listUsers"),
    NavItem("Groups", "/ui/admin/groups", "listGroups"),
    NavItem("Policies", "/ui/admin/policies", "listPolicies"),
]
