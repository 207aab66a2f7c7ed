"""In the browser: folders and objects at a ref, hostile names escaped, download."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from tests.ui.browser import Visitor

HOSTILE = ("<script>alert(1)</script>", "данные/ünï 名.txt", "a&b \"q\" 'x'.txt")


def _upload(admin: httpx.Client, repository: str, path: str, data: bytes) -> None:
    answer = admin.post(
        f"/repositories/{repository}/branches/main/objects",
        params={"path": path},
        content=data,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code == 201, answer.text


def test_hostile_names_are_shown_as_text_and_reach_their_objects(
    browser: Visitor, repository: str, admin: httpx.Client
) -> None:
    for name in HOSTILE:
        _upload(admin, repository, name, name.encode())
    browser.visit(f"/ui/repositories/{repository}/objects?ref=main")
    browser.log_in()
    # The '/' of '</script>' makes '<script>alert(1)<' a folder: shown as text, never run.
    names = [a.text for a in browser.find_all("#objects a")]
    assert names == ["<script>alert(1)</", "a&b \"q\" 'x'.txt", "данные/"], names
    assert "<script>alert(1)" not in browser.driver.page_source
    browser.find("#objects a.folder").click()
    browser.screenshot()
    assert [a.text for a in browser.find_all("#objects a.object")] == ["script>"]
    for name in HOSTILE:
        browser.visit(f"/ui/repositories/{repository}/object?ref=main&path={quote(name)}")
        assert browser.find("#object-path").text == name
        assert browser.find("#size").text == f"{len(name.encode())} bytes"
    # A climbing path is refused by the API's own check, and the page says why.
    browser.visit(f"/ui/repositories/{repository}/object?ref=main&path=../x")
    assert "cannot climb" in browser.find("#error").text


def test_download_and_unknown_paths(browser: Visitor, repository: str, admin: httpx.Client) -> None:
    _upload(admin, repository, "a/b.csv", b"x,y\n1,2\n")
    browser.visit(f"/ui/repositories/{repository}/object?ref=main&path=a/b.csv")
    browser.log_in()
    href = str(browser.find("#download").get_attribute("href"))
    cookies = {c["name"]: c["value"] for c in browser.driver.get_cookies()}
    got = httpx.get(href, cookies=cookies, timeout=30)
    assert got.content == b"x,y\n1,2\n"
    assert 'filename="b.csv"' in got.headers["content-disposition"]
    browser.visit(f"/ui/repositories/{repository}/object?ref=main&path=a/missing.csv")
    assert "not found" in browser.find("#error").text
    browser.visit(f"/ui/repositories/{repository}/objects?ref=no-such-branch")
    assert "not found" in browser.find("#error").text
