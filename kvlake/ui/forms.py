"""A page's submitted form, read under the limits every API body has (issue 23).

Starlette's own `request.form()` reads a body at any pace and keeps every
urlencoded field in memory, so a client could hold a connection for ever or
make the server buffer gigabytes through a UI form. Here a form holds its share
of the process's body budget while it is read (the anonymous budget for the
login page), keeps the body's pace (`BodyPace`: 408 when it stalls or trickles),
and a form without a file is capped in bytes. An upload's file is spooled to a
temporary file by Starlette's multipart parser, bounded by pace as an API
upload is, never held in memory.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Final

from starlette.datastructures import FormData
from starlette.formparsers import FormParser, MultiPartException, MultiPartParser
from starlette.requests import Request

from kvlake.api import body as bodies
from kvlake.api.routing import BodyLimits
from kvlake.errors import InvalidInputError
from kvlake.http import chunks

MAX_FORM_BYTES: Final = 1 << 20
"""Cap of a form without a file: a commit message and its metadata fit many times over."""
MAX_FORM_FIELDS: Final = 200
MAX_FORM_FILES: Final = 1


async def read_form(request: Request, *, files: bool, public: bool) -> FormData:
    """The request's form; `files`: it may carry one file; `public`: no session is needed
    to send it (the login page), so it draws on the anonymous budget and its small cap.
    A body of another type is not read: it is an empty form, which its CSRF check refuses.

    Raises:
        InvalidInputError: a form without a file over its cap, or a malformed form.
        BodyTimeoutError: the body stalled or came too slowly (408).
        BodyBudgetFullError: the process holds its limit of bodies (503).
        ClientGoneError: the browser went away mid-body.
    """
    limits: BodyLimits = getattr(request.app.state, "body_limits", None) or BodyLimits()
    budget, cap = limits.budget, MAX_FORM_BYTES
    if public:
        budget, cap = limits.public_budget, bodies.PUBLIC_MAX_JSON_BYTES
    share = bodies.body_share(request, stream=files, max_json=cap)
    client = request.client.host if request.client is not None else ""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    async with budget.hold(share, client=client):
        stream: AsyncGenerator[bytes, None] = chunks(request, limits.pace)
        if not files:
            stream = _capped(stream, cap, request.headers.get("content-length"))
        try:
            if content_type == "multipart/form-data":
                return await MultiPartParser(
                    request.headers,
                    stream,
                    max_files=MAX_FORM_FILES if files else 0,
                    max_fields=MAX_FORM_FIELDS,
                ).parse()
            if content_type == "application/x-www-form-urlencoded":
                return await FormParser(request.headers, stream).parse()
        except MultiPartException as exc:
            raise InvalidInputError(f"the form could not be read: {exc.message}") from None
        finally:
            await stream.aclose()
    return FormData()  # not a form (no body, another type): its CSRF check refuses it


async def _capped(
    stream: AsyncGenerator[bytes, None], cap: int, declared: str | None
) -> AsyncGenerator[bytes, None]:
    too_big = f"the form is over {cap} bytes; send less"
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise InvalidInputError(too_big)
    size = 0
    async for chunk in stream:
        size += len(chunk)
        if size > cap:
            raise InvalidInputError(too_big)
        yield chunk
