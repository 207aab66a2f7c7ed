"""In the browser: create a repository with sample data, see its branches, delete it."""

from __future__ import annotations

import uuid

import httpx

from tests.api.server import Server
from tests.ui.browser import Visitor


def _reader(admin: httpx.Client) -> tuple[str, str]:
    """A new user holding only the built-in FSReadAll policy: its key id and secret."""
    user_id = f"reader-{uuid.uuid4().hex[:8]}"
    assert admin.post("/auth/users", json={"id": user_id}).status_code == 201
    assert admin.put(f"/auth/users/{user_id}/policies/FSReadAll").status_code == 201
    key = admin.post(f"/auth/users/{user_id}/credentials").json()
    return key["access_key_id"], key["secret_access_key"]


def test_create_with_sample_data_then_delete_with_purge(
    browser: Visitor, ui_server: Server, admin: httpx.Client
) -> None:
    name = f"ui-new-{uuid.uuid4().hex[:8]}"
    browser.visit("/ui/repositories/new")
    browser.log_in()
    browser.find("#name").send_keys(name)
    browser.find("#storage_namespace").send_keys(ui_server.storage.namespace(name))
    browser.find("#default_branch").send_keys("trunk")
    browser.find("#sample_data").click()
    browser.submit("#create")
    assert browser.path == f"/ui/repositories/{name}"
    assert admin.get(f"/repositories/{name}/branches/trunk").status_code == 200
    rows = [row.text for row in browser.find_all("#branches td.branch")]
    assert rows[0].startswith("trunk") and "default" in rows[0]
    listed = admin.get(f"/repositories/{name}/refs/trunk/objects/ls").json()["results"]
    assert listed, "the sample data was committed on the default branch"
    browser.find("#delete summary").click()
    browser.find("#purge").click()
    browser.find("#confirm").send_keys(name)
    browser.submit("#delete-repository")
    assert browser.path == "/ui/repositories"
    assert admin.get(f"/repositories/{name}").status_code == 404


def test_delete_without_the_name_typed_deletes_nothing(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    browser.visit(f"/ui/repositories/{repository}")
    browser.log_in()
    browser.find("#delete summary").click()
    browser.find("#confirm").send_keys("not-the-name")
    browser.submit("#delete-repository")
    assert "to confirm; nothing was deleted" in browser.find("#error").text
    assert admin.get(f"/repositories/{repository}").status_code == 200


def test_a_reader_sees_no_delete_and_an_unknown_repository_says_so(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    key_id, secret = _reader(admin)
    browser.visit(f"/ui/repositories/{repository}")
    browser.log_in(key_id, secret)
    assert browser.find("#repository-name").text == repository
    assert not browser.find_all("#delete"), "a reader is not offered the delete form"
    browser.visit("/ui/repositories/no-such-repository")
    assert "repository not found" in browser.find("#error").text
    assert str(browser.find("#back").get_attribute("href")).endswith("/ui/repositories")
