"""What every UI response carries against a hostile page or name: CSRF tokens, headers.

CSRF is a double-submitted token: a random value in an HttpOnly, SameSite=Strict
cookie of the UI's path, which every form repeats in a hidden field; a POST
whose field does not match the cookie changes nothing. The login form has one
too (no logging a victim in as someone else). Every UI response gets a
Content-Security-Policy that runs only the UI's own scripts and styles (no
inline script, so an escaped name that slipped through could still not run),
and is never framed, sniffed or cached.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Final

from starlette.responses import Response

UI_PREFIX: Final = "/ui"
"""The UI's pages live below it: no repository can be named `ui` (3 characters at least),
so no S3 bucket path is taken from the gateway."""

CSRF_COOKIE: Final = "kvlake_ui_csrf"
CSRF_FIELD: Final = "csrf_token"
CSRF_SECONDS: Final = 12 * 3600

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_matches(cookie: str | None, field: object) -> bool:
    """Whether a form's CSRF field repeats the browser's cookie (constant time)."""
    if not cookie or not isinstance(field, str) or not field:
        return False
    return hmac.compare_digest(cookie.encode(), field.encode())


def secure(response: Response, token: str, *, new: bool) -> Response:
    """Add the security headers, and the CSRF cookie when the browser had none."""
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    if new:
        response.set_cookie(
            CSRF_COOKIE,
            token,
            max_age=CSRF_SECONDS,
            path=UI_PREFIX,
            httponly=True,
            samesite="strict",
        )
    return response


def local_target(target: str | None) -> str:
    """Where to go after login: a UI path of this site only (no open redirect)."""
    if (
        target
        and (target == UI_PREFIX or target.startswith(UI_PREFIX + "/"))
        and "//" not in target
        and "\\" not in target
    ):
        return target
    return UI_PREFIX + "/"
