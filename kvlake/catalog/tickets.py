"""Tickets: the link addresses kvlake hands out carry their issue time and an HMAC of the
repository instance, branch, path and address (as lakeFS's do), so only an address handed
out for that path, less than `LINK_SECONDS` ago, can be linked (kvlake/catalog/direct.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Final

from kvlake.errors import ConfigError, InvalidInputError
from kvlake.graveler import Repository

LINK_SECONDS: Final = 24 * 3600
"""How long a handed-out address may be linked: lakeFS's LinkAddressTime. A direct upload
of a large object with the client's own credentials may take hours."""
_TICKET_SEPARATOR: Final = ","
_SIGNATURE_BYTES: Final = 16


def link_key(master: bytes) -> bytes:
    """The key that signs link addresses, derived from the server's master key.

    Every server process of one installation shares the master key, so an address
    one process handed out links on any other.
    """
    return hmac.new(master, b"kvlake link addresses", hashlib.sha256).digest()


def uid_of(address: str) -> str:
    """The uid of a handed-out address (its last segment, before the ticket)."""
    return address.rsplit("/", 1)[-1].split(_TICKET_SEPARATOR, 1)[0]


class Tickets:
    """Signs handed-out addresses and verifies them. Thread-safe; no in-process state."""

    def __init__(self, key: bytes, clock: Callable[[], float]) -> None:
        if len(key) < 16:
            raise ConfigError("the link address key is too short; derive it with link_key")
        self._key = key
        self._clock = clock

    def sign(self, repository: Repository, branch: str, path: str, base: str, issued: float) -> str:
        issued_ms = int(issued * 1000)
        signature = self._signature(repository, branch, path, base, issued_ms)
        return f"{base}{_TICKET_SEPARATOR}{issued_ms}.{signature}"

    def _signature(
        self, repository: Repository, branch: str, path: str, base: str, issued_ms: int
    ) -> str:
        message = json.dumps([repository.instance_uid, branch, path, base, issued_ms]).encode()
        digest = hmac.new(self._key, message, hashlib.sha256).digest()[:_SIGNATURE_BYTES]
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def verify(self, repository: Repository, branch: str, path: str, address: str) -> float:
        """The address's issue time, if it is a ticket for this path that has not expired."""
        base, _, ticket = address.rpartition(_TICKET_SEPARATOR)
        issued_text, _, signature = ticket.partition(".")
        if (
            not base
            or not issued_text.isdigit()
            or not hmac.compare_digest(
                signature, self._signature(repository, branch, path, base, int(issued_text))
            )
        ):
            raise InvalidInputError(
                f"physical address {address!r} was not handed out for path {path!r} on branch"
                f" {branch!r} of repository {repository.name!r}; link only an address"
                " getPhysicalAddress returned for that same path and branch"
            )
        issued = int(issued_text) / 1000
        if self._clock() > issued + LINK_SECONDS:
            raise InvalidInputError(
                f"physical address {address!r} expired {LINK_SECONDS // 3600} h after it was"
                " handed out; get a new one with getPhysicalAddress and upload again"
            )
        return issued
