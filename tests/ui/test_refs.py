"""In the browser: branches and tags created from any ref, reset, reverted, deleted;
branch protection rules added and removed; a reader is offered none of those actions."""

from __future__ import annotations

import httpx

from tests.ui.browser import Visitor
from tests.ui.test_repositories import _reader


def _commit(admin: httpx.Client, repository: str, path: str, data: bytes, message: str) -> str:
    answer = admin.post(
        f"/repositories/{repository}/branches/main/objects", params={"path": path}, content=data
    )
    assert answer.status_code == 201, answer.text
    answer = admin.post(
        f"/repositories/{repository}/branches/main/commits", json={"message": message}
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


def _branch(admin: httpx.Client, repository: str, name: str) -> httpx.Response:
    return admin.get(f"/repositories/{repository}/branches/{name}")


def test_branch_and_tag_actions_walk(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    first = _commit(admin, repository, "a.txt", b"one", "first")
    second = _commit(admin, repository, "b.txt", b"two", "second")
    browser.visit(f"/ui/repositories/{repository}/refs")
    browser.log_in()
    assert browser.driver.title == f"{repository} · branches and tags · kvlake"
    # A branch from a commit id (any ref), with a hostile name shown as text.
    browser.find("#branch-name").send_keys("dev")
    browser.find("#branch-source").clear()
    browser.find("#branch-source").send_keys(first)
    browser.submit("#create-branch-button")
    assert _branch(admin, repository, "dev").json()["commit_id"] == first
    assert [c.text.split()[0] for c in browser.find_all("#branches td.branch")] == ["main", "dev"]
    # A tag at a branch.
    browser.find("#tag-name").send_keys("v1")
    browser.submit("#create-tag-button")
    assert admin.get(f"/repositories/{repository}/tags/v1").json()["commit_id"] == second
    assert [c.text for c in browser.find_all("#tags td.tag")] == ["v1"]
    # Reset dev to the tag.
    row = browser.find_all("#branches tr.branch-row")[1]
    row.find_element("css selector", "input[name=ref]").send_keys("v1")
    browser.submit("#branches tr.branch-row:nth-child(2) button.reset-branch")
    assert _branch(admin, repository, "dev").json()["commit_id"] == second
    # Revert the second commit on main: b.txt goes.
    browser.find("#revert-ref").send_keys(second)
    browser.submit("#revert-button")
    assert "/commits" in browser.path
    listed = admin.get(f"/repositories/{repository}/refs/main/objects/ls").json()["results"]
    assert [e["path"] for e in listed] == ["a.txt"]
    # Delete the tag and the branch; the default branch offers no delete.
    browser.visit(f"/ui/repositories/{repository}/refs")
    assert len(browser.find_all("button.delete-branch")) == 1
    browser.submit("button.delete-tag")
    assert admin.get(f"/repositories/{repository}/tags/v1").status_code == 404
    browser.submit("button.delete-branch")
    assert _branch(admin, repository, "dev").status_code == 404
    # A refused action (a branch that exists) says why and changes nothing.
    browser.find("#branch-name").send_keys("main")
    browser.submit("#create-branch-button")
    assert "already exists" in browser.find("#error").text
    # Protect a pattern, then remove it; a page older than the rules changes nothing.
    rules = f"/repositories/{repository}/settings/branch_protection"
    browser.visit(f"/ui/repositories/{repository}/refs")
    browser.find("#rule-pattern").send_keys("rel-*")
    browser.submit("#add-rule-button")
    assert admin.get(rules).json() == [{"pattern": "rel-*"}]
    assert [c.text for c in browser.find_all("#rules td.pattern")] == ["rel-*"]
    assert admin.put(rules, json=[{"pattern": "rel-*"}, {"pattern": "main"}]).is_success
    browser.submit("button.remove-rule")
    assert "changed since they were read" in browser.find("#error").text
    browser.visit(f"/ui/repositories/{repository}/refs")
    browser.submit("#rules tr:first-child button.remove-rule")
    assert admin.get(rules).json() == [{"pattern": "rel-*"}]


def test_a_reader_sees_every_repository_page_but_no_actions(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    _commit(admin, repository, "a.txt", b"one", "first")
    assert (
        admin.post(f"/repositories/{repository}/tags", json={"id": "v1", "ref": "main"}).status_code
        == 201
    )
    key_id, secret = _reader(admin)
    browser.visit(f"/ui/repositories/{repository}/refs")
    browser.log_in(key_id, secret)
    assert [c.text for c in browser.find_all("#tags td.tag")] == ["v1"]
    assert browser.find_all("#branches td.branch")
    for action in (
        "#create-branch",
        "#create-tag",
        "#revert",
        "form.reset",
        "button.danger",
        "#add-rule",
        "button.remove-rule",
    ):
        assert not browser.find_all(action), f"a reader is offered {action}"
    # Nor anywhere else: no upload, delete, reset, commit or merge.
    admin.post(
        f"/repositories/{repository}/branches/main/objects", params={"path": "s"}, content=b""
    )
    admin.post(f"/repositories/{repository}/branches", json={"name": "dev", "source": "main"})
    for page, actions in (
        ("objects?ref=main", ("#upload", "#bulk-delete-folder")),
        ("object?ref=main&path=a.txt", ("#delete-object",)),
        ("changes?branch=main", ("#commit", "button.reset-path")),
        ("compare?left=main&right=dev", ("#merge",)),
    ):
        browser.visit(f"/ui/repositories/{repository}/{page}")
        assert not browser.find_all("#error"), (page, browser.find("#error").text)
        for action in actions:
            assert not browser.find_all(action), f"a reader is offered {action} on {page}"
