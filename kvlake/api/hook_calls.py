"""The API as Lua hooks' `lakefs` module calls it: operations run in-process, as a user.

lakeFS's Lua client sends its requests through the server's own handler,
never the network, with the triggering user's identity (pkg/actions/lua/lakefs).
`HookCalls` does the same over the operation table: it builds the call as the
operation's endpoint would (parameters parsed and checked, the JSON body
converted to the operation's wire model), runs it through `routing.run`, so
the user's policies are checked as for any request, and answers the status
and body a client would see, errors in lakeFS's JSON shape. The lifespan
connects it to the actions service (`Actions.connect_api`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, Sequence
from typing import Any, Final

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from kvlake.actions import HookRequest
from kvlake.api import errors, params, routing
from kvlake.api.routing import Call, Operation
from kvlake.api.services import Services
from kvlake.errors import InvalidInputError, KvlakeError

log = logging.getLogger(__name__)

CLIENT: Final = ("[internal (lua)]", 0)
"""The peer a hook's call shows in logs, lakeFS's LuaRemoteAddr."""
_encode = msgspec.json.Encoder().encode


class HookCalls:
    """kvlake's operations by id, called in-process for Lua hooks (an `ApiCaller`)."""

    def __init__(self, services: Services, operations: Sequence[Operation[Any]]) -> None:
        self._services = services
        self._by_id = {op.operation_id: op for op in operations}

    def call(self, request: HookRequest) -> tuple[int, bytes]:
        operation_id = request.operation_id
        operation = self._by_id[operation_id]
        try:
            response = routing.run(operation, self._prepare(operation, request))
        except KvlakeError as exc:
            status = errors.status_of(exc)
            if status >= 500 and status != 501:
                log.error("a lua hook's %s failed: %s", operation_id, exc, exc_info=exc)
                return status, _encode({"message": errors.INTERNAL_MESSAGE})
            return status, _encode(errors.error_body(exc))
        return response.status_code, _read(response, request.max_bytes)

    def _prepare(
        self,
        operation: Operation[Any],
        request: HookRequest,
    ) -> Call[Any]:
        user = self._services.auth.get_user(request.user_id)
        scope = {
            "type": "http",
            "method": operation.method,
            "path": "/api/v1" + operation.path,
            "root_path": "",
            "query_string": b"",
            "headers": [(b"user-agent", b"kvlake-lua")],
            "client": CLIENT,
            "path_params": dict(request.path),
        }
        items = [
            (name, str(value).lower() if isinstance(value, bool) else str(value))
            for name, value in request.query.items()
        ]
        parsed = params.parse(operation.params, items, {})
        decoded = None
        if request.body is not None and operation.body is not None:
            try:
                decoded = msgspec.convert(request.body, operation.body)
            except msgspec.ValidationError as exc:
                name = operation.operation_id
                raise InvalidInputError(f"{name}'s body is invalid: {exc}") from None
        call: Call[Any] = Call(Request(scope), parsed, decoded, self._services)
        call.user = user
        return call


def _read(response: Response, max_bytes: int) -> bytes:
    """The response's body, refused past `max_bytes` (a hook's object lands in Lua's memory)."""
    if isinstance(response, StreamingResponse):
        return asyncio.run(_collect(response.body_iterator, max_bytes))
    body = bytes(response.body)
    if len(body) > max_bytes:
        raise InvalidInputError(_too_large(max_bytes))
    return body


def _too_large(max_bytes: int) -> str:
    return f"the answer has more than {max_bytes} bytes, more than a lua hook may read"


async def _collect(chunks: AsyncIterable[Any], max_bytes: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in chunks:
            data = chunk.encode() if isinstance(chunk, str) else bytes(chunk)
            size += len(data)
            if size > max_bytes:
                raise InvalidInputError(_too_large(max_bytes))
            parts.append(data)
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
    return b"".join(parts)
