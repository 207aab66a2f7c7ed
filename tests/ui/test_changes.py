"""In the browser: upload (a file input, and a dropped file through ui.js), see the
branch's uncommitted changes, reset one, commit with metadata, delete an object, and
a protected branch refusing an upload."""

from __future__ import annotations

from pathlib import Path

import httpx
from selenium.webdriver.support.ui import WebDriverWait

from tests.ui.browser import WAIT_SECONDS, Visitor

HOSTILE = "dir/<b>x</b>.txt"

DROP = """
const [zone, names, text] = arguments;
const transfer = new DataTransfer();
for (const name of names) transfer.items.add(new File([text], name, {type: "text/plain"}));
zone.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true}));
"""


def _ls(admin: httpx.Client, repository: str, ref: str) -> list[str]:
    listed = admin.get(f"/repositories/{repository}/refs/{ref}/objects/ls").json()["results"]
    return [entry["path"] for entry in listed]


def test_upload_reset_commit_and_delete_walk(
    browser: Visitor, repository: str, admin: httpx.Client, tmp_path: Path
) -> None:
    local = tmp_path / "notes.txt"
    local.write_bytes(b"hello from a file input")
    browser.visit(f"/ui/repositories/{repository}/objects?ref=main")
    browser.log_in()
    assert browser.driver.title == f"{repository} · / · kvlake"
    # A file input with a typed (hostile) path: the object's page follows.
    browser.find("#file").send_keys(str(local))
    browser.find("#upload-path").send_keys(HOSTILE)
    browser.submit("#upload-button")
    assert browser.find("#object-path").text == HOSTILE
    # A dropped file goes up through ui.js, named by the file, in the folder shown.
    browser.visit(f"/ui/repositories/{repository}/objects?ref=main")
    # Two files at once are refused in the page, before anything is sent.
    browser.driver.execute_script(DROP, browser.find("#dropzone"), ["x.txt", "y.txt"], "no")
    assert browser.find("#upload-error").text == "drop one file at a time: nothing was uploaded"
    browser.driver.execute_script(DROP, browser.find("#dropzone"), ["dropped.txt"], "dropped!")
    WebDriverWait(browser.driver, WAIT_SECONDS).until(lambda d: "dropped.txt" in browser.path)
    browser.screenshot()
    assert browser.find("#object-path").text == "dropped.txt"
    got = admin.get(f"/repositories/{repository}/refs/main/objects", params={"path": HOSTILE})
    assert got.content == b"hello from a file input"
    # Both are uncommitted changes; reset one of them.
    browser.visit(f"/ui/repositories/{repository}/changes?branch=main")
    rows = [row.text for row in browser.find_all("#changes td.path")]
    assert rows == [HOSTILE, "dropped.txt"], rows
    browser.submit("#changes tr:nth-child(2) button.reset-path")
    assert [row.text for row in browser.find_all("#changes td.path")] == [HOSTILE]
    # Commit with a message and metadata.
    browser.find("#commit-message").send_keys("from the UI")
    browser.find("#meta-key-0").send_keys("owner")
    browser.find("#meta-value-0").send_keys("<i>ui</i>")
    browser.submit("#commit-button")
    log = admin.get(f"/repositories/{repository}/refs/main/commits").json()["results"]
    assert log[0]["message"] == "from the UI" and log[0]["metadata"] == {"owner": "<i>ui</i>"}
    assert _ls(admin, repository, "main") == [HOSTILE]
    # Delete the object from its page: an uncommitted removal. The page names the commit
    # that last changed it, linked.
    browser.visit(f"/ui/repositories/{repository}/object?ref=main&path=dir/%3Cb%3Ex%3C/b%3E.txt")
    last = browser.find("#last-commit")
    assert log[0]["id"][:12] in last.text and "from the UI" in last.text
    browser.submit("#delete-object-button")
    assert _ls(admin, repository, "main") == []
    browser.visit(f"/ui/repositories/{repository}/changes?branch=main")
    assert [row.text for row in browser.find_all("#changes td.removed")] == ["removed"]
    # At a commit (not a branch) nothing is offered for writing.
    browser.visit(f"/ui/repositories/{repository}/objects?ref={log[0]['id']}")
    assert not browser.find_all("#upload")


def test_a_protected_branch_refuses_an_upload(
    browser: Visitor, repository: str, admin: httpx.Client, tmp_path: Path
) -> None:
    rules = [{"pattern": "main"}]
    assert admin.put(
        f"/repositories/{repository}/settings/branch_protection", json=rules
    ).is_success
    local = tmp_path / "refused.txt"
    local.write_bytes(b"no")
    browser.visit(f"/ui/repositories/{repository}/objects?ref=main")
    browser.log_in()
    browser.find("#file").send_keys(str(local))
    browser.find("#upload-button").click()
    error = browser.find("#upload-error")
    WebDriverWait(browser.driver, WAIT_SECONDS).until(lambda d: error.is_displayed())
    browser.screenshot()
    assert "protected branch" in error.text
    assert _ls(admin, repository, "main") == []
