"""Operations: one declaration per lakeFS operation id, and the adapter that serves it.

An `Operation` names its path, method, parameters, body model, responses and the
permissions it needs. `endpoint` turns it into a Starlette endpoint that parses
and validates the request on the event loop, then runs authentication,
authorization and the handler together in one worker thread: every handler is
plain synchronous code (one concurrency model) and no handler can skip the
policy check. The same declarations build the routes and the OpenAPI document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kvlake.api import body as bodies
from kvlake.api import params
from kvlake.api.services import Services
from kvlake.auth import SESSION_COOKIE, Permission, User
from kvlake.errors import InvalidInputError

STREAM: Final = "stream"
"""`Operation.body` for a raw upload body (octet-stream or multipart), read as a stream."""

MAX_HEADER_BYTES: Final = 16 * 1024
"""Headers beyond this are refused before anything else is looked at."""

_encode = msgspec.json.Encoder().encode


class Call:
    """One request as a handler sees it: validated inputs, the caller, the services."""

    __slots__ = ("request", "path", "query", "body", "services", "user", "source")

    def __init__(
        self,
        request: Request,
        query: params.Query,
        body: Any,
        services: Services,
        source: Any = None,
    ) -> None:
        self.request = request
        self.path: Mapping[str, str] = request.path_params
        self.query = query
        self.body = body
        self.services = services
        self.user: User | None = None
        self.source = source

    @property
    def user_id(self) -> str:
        return self.user.id if self.user is not None else ""


Handler = Callable[[Call], Response]
Permissions = Callable[[Call], Sequence[Permission]]


def no_permissions(call: Call) -> Sequence[Permission]:
    return ()


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str
    path: str
    handler: Handler
    tag: str
    summary: str = ""
    params: tuple[params.Param, ...] = ()
    body: Any = None
    """A wire model (or list of them), `STREAM`, or None for no body."""
    responses: Mapping[int, type[Any] | str | None] = field(default_factory=dict)
    permissions: Permissions = no_permissions
    public: bool = False
    """No credentials needed (health, set-up, login)."""
    optional_body: bool = False
    """An empty body is allowed and reaches the handler as None."""


def json(value: object, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(_encode(value), status, headers, media_type="application/json")


def no_content() -> Response:
    return Response(status_code=204)


def _run(operation: Operation, call: Call) -> Response:
    if not operation.public:
        authenticator = call.services.authenticator
        call.user = authenticator.authenticate(
            call.request.headers.get("authorization"), call.request.cookies.get(SESSION_COOKIE)
        )
        authenticator.authorize(call.user, operation.permissions(call))
    return operation.handler(call)


def endpoint(operation: Operation) -> Callable[[Request], Any]:
    async def serve(request: Request) -> Response:
        if sum(len(k) + len(v) for k, v in request.scope["headers"]) > MAX_HEADER_BYTES:
            raise InvalidInputError(f"request headers are over {MAX_HEADER_BYTES} bytes")
        query = params.parse(operation.params, request.query_params.multi_items(), request.headers)
        services: Services = request.app.state.services
        source = None
        body = None
        if operation.body == STREAM:
            source = await bodies.upload_source(request)
        elif operation.body is not None:
            assert not isinstance(operation.body, str)
            body = await bodies.read_json(request, operation.body, optional=operation.optional_body)
        call = Call(request, query, body, services, source)
        return await run_in_threadpool(_run, operation, call)

    serve.__name__ = operation.operation_id
    return serve


def routes(operations: Sequence[Operation]) -> list[Route]:
    """Starlette routes, HEAD operations first so GET routes do not answer them."""
    ordered = sorted(operations, key=lambda op: op.method != "HEAD")
    return [
        Route("/api/v1" + op.path, endpoint(op), methods=[op.method], name=op.operation_id)
        for op in ordered
    ]
