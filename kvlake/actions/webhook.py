"""Webhook hooks: POST the event's JSON to a URL an administrator allows, within a deadline.

A repository writer chooses the URL, so the server must not become their way
into internal addresses: only loopback is reachable until
`KVLAKE_ACTIONS_WEBHOOK_ALLOWED_HOSTS` names more (or `*`). Names are compared
as written, never resolved first, so no DNS answer can turn an allowed check
into an internal call; redirects are not followed for the same reason. The
deadline covers the whole exchange (connect, send, every read), so a server
that answers a byte at a time cannot hold a hook past its timeout.
"""

from __future__ import annotations

import http.client
import ipaddress
import time
from collections.abc import Callable, Collection
from typing import Final
from urllib.parse import urlencode, urlsplit

from kvlake.actions.records import Webhook

OUTPUT_LIMIT: Final = 64 * 1024
"""Bytes of a webhook's answer kept in the hook's output (the rest is read and dropped)."""
_READ: Final = 16 * 1024


class HookFailedError(Exception):
    """A hook ran and failed (refused host, timeout, non-2xx): lakeFS's `action failed`.

    `output` is the exchange so far (request line, answer), for the hook's output log.
    """

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


def host_allowed(host: str, allowed: Collection[str]) -> bool:
    """Whether a webhook may call `host`: loopback always, others only when configured."""
    host = host.lower().strip("[]")
    if "*" in allowed or host in allowed:
        return True
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def call_webhook(hook: Webhook, payload: bytes, *, allowed: Collection[str]) -> str:
    """POST `payload` (the event's JSON) to the hook's URL; return the log of the exchange.

    Raises:
        HookFailedError: the host is not allowed, the call failed or timed out, or the
            answer is not 2xx; the message says which (and the status code).
    """
    parts = urlsplit(hook.url)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:
        raise HookFailedError(f"webhook url {hook.url!r} has an invalid port") from None
    if not host_allowed(host, allowed):
        raise HookFailedError(
            f"webhook host {host!r} is not allowed; an administrator may add it to"
            " KVLAKE_ACTIONS_WEBHOOK_ALLOWED_HOSTS (only loopback is allowed by default)"
        )
    deadline = time.monotonic() + hook.timeout
    query = "&".join(q for q in (parts.query, urlencode(list(hook.query_params))) if q)
    target = (parts.path or "/") + (f"?{query}" if query else "")
    connection_type = (
        http.client.HTTPSConnection
        if parts.scheme.lower() == "https"
        else http.client.HTTPConnection
    )
    connection = connection_type(host, port, timeout=hook.timeout)
    log = [f"Request: POST {parts.scheme}://{parts.netloc}{target}"]
    try:
        headers = {"Content-Type": "application/json", **dict(hook.headers)}
        connection.request("POST", target, body=payload, headers=headers)
        _set_timeout(connection, deadline)
        response = connection.getresponse()
        kept = read_capped(response, lambda: _set_timeout(connection, deadline))
    except TimeoutError:
        raise HookFailedError(
            f"webhook request failed: no complete answer within {hook.timeout:g}s (timeout)",
            log[0],
        ) from None
    except (OSError, http.client.HTTPException) as exc:
        raise HookFailedError(f"webhook request failed: {exc}", log[0]) from None
    finally:
        connection.close()
    log.append(f"Response: {response.status} {response.reason}")
    log.append(kept.decode("utf-8", "replace"))
    if not 200 <= response.status < 300:
        raise HookFailedError(
            f"webhook request failed (status code: {response.status})", "\n".join(log)
        )
    return "\n".join(log)


def read_capped(response: http.client.HTTPResponse, before_read: Callable[[], None]) -> bytes:
    """The response's body up to OUTPUT_LIMIT bytes, read to its end (the rest dropped, so
    the server sees its answer taken); `before_read` bounds each socket read."""
    kept = bytearray()
    while True:
        before_read()
        chunk = response.read(_READ)
        if not chunk:
            return bytes(kept)
        if len(kept) < OUTPUT_LIMIT:
            kept += chunk[: OUTPUT_LIMIT - len(kept)]


def _set_timeout(connection: http.client.HTTPConnection, deadline: float) -> None:
    """Bound the next socket call by what is left of the hook's deadline."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    if connection.sock is not None:
        connection.sock.settimeout(left)
