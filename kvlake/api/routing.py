"""Operations: one declaration per lakeFS operation id, and the adapter that serves it.

An `Operation` names its path, method, parameters, body model, responses and the
permissions it needs. `endpoint` turns it into a Starlette endpoint that parses
and validates the request on the event loop, then runs authentication,
authorization and the handler together in one worker thread: every handler is
plain synchronous code (one concurrency model) and no handler can skip the
policy check. The same declarations build the routes and the OpenAPI document.

The hop to the worker thread is one `loop.run_in_executor` on a pool the
lifespan makes (`app.state.executors`), not Starlette's `run_in_threadpool`:
anyio's capacity limiter, cancel scope and per-thread queues cost about as much
as a stat's own work. Requests run on `REQUEST_THREADS` threads: handlers are
mostly Python holding the GIL, and with Starlette's 40 threads they queued for
it (measured on 2 cores: stat 3,700 -> 4,200 req/s, p99 44 -> 26 ms with 8).
A request whose body is still streaming in holds its thread until the client
has sent it all, so those run on a pool with a thread per allowed connection,
and slow uploads cannot starve the rest. A request with a body is
authenticated from its headers before the body is read, and authorized too
unless its permissions depend on the body (`Operation.body_permissions`: a
copy's source, a new name), and the body is read within the
process's `BodyLimits`. A request whose client goes away is not waited for;
its thread finishes the handler anyway.
A read declared `inline` (stat, get branch) skips the hop and runs on the
event loop when the process's stores answer without a network wait (`Executors.inline`:
SQLite or memory KV, or PostgreSQL over a Unix socket or loopback on the loop's own
connection; local or memory blockstore): the hop's futures, wake-ups and GIL hand-offs
cost more CPU than such a read itself (a SQLite stat in-process: 640-760 -> 300-490 us
of CPU a request; a loopback PostgreSQL stat 1.3x the rate, docs/performance.md). Over
a PostgreSQL elsewhere or an object store the read waits on the network, so it keeps
its thread: the loop never waits on another machine. A
listing of 1,000 entries was tried inline and measured slower (its wall time twice
its CPU, not explained yet), so it keeps its thread.
`OperationRoutes` indexes the routes by their segments, so a request tries the
regex of only the few routes it could match.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Final, Generic, TypeVar, cast

import msgspec
from starlette.datastructures import URLPath
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, NoMatchFound, Route
from starlette.types import Receive, Scope, Send

from kvlake.actions import acting_as
from kvlake.api import body as bodies
from kvlake.api import params
from kvlake.api.errors import LAKEFS_MESSAGES, OperationError
from kvlake.api.services import Services
from kvlake.auth import SESSION_COOKIE, Permission, User
from kvlake.config import ServerSettings
from kvlake.errors import InvalidInputError, KvlakeError
from kvlake.graveler import BranchRead, Repository
from kvlake.http import BodyPace, ThreadBodyReader, upload_source

MAX_HEADER_BYTES: Final = 16 * 1024
"""Headers beyond this are refused before anything else is looked at."""

REQUEST_THREADS: Final = 8
"""Threads per process running handlers whose request body is already read."""


class BodyLimits:
    """One process's body budgets and pace (`ServerSettings`), kept in `app.state`.

    Operations without credentials draw on a budget of their own, so anonymous
    clients can never take the budget of users' commits and uploads (issue 23).
    """

    def __init__(self, settings: ServerSettings | None = None) -> None:
        settings = settings or ServerSettings()
        share = settings.client_body_share
        self.budget = bodies.BodyBudget(settings.body_budget, client_share=share)
        self.public_budget = bodies.BodyBudget(settings.public_body_budget, client_share=share)
        self.pace = BodyPace(
            read_timeout=settings.body_read_timeout,
            min_rate=settings.body_min_rate,
            grace=settings.body_rate_grace,
        )


_encode = msgspec.json.Encoder().encode


BodyT = TypeVar("BodyT")
"""The decoded body an operation declares (a wire struct, a list of them), or None."""


class Call(Generic[BodyT]):
    """One request as a handler sees it: validated inputs, the caller, the services.

    `Call[X]` is the call of an `Operation[X]`: the type checker holds a handler's
    body type to its operation's declaration. `repository` is read on first use,
    after authorization, and at most once per request.
    """

    __slots__ = (
        "request",
        "path",
        "query",
        "body",
        "services",
        "user",
        "source",
        "fields",
        "authorized",
        "_repository",
    )

    def __init__(
        self, request: Request, query: params.Query, body: BodyT, services: Services
    ) -> None:
        self.request = request
        self.path: Mapping[str, str] = request.path_params
        self.query = query
        self.body = body
        self.services = services
        self.user: User | None = None
        self.source: BinaryIO | None = None
        """The upload body of a `stream` operation, read from the handler's thread."""
        self.fields: dict[str, str] = {}
        """What the call learned that its lakeFS texts name besides its inputs (a pull
        request's destination branch), for `Operation.lakefs_errors` templates."""
        self.authorized = False
        """The caller's permissions were checked (before the body, for an upload)."""
        self._repository: Repository | None = None

    @property
    def user_id(self) -> str:
        return self.user.id if self.user is not None else ""

    @property
    def principal(self) -> str:
        """The caller as the owner of operations and locks (`User.principal`): the id
        and the creation uid, so a re-created user owns none of its namesake's."""
        return self.user.principal if self.user is not None else ""

    @property
    def repository(self) -> Repository:
        """The repository the path names, read once per request (NotFoundError if absent)."""
        if self._repository is None:
            self._repository = self.services.graveler.get_repository(self.path["repository"])
        return self._repository

    def read_branch(self, branch: str, *, path: str | None = None) -> BranchRead:
        """The repository the path names, `branch` and its protection rules, read together
        (`Graveler.read_branch`: one round trip; with `path`, that object's staged entry
        too), for this request only; sets `repository`."""
        read = self.services.graveler.read_branch(self.path["repository"], branch, path=path)
        self._repository = read.repository
        return read

    @property
    def upload(self) -> BinaryIO:
        """The body of a `stream` operation."""
        assert self.source is not None, "only a stream operation's call has an upload"
        return self.source


Permissions = Callable[[Call[Any]], Sequence[Permission]]


class Executors:
    """The request and stream thread pools of one process. `shutdown` waits for their work.

    A streaming upload holds its thread while its client sends, so the stream pool
    has one thread per request the process lets in flight (`max_connections`):
    held-open uploads can never take the last thread from another upload. Threads
    start only when needed, and a stalled or trickling one is freed by the body's
    pace (read timeout, minimum rate).
    """

    def __init__(self, stream_threads: int, *, inline: bool = False) -> None:
        self.inline = inline
        """`Operation.inline` reads run on the event loop: the stores answer in-process."""
        self.requests = ThreadPoolExecutor(REQUEST_THREADS, thread_name_prefix="kvlake-request")
        self.streams = ThreadPoolExecutor(stream_threads, thread_name_prefix="kvlake-stream")

    def shutdown(self) -> None:
        self.streams.shutdown(wait=True)
        self.requests.shutdown(wait=True)


def no_permissions(call: Call[Any]) -> Sequence[Permission]:
    return ()


@dataclass(frozen=True)
class Operation(Generic[BodyT]):
    """One lakeFS operation: route, checks, OpenAPI entry and permissions, from one place."""

    operation_id: str
    method: str
    path: str
    handler: Callable[[Call[BodyT]], Response]
    openapi_tag: str
    """The OpenAPI tag grouping it in the document (lakeFS's), not a ref tag."""
    summary: str = ""
    params: tuple[params.Param, ...] = ()
    body: type[BodyT] | None = None
    """The JSON body's wire model (or a list of them), or None for no JSON body."""
    stream: bool = False
    """The body is a raw upload (octet-stream or multipart), read as `Call.source`."""
    responses: Mapping[int, type[Any] | str | None] = field(default_factory=dict)
    permissions: Permissions = no_permissions
    public: bool = False
    """No credentials needed (health, set-up, login)."""
    optional_body: bool = False
    """An empty body is allowed and reaches the handler as None."""
    body_permissions: bool = False
    """`permissions` reads the JSON body (a copy's source, a new name's ARN): the caller
    is authenticated before the body is read but authorized after it. Otherwise the
    operation is authorized from its path and headers first, so a caller without the
    permission has no body read and holds no budget (issue 23)."""
    inline: bool = False
    """A read of a few KV keys and cached committed data, no body and no write: it runs on
    the event loop, not a request thread, where the stores answer in-process
    (`Executors.inline`) and the caller is in the authenticator's cache (a check that may
    fail writes the failure down, so it takes a thread). Nothing that writes or scans
    without bound may say so."""
    lakefs_errors: Mapping[type[KvlakeError], str] = field(default_factory=dict)
    """lakeFS's texts for this operation's errors where they differ from the error class's
    (`errors.LAKEFS_MESSAGES`); `{name}` fields are query and path parameters, the
    body's fields and what the handler put in `Call.fields`."""


def json_response(
    value: object, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(_encode(value), status, headers, media_type="application/json")


def no_content() -> Response:
    return Response(status_code=204)


def _authenticate(call: Call[Any]) -> User:
    return _acting(
        call,
        call.services.authenticator.authenticate(
            call.request.headers.get("authorization"),
            call.request.cookies.get(SESSION_COOKIE),
            client=client_address(call),
        ),
    )


def _acting(call: Call[Any], user: User) -> User:
    call.user = user
    call.request.scope[USER_SCOPE_KEY] = user.id  # who acted, for the access log
    return user


def _known_caller(call: Call[Any]) -> bool:
    """Whether the caller is known without the KV (`Authenticator.cached_caller`, which does
    no I/O, so the event loop may ask); if so, it is the call's user from now on. A caller
    to check afresh, whose failure is written down, needs a request thread."""
    user = call.services.authenticator.cached_caller(
        call.request.headers.get("authorization"), call.request.cookies.get(SESSION_COOKIE)
    )
    if user is None:
        return False
    _acting(call, user)
    return True


def _runs_inline(operation: Operation[Any], call: Call[Any]) -> bool:
    """An `inline` read whose caller is known without the KV."""
    return operation.public or _known_caller(call)


def client_address(call: Call[Any]) -> str:
    """The peer's address, which failed logins slow down (proxies' headers are not trusted)."""
    client = call.request.client
    return client.host if client is not None else ""


def _authorize(operation: Operation[BodyT], call: Call[BodyT]) -> None:
    user = call.user if call.user is not None else _authenticate(call)
    call.services.authenticator.authorize(user, operation.permissions(call))
    call.authorized = True


def run(operation: Operation[BodyT], call: Call[BodyT]) -> Response:
    """The operation's handler behind its authorization, as its endpoint runs it: the web
    UI's pages call operations through this, so they have no authorization of their own."""
    return _run(operation, call)


def _run(operation: Operation[BodyT], call: Call[BodyT]) -> Response:
    if not operation.public and not call.authorized:
        _authorize(operation, call)
    try:
        with acting_as(call.user_id):  # a Lua hook's `lakefs` calls act as this caller
            return operation.handler(call)
    except KvlakeError as exc:
        message = _lakefs_text(operation, call, exc)
        if message is None:
            raise
        raise OperationError(exc, message) from exc


def _lakefs_text(operation: Operation[BodyT], call: Call[BodyT], exc: KvlakeError) -> str | None:
    """The operation's lakeFS text for the error, or None where the class's text applies: the
    most specific class with a text wins (a TooManyTriesError is not the operation's
    PreconditionFailedError)."""
    for cls in type(exc).__mro__:
        template = operation.lakefs_errors.get(cls)
        if template is None and cls in LAKEFS_MESSAGES:
            return None
        if template is not None:
            fields: dict[str, object] = call.query.as_dict() | dict(call.path) | call.fields
            if isinstance(call.body, msgspec.Struct):
                fields |= msgspec.structs.asdict(call.body)
            return template.format_map(fields)
    return None


def endpoint(operation: Operation[Any]) -> Callable[[Request], Any]:
    async def serve(request: Request) -> Response:
        request.scope[OPERATION_SCOPE_KEY] = operation.operation_id  # metrics, access log
        if sum(len(k) + len(v) for k, v in request.scope["headers"]) > MAX_HEADER_BYTES:
            raise InvalidInputError(f"request headers are over {MAX_HEADER_BYTES} bytes")
        query = params.parse(operation.params, request.query_params.multi_items(), request.headers)
        call: Call[Any] = Call(request, query, None, request.app.state.services)
        loop = asyncio.get_running_loop()
        executors: Executors | None = getattr(request.app.state, "executors", None)
        # Without the lifespan (tests) asyncio's default pool runs the handlers.
        requests = executors.requests if executors is not None else None
        if operation.body is None and not operation.stream:
            if (
                operation.inline
                and executors is not None
                and executors.inline
                and _runs_inline(operation, call)
            ):
                return _run(operation, call)
            return await loop.run_in_executor(requests, _run, operation, call)
        stream = operation.stream
        if not operation.public and not operation.body_permissions:
            # Issue 23: an upload's permissions, and most JSON operations', name only the
            # path, so they are authorized before one byte is read: a caller without
            # the permission holds no budget.
            await loop.run_in_executor(requests, _authorize, operation, call)
        elif not operation.public and not _known_caller(call):
            # Issue 10: a caller is known from its headers before one byte of its body is
            # read, so an anonymous client cannot make the server buffer anything. A caller
            # in the authenticator's cache is known on the loop, without a thread's hop.
            await loop.run_in_executor(requests, _authenticate, call)
        limits: BodyLimits = getattr(request.app.state, "body_limits", None) or BodyLimits()
        budget, max_json = limits.budget, bodies.MAX_JSON_BYTES
        if operation.public:
            budget, max_json = limits.public_budget, bodies.PUBLIC_MAX_JSON_BYTES
        share = bodies.body_share(request, stream=stream, max_json=max_json)
        async with budget.hold(share, client=client_address(call)):
            pace = limits.pace
            if stream:
                # A RawIOBase reads as a binary file; typeshed does not say so.
                call.source = cast(BinaryIO, await upload_source(request, pace=pace))
            elif operation.body is not None:
                call.body = await bodies.read_json(
                    request,
                    operation.body,
                    optional=operation.optional_body,
                    pace=pace,
                    max_bytes=max_json,
                )
            executor = requests
            if executors is not None and isinstance(call.source, ThreadBodyReader):
                executor = executors.streams
            return await loop.run_in_executor(executor, _run, operation, call)

    serve.__name__ = operation.operation_id
    return serve


OPERATION_SCOPE_KEY: Final = "kvlake.operation"
"""Scope key naming the operation a request was routed to (observability.py reads it)."""
USER_SCOPE_KEY: Final = "kvlake.user"
"""Scope key naming the authenticated caller (observability.py reads it)."""
_ROUTE: Final = "kvlake.route"
"""Child-scope key naming the route `OperationRoutes` matched, for its `handle`."""


class OperationRoutes(BaseRoute):
    """The operations' routes behind one index, tried as Starlette would try them in order.

    A `{parameter}` matches exactly one non-empty segment (Starlette's `str`
    convertor, `[^/]+`), so a path can only match templates with as many
    segments and the same fixed words: the index skips the others without
    trying their regex, and never changes which route answers (the first full
    match, else the first partial one, which answers 405). Starlette's own
    loop tries every route's regex, and a stat, about fortieth in line, paid
    ~0.05 ms for it.
    """

    def __init__(self, routes: Sequence[Route]) -> None:
        self.routes = list(routes)
        self._by_count: dict[int, list[tuple[Route, tuple[tuple[int, str], ...]]]] = {}
        for route in self.routes:
            segments = route.path.split("/")
            fixed = tuple((i, word) for i, word in enumerate(segments) if "{" not in word)
            self._by_count.setdefault(len(segments), []).append((route, fixed))

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return Match.NONE, {}
        segments = _route_path(scope).split("/")
        partial: tuple[Route, Scope] | None = None
        for route, fixed in self._by_count.get(len(segments), ()):
            if any(segments[i] != word for i, word in fixed):
                continue
            match, child = route.matches(scope)
            if match is Match.FULL:
                child[_ROUTE] = route
                return match, child
            if match is Match.PARTIAL and partial is None:
                partial = route, child
        if partial is None:
            return Match.NONE, {}
        route, child = partial
        child[_ROUTE] = route
        return Match.PARTIAL, child

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await scope[_ROUTE].handle(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        for route in self.routes:
            try:
                return route.url_path_for(name, **path_params)
            except NoMatchFound:
                continue
        raise NoMatchFound(name, path_params)


def _route_path(scope: Scope) -> str:
    """The path below the app's root path, as Starlette's routes match it."""
    path: str = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        if path == root:
            return ""
        if path[len(root)] == "/":
            return path[len(root) :]
    return path


def routes(operations: Sequence[Operation[Any]]) -> OperationRoutes:
    """The operations' routes, HEAD operations first so GET routes do not answer them."""
    ordered = sorted(operations, key=lambda op: op.method != "HEAD")
    return OperationRoutes(
        [
            Route("/api/v1" + op.path, endpoint(op), methods=[op.method], name=op.operation_id)
            for op in ordered
        ]
    )
