"""The S3 gateway as an ASGI app: route a request to its operation, authenticate, authorize,
run the handler in a worker thread, and answer in S3's terms.

`GatewayRoute` puts it in the server's Starlette app for every path outside
`/api/v1` (and for every virtual-hosted request), so `kvlake serve` answers S3
clients on the REST API's address, as lakeFS does. Every request is signed
(SigV4) and authorized by the same policies as the REST API before its handler
runs; every refusal is S3's XML `<Error>` with a RequestId, never an HTML page
or a JSON body. An operation kvlake does not serve is S3's NotImplemented.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Final, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import Receive, Scope, Send

from kvlake.auth import Permission
from kvlake.config import GatewaySettings
from kvlake.errors import KvlakeError
from kvlake.gateway import listing, multipart, reading, uploads, writing
from kvlake.gateway.call import Backends, S3Call, authenticate, is_virtual_hosted, target_of
from kvlake.gateway.errors import S3Error, error_xml, not_implemented, s3_error_of
from kvlake.http import BodyPace, ThreadBodyReader, chunks, stream_share

log = logging.getLogger(__name__)

API_PREFIX: Final = "/api/v1"
SUBRESOURCES: Final = frozenset(
    {
        "accelerate", "acl", "analytics", "cors", "delete", "encryption", "inventory",
        "legal-hold", "lifecycle", "location", "logging", "metrics", "notification",
        "object-lock", "ownershipControls", "partNumber", "policy", "policyStatus",
        "publicAccessBlock", "replication", "requestPayment", "restore", "retention",
        "select", "tagging", "torrent", "uploadId", "uploads", "versioning", "versions",
        "website", "attributes", "list-type",
    }
)  # fmt: skip
"""Query names that make a request another operation (S3's subresources)."""

Handler = Callable[[S3Call], Response]
BodyHandler = Callable[[S3Call, BinaryIO], Response]
Needs = Callable[[S3Call], list[Permission]]


@dataclass(frozen=True)
class Operation:
    """One S3 operation: its handler (with or without the body) and what it needs."""

    name: str
    needs: Needs
    handler: Handler | None = None
    body_handler: BodyHandler | None = None


def _op(name: str, needs: Needs, handler: Handler) -> Operation:
    return Operation(name, needs, handler=handler)


def _body_op(name: str, needs: Needs, handler: BodyHandler) -> Operation:
    return Operation(name, needs, body_handler=handler)


_LIST_BUCKETS: Final = _op("ListBuckets", listing.list_repositories_needs, listing.list_buckets)
_BUCKET: Final[dict[tuple[str, str], Operation]] = {
    ("HEAD", ""): _op("HeadBucket", listing.read_repository_needs, listing.head_bucket),
    ("GET", "location"): _op(
        "GetBucketLocation", listing.read_repository_needs, listing.get_bucket_location
    ),
    ("GET", "versioning"): _op(
        "GetBucketVersioning", listing.read_repository_needs, listing.get_bucket_versioning
    ),
    ("GET", "list-type"): _op("ListObjectsV2", listing.list_objects_needs, listing.list_objects_v2),
    ("GET", ""): _op("ListObjects", listing.list_objects_needs, listing.list_objects),
    ("POST", "delete"): _body_op("DeleteObjects", writing.per_key_needs, writing.delete_objects),
    ("GET", "uploads"): _op(
        "ListMultipartUploads", listing.list_objects_needs, uploads.list_multipart_uploads
    ),
}
"""(method, subresource) -> operation on a bucket. DeleteObjects authorizes per key."""
_OBJECT: Final[dict[tuple[str, str], Operation]] = {
    ("GET", ""): _op("GetObject", reading.read_object_needs, reading.get_object),
    ("HEAD", ""): _op("HeadObject", reading.read_object_needs, reading.head_object),
    ("PUT", ""): _body_op("PutObject", writing.write_object_needs, writing.put_object),
    ("DELETE", ""): _op("DeleteObject", writing.delete_object_needs, writing.delete_object),
    ("POST", "uploads"): _op(
        "CreateMultipartUpload", writing.write_object_needs, multipart.create_multipart_upload
    ),
    ("PUT", "partNumber"): _body_op(
        "UploadPart", writing.write_object_needs, multipart.upload_part
    ),
    ("POST", "uploadId"): _body_op(
        "CompleteMultipartUpload", writing.write_object_needs, multipart.complete_multipart_upload
    ),
    ("GET", "uploadId"): _op("ListParts", writing.write_object_needs, multipart.list_parts),
    ("DELETE", "uploadId"): _op(
        "AbortMultipartUpload", writing.write_object_needs, multipart.abort_multipart_upload
    ),
}


def _subresource(query: dict[str, str]) -> str:
    found = sorted(name for name in query if name in SUBRESOURCES)
    return found[0] if found else ""


def operation_of(call: S3Call) -> Operation:
    """The operation a request asks for; NotImplemented for one kvlake does not serve."""
    method, target = call.request.method, call.target
    subresource = _subresource(call.query)
    if not target.bucket:
        if method == "GET" and not subresource:
            return _LIST_BUCKETS
        raise not_implemented(f"{method} on the service")
    table = _OBJECT if target.key else _BUCKET
    operation = table.get((method, subresource))
    if operation is None:
        what = f"{method} ?{subresource}" if subresource else method
        raise not_implemented(f"{what} on {'an object' if target.key else 'a bucket'}")
    if operation.name == "PutObject" and call.header("x-amz-copy-source"):
        return _op("CopyObject", writing.copy_object_needs, writing.copy_object)
    if operation.name == "UploadPart" and call.header("x-amz-copy-source"):
        return _op("UploadPartCopy", multipart.upload_part_copy_needs, multipart.upload_part_copy)
    return operation


def _headers(scope: Scope) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return headers


def _run(call: S3Call, loop: asyncio.AbstractEventLoop, pace: BodyPace) -> Response:
    """Everything of one request that may block: runs in a worker thread.

    The body is read only once the request is authenticated and authorized, through
    the REST API's reader (kvlake/http): chunk by chunk from the event loop, at the
    server's pace, so memory stays flat and a stalled or trickled body is cut.
    """
    operation = operation_of(call)
    authenticate(call)
    call.authorize(operation.needs(call))
    if operation.body_handler is not None:
        call.body = ThreadBodyReader(chunks(call.request, pace), loop)
        return operation.body_handler(call, cast(BinaryIO, call.body))
    assert operation.handler is not None
    return operation.handler(call)


def _body_left(request: Request, call: S3Call | None) -> bool:
    """Whether the request has a body that was not read to its end."""
    headers = request.headers
    has_body = headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers
    return has_body and (call is None or call.body is None or not call.body.done)


class Gateway:
    """The S3 protocol over the server's services (`app.state.services`). Thread-safe."""

    def __init__(self, settings: GatewaySettings, *, body_read_timeout: float = 60.0) -> None:
        self.settings = settings
        # Without the server's limits (an app that sets none): a read timeout, no rate.
        self._pace = BodyPace(read_timeout=body_read_timeout, min_rate=1.0, grace=float("inf"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        request_id = secrets.token_hex(8).upper()
        response = await self._respond(request, request_id)
        response.headers["x-amz-request-id"] = request_id
        response.headers.setdefault("Server", "kvlake")
        await response(scope, receive, send)

    async def _respond(self, request: Request, request_id: str) -> Response:
        scope = request.scope
        headers = _headers(scope)
        host = headers.get("host", [""])[0]
        target = target_of(scope["path"], host, self.settings)
        resource = scope["path"]
        call: S3Call | None = None
        try:
            backends = cast(Backends, scope["app"].state.services)
            call = S3Call(
                request=request,
                target=target,
                query=dict(request.query_params),
                headers=headers,
                backends=backends,
                settings=self.settings,
                request_id=request_id,
            )
            loop = asyncio.get_running_loop()
            with_body = request.method in ("PUT", "POST")
            executor = self._executor(scope, streaming=with_body)
            limits = getattr(scope["app"].state, "body_limits", None)
            pace = limits.pace if limits is not None else self._pace
            if limits is None or not with_body:
                return await loop.run_in_executor(executor, _run, call, loop, pace)
            # The REST API's budget: one process's bodies, whichever door they come in by,
            # and one client address's share of it, whichever door its bodies use.
            share = stream_share(request.headers.get("content-length"))
            client = request.client.host if request.client is not None else ""
            async with limits.budget.hold(share, client=client):
                return await loop.run_in_executor(executor, _run, call, loop, pace)
        except S3Error as exc:
            error = exc
        except KvlakeError as exc:
            error = s3_error_of(exc)
            if error.status >= 500:
                log.warning("S3 request %s failed: %s", request_id, exc)
        except Exception:
            log.exception("S3 request %s failed", request_id)
            error = S3Error(500, "InternalError", "the server failed; its log names the request id")
        body = (
            b""
            if request.method == "HEAD"
            else error_xml(error, resource=resource, request_id=request_id)
        )
        response = Response(body, error.status, media_type="application/xml")
        if _body_left(request, call):
            # Refused before its body was read: the rest of it would be taken for the next
            # request on this connection, so the connection ends with this answer.
            response.headers["Connection"] = "close"
        return response

    @staticmethod
    def _executor(scope: Scope, *, streaming: bool) -> Any:
        """The server's worker pool (bodies: the pool with a thread per connection)."""
        executors = getattr(scope["app"].state, "executors", None)
        if executors is None:
            return None
        return executors.streams if streaming else executors.requests


class GatewayRoute(BaseRoute):
    """Routes every request the REST API does not own to the gateway.

    The REST API owns `/api/v1` and everything below it, except on a
    virtual-hosted address (`<repository>.<domain>`), where every path is a key.
    """

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http":
            return Match.NONE, {}
        path: str = scope["path"]
        if path == API_PREFIX or path.startswith(API_PREFIX + "/"):
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if not is_virtual_hosted(host, self.gateway.settings):
                return Match.NONE, {}
        return Match.FULL, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.gateway(scope, receive, send)
