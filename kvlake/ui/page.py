"""The helper every page module uses: declare a page, call the API, check, render.

`page(path, handler)` makes a route below `/ui` whose handler is plain
synchronous code run on the API's request threads (one concurrency model), and
gets a `Page`: the signed-in user, the submitted form (its CSRF token already
checked), `api(...)` to call a REST operation as that user, `may(...)` to ask
whether the user's policies allow one (to hide or disable an action), and
`render(...)`. A page without a live session sends the browser to the login
page, which returns it to the page asked for. An error raised below (an
unknown repository, ref or path, a refused permission) becomes the error page
with its status and kvlake's message, never a stack trace.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlencode

import jinja2
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from kvlake.api.body import BodyBudgetFullError
from kvlake.api.errors import INTERNAL_MESSAGE, error_body, status_of
from kvlake.api.routing import USER_SCOPE_KEY
from kvlake.api.services import Services
from kvlake.auth import SESSION_COOKIE, User
from kvlake.errors import AuthenticationError, InvalidInputError, KvlakeError
from kvlake.http import ClientGoneError
from kvlake.ui import forms, security
from kvlake.ui.calls import Operations, decoded
from kvlake.ui.security import CSRF_COOKIE, CSRF_FIELD, UI_PREFIX

log = logging.getLogger(__name__)

UI_SCOPE_KEY: Final = "kvlake.ui"
"""Scope key holding the `Site` that serves the request (set by `UIRoute`)."""


@dataclass(frozen=True)
class NavItem:
    """A link of the navigation bar, shown only to users allowed `operation_id`."""

    label: str
    path: str
    operation_id: str


@dataclass(frozen=True)
class Site:
    """What the pages share: the API's operations, the templates, the navigation."""

    operations: Operations
    templates: jinja2.Environment
    nav: Sequence[NavItem]


def next_after(listed: Mapping[str, Any]) -> str:
    """A listing's cursor for its next page, or "" on the last page."""
    pagination = listed["pagination"]
    return str(pagination["next_offset"]) if pagination["has_more"] else ""


def url(*segments: str, **query: object) -> str:
    """A UI address: each segment quoted whole (a '/' in a name stays inside its segment)."""
    path = UI_PREFIX + "".join("/" + quote(s, safe="") for s in segments)
    pairs = {k: v for k, v in query.items() if v is not None and v != ""}
    return path + ("?" + urlencode(pairs) if pairs else "")


class Page:
    """One page request as a page module sees it."""

    def __init__(
        self,
        request: Request,
        site: Site,
        user: User | None,
        form: FormData | None,
        csrf: str,
    ) -> None:
        self.request = request
        self.site = site
        self.user = user
        self.form: Mapping[str, Any] = form if form is not None else {}
        self.csrf = csrf
        self.services: Services = request.app.state.services

    @property
    def query(self) -> Mapping[str, str]:
        return self.request.query_params

    @property
    def repository(self) -> str:
        """The repository named by the page's address (`{repository}`)."""
        return str(self.request.path_params["repository"])

    def field(self, name: str, *, strip: bool = True) -> str:
        """A form field that must be filled in (`strip=False` for object paths, whose
        spaces are part of the name). Raises InvalidInputError when it is empty."""
        value = self.form.get(name, "")
        value = value.strip() if strip and isinstance(value, str) else value
        if not isinstance(value, str) or not value:
            raise InvalidInputError(
                f"the form's {name!r} is empty: fill it in; nothing was changed"
            )
        return value

    def api(self, operation_id: str, **inputs: Any) -> Any:
        """The operation's JSON answer as this user (its errors raise, and show as the error
        page). `inputs`: path=, query=, body= as the operation declares them."""
        return decoded(self.api_response(operation_id, **inputs))

    def api_response(self, operation_id: str, **inputs: Any) -> Response:
        ops = self.site.operations
        return ops.run(operation_id, self.request, self.services, self.user, **inputs)

    def may(self, operation_id: str, **inputs: Any) -> bool:
        """Whether the user's policies allow the operation (to hide or disable an action)."""
        if self.user is None:
            return False
        ops = self.site.operations
        return ops.allowed(operation_id, self.request, self.services, self.user, **inputs)

    def is_branch(self, repository: str, ref: str) -> bool:
        """Whether `ref` names a branch (writes are offered there only, not at tags or
        commits); a user who may not read the branch is told no."""
        try:
            self.api_response("getBranch", path={"repository": repository, "branch": ref})
        except KvlakeError as exc:
            if status_of(exc) in (403, 404):
                return False
            raise
        return True

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        nav = [item for item in self.site.nav if self.may(item.operation_id)]
        html = self.site.templates.get_template(template).render(
            user=self.user,
            nav=nav,
            csrf_field=CSRF_FIELD,
            csrf_token=self.csrf,
            url=url,
            page_path=self.request.url.path,
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def redirect(self, target: str) -> RedirectResponse:
        """After a form's change: the browser GETs `target` (303), so a reload resends nothing."""
        return RedirectResponse(target, status_code=303)

    def error_page(self, status: int, message: str) -> HTMLResponse:
        """A page's own refusal (bad form input): its status, what to fix, a way back."""
        back = self.request.headers.get("referer", "") or url("repositories")
        if not back.startswith(str(self.request.base_url)):
            back = url("repositories")
        return self.render("error.html", status, message=message, detail="", back=back)

    def error(self, exc: BaseException) -> HTMLResponse:
        """The error page for `exc`: its status, kvlake's message and a way back."""
        status = status_of(exc)
        if isinstance(exc, KvlakeError) and (status < 500 or status == 501):
            body = error_body(exc)
            message, detail = body.message, body.detail or ""
        else:
            log.error("%s %s failed", self.request.method, self.request.url.path, exc_info=exc)
            message, detail, status = INTERNAL_MESSAGE, "", 500 if status < 500 else status
        parent = self.request.url.path.rstrip("/").rsplit("/", 1)[0]
        back = parent if parent.startswith(UI_PREFIX + "/") else url("repositories")
        return self.render("error.html", status, message=message, detail=detail, back=back)


Handler = Callable[[Page], Response]


def page(
    path: str,
    handler: Handler,
    *,
    methods: Sequence[str] = ("GET",),
    login: bool = True,
    files: bool = False,
) -> Route:
    """The route of a UI page at `/ui<path>`; `login=False` for the login page itself.

    `files=True`: the form may carry one file (an upload), spooled to a temporary file
    by Starlette and removed after the handler; it is read only from a signed-in
    browser holding its CSRF cookie, so no stranger can make the server store a body.
    """

    async def serve(request: Request) -> Response:
        site: Site = request.scope[UI_SCOPE_KEY]
        cookie = request.cookies.get(CSRF_COOKIE)
        token = cookie or security.new_token()
        executors = getattr(request.app.state, "executors", None)
        pool = executors.requests if executors is not None else None
        loop = asyncio.get_running_loop()
        form = None
        if request.method == "POST":
            readable = not files or (
                cookie is not None
                and await loop.run_in_executor(pool, _session_user, request) is not None
            )
            # An unreadable upload is an empty form: its CSRF check refuses it (403).
            form = FormData()
            if readable:
                try:
                    form = await forms.read_form(request, files=files, public=not login)
                except KvlakeError as exc:
                    return await loop.run_in_executor(pool, _refused, request, site, token, exc)
        try:
            response = await loop.run_in_executor(
                pool, _serve, handler, request, site, form, token, login
            )
        finally:
            if form is not None:
                await form.close()  # an upload's temporary file goes now
        return security.secure(response, token, new=cookie is None)

    serve.__name__ = handler.__name__
    return Route(UI_PREFIX + path, serve, methods=list(methods), name=handler.__name__)


def _serve(
    handler: Handler, request: Request, site: Site, form: FormData | None, token: str, login: bool
) -> Response:
    page = Page(request, site, None, form, token)
    try:
        if form is not None and not security.token_matches(
            request.cookies.get(CSRF_COOKIE), form.get(CSRF_FIELD)
        ):
            return page.render(
                "error.html",
                403,
                back=request.url.path,
                detail="",
                message="this form has expired or did not come from this site: "
                "nothing was changed; reload the page and send it again",
            )
        if login:
            page.user = _signed_in(page)
            if page.user is None:
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(url("login", next=target), status_code=303)
        return handler(page)
    except Exception as exc:  # every failure is a page, never a stack trace
        return page.error(exc)


def _refused(request: Request, site: Site, token: str, exc: KvlakeError) -> Response:
    """The error page of a form whose body could not be read: nothing was changed."""
    page = Page(request, site, None, None, token)
    if isinstance(exc, ClientGoneError):
        log.info("%s %s: %s", request.method, request.url.path, exc)
        return Response(status_code=400)
    if isinstance(exc, BodyBudgetFullError):  # expected under load: no traceback
        log.warning("%s %s refused: %s", request.method, request.url.path, exc)
        response = page.render(
            "error.html", 503, message=str(exc), detail="", back=url("repositories")
        )
    else:
        response = page.error(exc)
    return security.secure(response, token, new=False)


def _signed_in(page: Page) -> User | None:
    """The session's user, or None when there is no live session (log in again)."""
    user = _session_user(page.request)
    if user is not None:
        page.request.scope[USER_SCOPE_KEY] = user.id
    return user


def _session_user(request: Request) -> User | None:
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    services: Services = request.app.state.services
    try:
        return services.authenticator.authenticate(None, cookie, client=_client(request))
    except AuthenticationError:
        return None


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else ""
