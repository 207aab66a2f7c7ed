"""`OperationRoutes` answers every request with the route Starlette's in-order loop would pick."""

from __future__ import annotations

import re
import threading
import typing
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from starlette.requests import Request
from starlette.routing import Match, Route
from starlette.types import Scope

from kvlake.api.app import OPERATIONS
from kvlake.api.params import Query
from kvlake.api.routing import REQUEST_THREADS, Call, routes
from kvlake.api.services import Services
from tests.api.server import Server

METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH")
TABLE = routes(OPERATIONS)


def _scope(method: str, path: str) -> Scope:
    return {"type": "http", "method": method, "path": path, "root_path": ""}


def _linear(method: str, path: str) -> tuple[Match, str]:
    """What Starlette's router does: the first full match, else the first partial one."""
    partial = ""
    for route in TABLE.routes:
        match, _ = route.matches(_scope(method, path))
        if match is Match.FULL:
            return match, route.name
        if match is Match.PARTIAL and not partial:
            partial = route.name
    return (Match.PARTIAL, partial) if partial else (Match.NONE, "")


def _indexed(method: str, path: str) -> tuple[Match, str]:
    match, child = TABLE.matches(_scope(method, path))
    route: Route | None = child.get("kvlake.route")
    return match, route.name if route is not None else ""


PATHS = sorted(
    {re.sub(r"\{[^}]+\}", value, route.path) for route in TABLE.routes for value in ("x", "main")}
    | {"/api/v1", "/api/v1/", "/api/v1/repositories/x/", "/api/v1/nothing/here", "/other"}
)


@pytest.mark.parametrize("path", PATHS)
def test_the_index_picks_the_route_the_in_order_loop_picks(path: str) -> None:
    for method in METHODS:
        assert _indexed(method, path) == _linear(method, path), (method, path)


def test_a_stat_request_reaches_the_stat_operation() -> None:
    path = "/api/v1/repositories/repo1/refs/main/objects/stat"
    match, child = TABLE.matches(_scope("GET", path))
    assert match is Match.FULL
    assert child["path_params"] == {"repository": "repo1", "ref": "main"}
    assert child["kvlake.route"].name == "statObject"


def test_slow_streaming_uploads_do_not_hold_up_other_requests(
    http: httpx.Client, server: Server, repo: str
) -> None:
    """Uploads whose bodies trickle in run on their own threads, not the request threads."""
    slow = REQUEST_THREADS + 2
    release = threading.Event()
    started = threading.Semaphore(0)

    def trickle() -> Iterator[bytes]:
        yield b"x" * 1024
        started.release()
        release.wait(60)
        yield b"y"

    def upload(index: int) -> int:
        with server.http() as client:  # one connection each: all in flight at once
            url = f"/repositories/{repo}/branches/main/objects"
            return client.post(url, params={"path": f"slow/{index}"}, content=trickle()).status_code

    with ThreadPoolExecutor(slow) as pool:
        uploads = [pool.submit(upload, index) for index in range(slow)]
        try:
            for _ in range(slow):
                assert started.acquire(timeout=60), "an upload never started streaming"
            listed = http.get(f"/repositories/{repo}/refs/main/objects/ls", timeout=30)
            assert listed.status_code == 200
        finally:
            release.set()
        assert [future.result() for future in uploads] == [201] * slow


def test_every_handler_takes_the_call_of_its_declared_body() -> None:
    """mypy holds `Operation[X]` to a `Call[X]` handler; this also catches a handler typed
    for a body its operation never declared (X inferred from the handler alone)."""
    for operation in OPERATIONS:
        (declared,) = typing.get_args(typing.get_type_hints(operation.handler)["call"])
        body = operation.body
        expected = (
            type(None) if body is None else (body | None if operation.optional_body else body)
        )
        assert declared == expected, operation.operation_id
        assert not (operation.stream and body is not None), operation.operation_id


class _BodyRead(Exception):
    """A permissions builder touched the body."""


class _Poison:
    """A body every attribute read of which fails, so a builder that reads it is caught."""

    def __getattr__(self, name: str) -> object:
        raise _BodyRead(name)


class _Services:
    """Services whose every method hands back its first argument: builders that check a
    value through a service (a namespace's spelling) still reach for the body."""

    def __getattr__(self, name: str) -> _Services:
        return self

    def __call__(self, *args: object) -> object:
        return args[0] if args else self


def test_operations_authorized_before_their_body_need_nothing_from_it() -> None:
    """`body_permissions` says whether the body is read before authorization (issue 23):
    an operation without it must build its permissions from path and query alone, and
    one with it must need the body (else it is read before authorization for nothing)."""
    checked = 0
    for operation in OPERATIONS:
        if operation.body is None or operation.public:
            continue
        names = re.findall(r"\{([^}]+)\}", operation.path)
        scope = {"type": "http", "method": operation.method, "path": "/", "headers": []}
        request = Request(scope | {"path_params": dict.fromkeys(names, "repo")})
        services = typing.cast(Services, _Services())
        query = Query({"path": "lakefs://repo/main/p"})
        call: Call[typing.Any] = Call(request, query, _Poison(), services)
        try:
            operation.permissions(call)
        except _BodyRead:
            assert operation.body_permissions, f"{operation.operation_id} reads its body"
        else:
            assert not operation.body_permissions, f"{operation.operation_id} needs no body"
            checked += 1
    assert checked > 20  # most JSON operations are authorized before their body
