"""The API's operations, called in-process by the UI's pages.

A page never reads the stores itself: it calls the operation the REST API
serves (by its lakeFS operation id) through `routing.run`, so the page gets the
API's validation, its authorization against the caller's policies and its
errors, and the UI has no authorization path of its own. `allowed` asks the
same policy check without running the handler, for hiding or disabling an
action the user may not take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from kvlake.api import params, routing
from kvlake.api.routing import Call, Operation
from kvlake.api.services import Services
from kvlake.auth import User
from kvlake.errors import InvalidInputError, PermissionDeniedError


class Operations:
    """The app's operations by id, called as one user from one page request."""

    def __init__(self, operations: Sequence[Operation[Any]]) -> None:
        self._by_id = {op.operation_id: op for op in operations}

    def get(self, operation_id: str) -> Operation[Any]:
        operation = self._by_id.get(operation_id)
        assert operation is not None, f"the API has no operation {operation_id!r}"
        return operation

    def prepare(
        self,
        operation_id: str,
        request: Request,
        services: Services,
        user: User | None,
        *,
        path: Mapping[str, str] | None = None,
        query: Mapping[str, object] | None = None,
        body: object = None,
        headers: Mapping[str, str] | None = None,
        source: BinaryIO | None = None,
        content_type: str = "",
    ) -> tuple[Operation[Any], Call[Any]]:
        """The operation and its call as its endpoint would build them from a request.

        `source`: a stream operation's body (an upload), of `content_type`; the call sees
        a request whose headers are the session's cookie and that content type only, not
        the page's form (its multipart type, its other fields).
        """
        operation = self.get(operation_id)
        if source is not None:
            assert operation.stream, f"{operation_id} takes no upload"
            request = _upload_request(request, content_type)
        items = [
            (name, str(value).lower() if isinstance(value, bool) else str(value))
            for name, value in (query or {}).items()
            if value is not None and value != ""
        ]
        parsed = params.parse(operation.params, items, headers or {})
        decoded = None
        if body is not None:
            assert operation.body is not None, f"{operation_id} takes no JSON body"
            try:
                decoded = msgspec.convert(body, operation.body)
            except msgspec.ValidationError as exc:
                raise InvalidInputError(f"the form is invalid: {exc}") from None
        call: Call[Any] = Call(request, parsed, decoded, services)
        call.path = dict(path or {})
        call.user = user
        call.source = source
        if operation.body_permissions and decoded is None:
            raise InvalidInputError(f"{operation_id}'s permissions read its body: pass body=")
        return operation, call

    def run(
        self,
        operation_id: str,
        request: Request,
        services: Services,
        user: User | None,
        **inputs: Any,
    ) -> Response:
        """Run the operation as `user` (its authorization first), its response as is."""
        operation, call = self.prepare(operation_id, request, services, user, **inputs)
        return routing.run(operation, call)

    def allowed(
        self, operation_id: str, request: Request, services: Services, user: User, **inputs: Any
    ) -> bool:
        """Whether the user's policies allow the operation with these inputs (an operation
        whose permissions read its body, such as createRepository, needs `body=`)."""
        operation, call = self.prepare(operation_id, request, services, user, **inputs)
        try:
            services.authenticator.authorize(user, operation.permissions(call))
        except PermissionDeniedError:
            return False
        return True


def _upload_request(request: Request, content_type: str) -> Request:
    kept = [(k, v) for k, v in request.scope["headers"] if k in (b"cookie", b"host")]
    if content_type.lower().startswith("multipart/"):
        content_type = ""  # the file's own bytes, never parsed as a form
    headers = [*kept, (b"content-type", content_type.encode("latin-1", "replace"))]
    return Request({**request.scope, "headers": headers})


def decoded(response: Response) -> Any:
    """A JSON response's body as plain values (dicts, lists), for a template."""
    body = response.body
    return msgspec.json.decode(body) if body else None
