"""The UI's place in the server's app: `/ui/...`, and `/` for a browser.

`UIRoute` stands before the S3 gateway's catch-all route. It takes every path
below `/ui` (no repository, and so no bucket, can be named `ui`) and an
unsigned `GET /`, which it sends to the repository list; a signed `GET /` is
S3's ListBuckets and stays the gateway's. On a virtual-hosted gateway address
(`<repository>.<domain>`) every path is a key, so it takes nothing there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jinja2
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Match, Mount, Route, Router
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from kvlake.api.routing import OPERATION_SCOPE_KEY, Operation
from kvlake.errors import NotFoundError
from kvlake.ui import security, site
from kvlake.ui.calls import Operations
from kvlake.ui.page import UI_SCOPE_KEY, Page, Site, page, url
from kvlake.ui.security import UI_PREFIX

HERE = Path(__file__).resolve().parent


def _home(request: object) -> Response:
    return security.secure(RedirectResponse(url("repositories"), 303), "", new=False)


def _no_page(page: Page) -> Response:
    raise NotFoundError(f"there is no page at {page.request.url.path}: check the address")


def _signed(scope: Scope) -> bool:
    """An S3 request: a signature in the Authorization header or the query (presigned)."""
    headers = dict(scope["headers"])
    if b"authorization" in headers:
        return True
    query: bytes = scope.get("query_string", b"")
    return b"Signature=" in query or b"X-Amz-Signature=" in query


class UIRoute(BaseRoute):
    """The UI's pages, static files and home redirect, on the API's app."""

    def __init__(
        self, operations: Sequence[Operation[Any]], *, foreign_host: Callable[[str], bool]
    ) -> None:
        """`foreign_host(host)`: the host is a virtual-hosted gateway address."""
        templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.site = Site(Operations(operations), templates, site.NAV)
        self.foreign_host = foreign_host
        self.router = Router(
            [
                Route("/", _home, methods=["GET", "HEAD"]),
                Route(UI_PREFIX, _home, methods=["GET", "HEAD"]),
                Route(UI_PREFIX + "/", _home, methods=["GET", "HEAD"]),
                Mount(UI_PREFIX + "/static", StaticFiles(directory=HERE / "static")),
                *site.ROUTES,
                page("/{rest:path}", _no_page, methods=("GET", "POST")),
            ]
        )

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return Match.NONE, {}
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        if self.foreign_host(host):
            return Match.NONE, {}
        path: str = scope["path"]
        if path == "/":
            home = scope["method"] in ("GET", "HEAD") and not _signed(scope)
            return (Match.FULL, {}) if home else (Match.NONE, {})
        if path == UI_PREFIX or path.startswith(UI_PREFIX + "/"):
            return Match.FULL, {}
        return Match.NONE, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[UI_SCOPE_KEY] = self.site
        scope[OPERATION_SCOPE_KEY] = "ui"  # the access log and metrics name the UI's requests
        await self.router(scope, receive, send)
