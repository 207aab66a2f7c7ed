"""Login and logout: the API's own `login` and `logout` operations, from a form.

The session is the API's session cookie (HttpOnly, SameSite=Strict), set by the
API's login handler and copied onto the redirect; a failed login says so and
sets nothing. After login the browser returns to the page it asked for (a UI
path of this site only).
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.errors import KvlakeError
from kvlake.ui.page import NavItem, Page, page
from kvlake.ui.security import local_target


def _copy_cookies(source: Response, target: Response) -> Response:
    for name, value in source.raw_headers:
        if name == b"set-cookie":
            target.raw_headers.append((name, value))
    return target


def login_form(page: Page) -> Response:
    target = local_target(page.query.get("next"))
    return page.render("session/login.html", target=target, error="")


def login(page: Page) -> Response:
    target = local_target(str(page.form.get("next", "")))
    key_id = str(page.form.get("access_key_id", "")).strip()
    secret = str(page.form.get("secret_access_key", ""))
    if not key_id or not secret:
        return page.render(
            "session/login.html",
            400,
            target=target,
            error="enter both the access key id and the secret access key",
        )
    body = {"access_key_id": key_id, "secret_access_key": secret}
    try:
        answer = page.api_response("login", body=body)
    except KvlakeError as exc:
        return page.render("session/login.html", 401, target=target, error=str(exc))
    return _copy_cookies(answer, page.redirect(target))


def logout(page: Page) -> Response:
    answer = page.api_response("logout")
    return _copy_cookies(answer, page.redirect(local_target("/ui/login")))


ROUTES: Final = [
    page("/login", login_form, login=False),
    page("/login", login, methods=("POST",), login=False),
    page("/logout", logout, methods=("POST",)),
]
NAV: Final[list[NavItem]] = []
