"""In the browser: an admin manages users (groups, policies, credentials), groups and
policies; a non-admin sees no administration and is refused at its addresses."""

from __future__ import annotations

import json
import uuid

import httpx

from tests.ui.browser import Visitor
from tests.ui.test_repositories import _reader


def test_admin_walks_users_groups_policies_and_credentials(
    browser: Visitor, admin: httpx.Client
) -> None:
    tag = uuid.uuid4().hex[:8]
    user, group, policy = f"u-{tag}", f"g-{tag}", f"p-{tag}"
    browser.visit("/ui/admin/policies")
    browser.log_in()
    assert [a.text for a in browser.find_all("#nav a")][-3:] == ["Users", "Groups", "Policies"]
    # A policy from JSON, its page showing it back.
    document = {
        "id": "ignored",
        "statement": [{"effect": "allow", "action": ["fs:ListRepositories"], "resource": "*"}],
    }
    browser.find("#policy-id").send_keys(policy)
    browser.find("#policy-document").clear()
    browser.find("#policy-document").send_keys(json.dumps(document))
    browser.submit("#create-policy-button")
    assert browser.find("#policy-name").text == policy
    assert json.loads(browser.find("#policy-json").text)["statement"] == document["statement"]
    # Bad JSON says so and creates nothing.
    browser.visit("/ui/admin/policies")
    browser.find("#policy-id").send_keys(f"bad-{tag}")
    browser.find("#policy-document").clear()
    browser.find("#policy-document").send_keys("{not json")
    browser.submit("#create-policy-button")
    assert "not valid JSON" in browser.find("#error").text
    assert admin.get(f"/auth/policies/bad-{tag}").status_code == 404
    # A group with the policy; a user in it, with FSReadAll attached directly.
    browser.visit("/ui/admin/groups")
    browser.find("#create-group-input").send_keys(group)
    browser.submit("#create-group-button")
    assert browser.find("#group-name").text == group
    browser.find("#attach-policy-input").send_keys(policy)
    browser.submit("#attach-policy-button")
    assert [c.text for c in browser.find_all("#group-policies td.policy")] == [policy]
    browser.visit("/ui/admin/users")
    browser.find("#create-user-input").send_keys(user)
    browser.submit("#create-user-button")
    assert browser.find("#user-name").text == user
    browser.find("#join-group-input").send_keys(group)
    browser.submit("#join-group-button")
    browser.find("#attach-policy-input").send_keys("FSReadAll")
    browser.submit("#attach-policy-button")
    assert [c.text for c in browser.find_all("#user-groups td.group")] == [group]
    assert [c.text for c in browser.find_all("#user-policies td.policy")] == ["FSReadAll"]
    # Credentials: the secret shows once, and it works; then the key is deleted.
    browser.submit("#create-key")
    key_id = browser.find("#new-key-id").text
    secret = browser.find("#new-secret-key").text
    signed = httpx.get(f"{browser.base_url}/api/v1/user", auth=(key_id, secret))
    assert signed.json()["user"]["id"] == user
    browser.visit(f"/ui/admin/user?id={user}")
    assert not browser.find_all("#new-secret")
    assert [c.text for c in browser.find_all("#credentials td.key")] == [key_id]
    browser.submit("button.delete-key")
    assert admin.get(f"/auth/users/{user}/credentials").json()["results"] == []
    # Detach and leave; the group page lists the member until removed.
    browser.submit("button.detach-policy")
    browser.submit("button.leave-group")
    assert admin.get(f"/auth/users/{user}/policies").json()["results"] == []
    browser.visit(f"/ui/admin/group?id={group}")
    browser.find("#add-member-input").send_keys(user)
    browser.submit("#add-member-button")
    assert [c.text for c in browser.find_all("#members td.user")] == [user]
    browser.submit("button.remove-member")
    browser.submit("button.detach-policy")
    assert admin.get(f"/auth/groups/{group}/members").json()["results"] == []
    # Delete the user, the group and the policy from their lists.
    for listing, row, css, api in (
        ("users", user, "delete-user", f"/auth/users/{user}"),
        ("groups", group, "delete-group", f"/auth/groups/{group}"),
        ("policies", policy, "delete-policy", f"/auth/policies/{policy}"),
    ):
        browser.visit(f"/ui/admin/{listing}")
        rows = browser.find_all("table.list tbody tr")
        index = [r.text.split()[0] if r.text else "" for r in rows].index(row) + 1
        browser.submit(f"table.list tbody tr:nth-child({index}) button.{css}")
        assert admin.get(api).status_code == 404


def test_a_non_admin_sees_no_administration(browser: Visitor, admin: httpx.Client) -> None:
    key_id, secret = _reader(admin)
    browser.visit("/ui/repositories")
    browser.log_in(key_id, secret)
    labels = [a.text for a in browser.find_all("#nav a")]
    assert labels and not {"Users", "Groups", "Policies"} & set(labels), labels
    for address in (
        "/ui/admin/users",
        "/ui/admin/groups",
        "/ui/admin/policies",
        "/ui/admin/user?id=admin",
        "/ui/admin/policy?id=FSReadAll",
    ):
        browser.visit(address)
        assert "insufficient permissions" in browser.find("#error").text.lower(), address
