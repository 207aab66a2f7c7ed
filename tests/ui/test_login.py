"""In the browser: log in, see the repository list; a failed or expired session says so."""

from __future__ import annotations

from urllib.parse import quote

from tests.ui.browser import Visitor


def test_log_in_and_see_the_repository_list(browser: Visitor, repository: str) -> None:
    browser.visit("/")
    assert browser.path == "/ui/login?next=" + quote("/ui/repositories", safe=""), browser.path
    browser.log_in()
    assert browser.path == "/ui/repositories"
    names = [link.text for link in browser.find_all("#repositories a.repository")]
    assert repository in names
    assert browser.find("#user").text == "admin"
    assert list(browser.shots.glob("*.png")), "every page visited is screenshotted"


def test_wrong_secret_says_so_and_sets_no_session(browser: Visitor) -> None:
    browser.visit("/ui/repositories")
    browser.log_in(secret="not-the-secret")
    assert browser.path.startswith("/ui/login")
    assert "secret access key is wrong" in browser.find("#login-error").text
    assert browser.driver.get_cookie("internal_auth_session") is None


def test_an_expired_session_logs_in_again_and_returns(browser: Visitor, repository: str) -> None:
    browser.visit("/ui/repositories")
    browser.log_in()
    # A token the server no longer accepts, as an expired or revoked session's is.
    browser.driver.add_cookie({"name": "internal_auth_session", "value": "expired.token.x"})
    browser.visit(f"/ui/repositories?search={repository}")
    assert browser.path.startswith("/ui/login?next=")
    browser.log_in()
    assert browser.path == f"/ui/repositories?search={repository}"
    assert [a.text for a in browser.find_all("#repositories a.repository")] == [repository]


def test_log_out_ends_the_session(browser: Visitor) -> None:
    browser.visit("/ui/repositories")
    browser.log_in()
    browser.submit("#logout")
    browser.visit("/ui/repositories")
    assert browser.path.startswith("/ui/login")
