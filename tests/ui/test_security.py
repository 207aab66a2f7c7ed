"""The UI's defences over plain HTTP: headers, cookies, CSRF, redirects, the gateway's share."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server


def _csrf(client: httpx.Client) -> str:
    """Open the login page; the CSRF token its form repeats (the cookie holds the same)."""
    page = client.get("/ui/login")
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


@pytest.fixture
def client(ui_server: Server) -> Iterator[httpx.Client]:
    """A client of the UI with its own cookies, as a browser is."""
    with httpx.Client(base_url=ui_server.url, timeout=30) as client:
        yield client


def _log_in(client: httpx.Client) -> httpx.Response:
    form = {
        "csrf_token": _csrf(client),
        "access_key_id": ACCESS_KEY_ID,
        "secret_access_key": SECRET_ACCESS_KEY,
        "next": "/ui/repositories",
    }
    return client.post("/ui/login", data=form)


def test_pages_carry_a_content_security_policy_and_strict_cookies(client: httpx.Client) -> None:
    page = client.get("/ui/login")
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    csrf_cookie = page.headers["set-cookie"].lower()
    assert "httponly" in csrf_cookie and "samesite=strict" in csrf_cookie
    answer = _log_in(client)
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/repositories"
    session = [c for c in answer.headers.get_list("set-cookie") if "internal_auth_session" in c]
    assert session and "httponly" in session[0].lower() and "samesite=strict" in session[0].lower()


def test_a_form_without_its_csrf_token_changes_nothing(client: httpx.Client) -> None:
    _csrf(client)  # the browser has the cookie, but the form below does not repeat it
    form = {"access_key_id": ACCESS_KEY_ID, "secret_access_key": SECRET_ACCESS_KEY}
    refused = client.post("/ui/login", data=form)
    assert refused.status_code == 403
    assert "did not come from this site" in refused.text
    assert "internal_auth_session" not in refused.headers.get("set-cookie", "")
    wrong = client.post("/ui/login", data=form | {"csrf_token": "forged"})
    assert wrong.status_code == 403
    logged_in = _log_in(client)
    assert logged_in.status_code == 303
    assert client.post("/ui/logout", data={}).status_code == 403
    assert client.get("/ui/repositories").status_code == 200, "the session is still live"


def test_login_returns_only_to_this_sites_pages(client: httpx.Client) -> None:
    for target in ("https://evil.example/", "//evil.example/ui", "/api/v1/repositories"):
        form = {
            "csrf_token": _csrf(client),
            "access_key_id": ACCESS_KEY_ID,
            "secret_access_key": SECRET_ACCESS_KEY,
            "next": target,
        }
        answer = client.post("/ui/login", data=form)
        assert answer.headers["location"] == "/ui/", target


def test_bad_addresses_say_so_with_a_way_back(client: httpx.Client) -> None:
    _log_in(client)
    too_long = client.get("/ui/repositories", params={"after": "x" * 5000})
    assert too_long.status_code == 400 and "over 4096 chars" in too_long.text
    unknown = client.get("/ui/no/such/page")
    assert unknown.status_code == 404 and "there is no page at /ui/no/such/page" in unknown.text
    for answer in (too_long, unknown):
        assert "Traceback" not in answer.text and 'id="back"' in answer.text


def test_a_signed_s3_request_to_the_root_stays_the_gateways(ui_server: Server) -> None:
    browser = httpx.get(ui_server.url + "/", timeout=30)
    assert browser.status_code == 303 and browser.headers["location"] == "/ui/repositories"
    s3 = httpx.get(ui_server.url + "/", headers={"Authorization": "AWS4-HMAC-SHA256 x"})
    assert s3.status_code != 303 and "xml" in s3.headers["content-type"]


def test_an_upload_is_read_only_from_a_session_and_stored_as_sent(
    client: httpx.Client, repository: str, admin: httpx.Client
) -> None:
    target = f"/ui/repositories/{repository}/upload"
    # A file whose own type is a form's: stored byte for byte, never parsed as one.
    tricky = ("t.bin", b"--zz\r\nnot a part\r\n--zz--\r\n", "multipart/form-data; boundary=zz")
    form = {"csrf_token": _csrf(client), "branch": "main", "path": "t.bin"}
    refused = client.post(target, data=form, files={"file": tricky})
    assert refused.status_code == 403, "no session: the upload was not read"
    assert admin.get(f"/repositories/{repository}/refs/main/objects/ls").json()["results"] == []
    assert _log_in(client).status_code == 303
    sent = client.post(target, data=form, files={"file": tricky})
    assert sent.status_code == 303, sent.text
    stored = admin.get(f"/repositories/{repository}/refs/main/objects", params={"path": "t.bin"})
    assert stored.content == tricky[1]
