"""How a Lua hook's `lakefs` module reaches the API: a caller the API layer provides.

lakeFS's Lua client calls the server's own handlers in-process, as the user
whose request triggered the hook, so the hook is authorized and audited as
that user (docs/howto/hooks/lua.md, "lakefs"). The actions layer sits below
the API and may not import it, so the API hands the service an `ApiCaller`
(`Actions.connect_api`) and marks every request's thread with its user
(`acting_as`), which the service reads when a hook runs in that request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Final, NamedTuple, Protocol


class HookRequest(NamedTuple):
    """One API operation a Lua hook calls, as `user_id`; a body over `max_bytes` is refused."""

    user_id: str
    operation_id: str
    path: Mapping[str, str]
    query: Mapping[str, object]
    body: object
    max_bytes: int


class ApiCaller(Protocol):
    """Runs one API operation in-process, as a user; answers its status and body."""

    def call(self, request: HookRequest) -> tuple[int, bytes]:
        """The operation's status and body (lakeFS's error JSON for an error status).

        Raises:
            HookFailedError: the body is longer than `request.max_bytes`.
        """


_ACTING_USER: Final[ContextVar[str]] = ContextVar("kvlake_acting_user", default="")


@contextlib.contextmanager
def acting_as(user_id: str) -> Iterator[None]:
    """Hooks run inside this block act as `user_id` (the API wraps each handler in it)."""
    token = _ACTING_USER.set(user_id)
    try:
        yield
    finally:
        _ACTING_USER.reset(token)


def acting_user() -> str:
    """The user the current request acts as, or '' outside a request (a background job)."""
    return _ACTING_USER.get()
