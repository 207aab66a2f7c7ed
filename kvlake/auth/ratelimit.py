"""Failed-login throttling in the KV: slow the guesser down, never lock the owner out.

Locking an access key after ten failures let anyone who knew the admin's key id
lock the admin out. Failures are counted instead per access key AND client
address: after `free_failures` of them, each further failure from that address
makes it wait before its next attempt with that key is even evaluated, twice as
long each time (1 s, 2 s, 4 s, ... up to `max_delay`). The owner, from any other
address, is not slowed at all. A waiting client is answered at once with the
time to wait (no server thread sleeps), and a correct secret from a throttled
address is refused too, or the wait would not slow a guesser.

Counters are KV records updated by compare-and-swap, so every server process
enforces one limit; only existing access keys are counted, so guessing random
key ids cannot fill the store. A counter whose last failure is `window` seconds
old starts again from zero.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from kvlake.auth import keys
from kvlake.auth.records import LoginFailures, decode_login_failures, encode
from kvlake.errors import KeyNotFoundError, PreconditionFailedError
from kvlake.kv import Predicate, Store

FREE_FAILURES: Final = 5
"""Failures from one address with one key before it has to wait between attempts."""
MAX_DELAY: Final = 300.0
"""The longest wait, in seconds, between two attempts of a throttled address."""
WINDOW_SECONDS: Final = 900.0
"""Seconds after its last failure that an address's counter is forgotten."""
_TRIES: Final = 10


class LoginLimiter:
    """Counts failed logins per access key and client address. Thread-safe; state in the KV."""

    def __init__(
        self,
        store: Store,
        *,
        free_failures: int = FREE_FAILURES,
        max_delay: float = MAX_DELAY,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._free_failures = free_failures
        self._max_delay = max_delay
        self._window = window
        self._clock = clock

    @property
    def window(self) -> float:
        """Seconds after its last failure that an address's counter is forgotten."""
        return self._window

    def _load(self, key: bytes) -> tuple[LoginFailures | None, Predicate | None]:
        try:
            raw, predicate = self._store.get(keys.LOGIN_FAILURES, key)
        except KeyNotFoundError:
            return None, None
        return decode_login_failures(raw), predicate

    def wait_seconds(self, access_key_id: str, client: str) -> float:
        """How long `client` must wait before its next attempt with this key (0: none)."""
        failures, _ = self._load(_key(access_key_id, client))
        if failures is None:
            return 0.0
        return max(0.0, failures.retry_after - self._clock())

    def record_failure(self, access_key_id: str, client: str) -> float:
        """Count one failure; return until when the address must now wait (0: no wait)."""
        key = _key(access_key_id, client)
        for _ in range(_TRIES):
            failures, predicate = self._load(key)
            now = self._clock()
            count = 1
            if failures is not None and now - failures.last_failure < self._window:
                count = failures.count + 1
            retry_after = 0.0
            if count > self._free_failures:
                delay = min(2.0 ** (count - self._free_failures - 1), self._max_delay)
                retry_after = now + delay
            updated = LoginFailures(count=count, last_failure=now, retry_after=retry_after)
            try:
                self._store.set_if(keys.LOGIN_FAILURES, key, encode(updated), predicate)
            except PreconditionFailedError:
                continue  # another process counted a failure meanwhile: count on top of it
            return retry_after
        return 0.0  # the store is too busy to count: refusing the login is enough

    def forget(self, access_key_id: str, client: str) -> None:
        """Drop the counter of an address that just logged in with the right secret."""
        self._store.delete(keys.LOGIN_FAILURES, _key(access_key_id, client))


def _key(access_key_id: str, client: str) -> bytes:
    # Client addresses (IPv4, IPv6, a unix socket's "") have no '/', access key ids neither.
    return keys.pair(access_key_id, client.replace("/", "_") or "-")
