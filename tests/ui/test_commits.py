"""In the browser: a ref's commit log, paged by the API's cursor, and a commit's page
(its metadata, parents and diff), down to the first commit."""

from __future__ import annotations

import httpx

from tests.ui.browser import Visitor


def _put(admin: httpx.Client, repository: str, path: str, data: bytes) -> None:
    answer = admin.post(
        f"/repositories/{repository}/branches/main/objects", params={"path": path}, content=data
    )
    assert answer.status_code == 201, answer.text


def _commit(admin: httpx.Client, repository: str, message: str, **metadata: str) -> str:
    body = {"message": message, "metadata": metadata, "allow_empty": True}
    answer = admin.post(f"/repositories/{repository}/branches/main/commits", json=body)
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


def test_log_pages_and_commit_pages_walk(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    _put(admin, repository, "keep.txt", b"1")
    _put(admin, repository, "gone.txt", b"2")
    first = _commit(admin, repository, "first")
    _put(admin, repository, "keep.txt", b"changed")
    _put(admin, repository, "<new>.txt", b"3")
    assert admin.delete(
        f"/repositories/{repository}/branches/main/objects", params={"path": "gone.txt"}
    ).is_success
    second = _commit(admin, repository, "<b>second</b>", reviewer="<i>r</i>")
    for n in range(50):
        _commit(admin, repository, f"empty {n}")
    browser.visit(f"/ui/repositories/{repository}/commits?ref=main")
    browser.log_in()
    messages = [m.text for m in browser.find_all("#commits td.message")]
    assert len(messages) == 50 and messages[0] == "empty 49"
    browser.submit("#next")
    messages = [m.text for m in browser.find_all("#commits td.message")]
    assert messages[:2] == ["<b>second</b>", "first"], messages
    browser.submit("#commits tr:first-child a.commit")
    assert browser.find("#commit-id").text == second
    assert browser.find("#commit-message").text == "<b>second</b>"
    assert browser.find(".metadata-value").text == "<i>r</i>"
    changes = [
        (r.find_element("css selector", "td").text, r.find_element("css selector", ".path").text)
        for r in browser.find_all("#diff tbody tr")
    ]
    assert sorted(changes) == [
        ("added", "<new>.txt"),
        ("changed", "keep.txt"),
        ("removed", "gone.txt"),
    ]
    browser.submit("#parents a.parent")
    assert browser.find("#commit-id").text == first
    added = sorted(p.text for p in browser.find_all("#diff td.path"))
    assert added == ["gone.txt", "keep.txt"]
    browser.submit("#parents a.parent")  # the repository's first commit: no parent
    assert "none" in browser.find("#parents").text
    assert browser.find("#diff td.empty").text == "No differences."
    browser.visit(f"/ui/repositories/{repository}/commits/no-such-commit")
    assert "not found" in browser.find("#error").text
