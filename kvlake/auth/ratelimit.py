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
from kvlake.errors import TooManyTriesError
from kvlake.kv import Store, get_or_none, update

FREE_FAILURES: Final = 5
"""Failures from one address with one key before it has to wait between attempts."""
MAX_DELAY: Final = 300.0
"""The longest wait, in seconds, between two attempts of a throttled address."""
WINDOW_SECONDS: Final = 900.0
"""Seconds after its last failure that an address's counter is forgotten."""


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

    def wait_seconds(self, access_key_id: str, client: str) -> float:
        """How long `client` must wait before its next attempt with this key (0: none)."""
        loaded = get_or_none(self._store, keys.LOGIN_FAILURES, _key(access_key_id, client))
        if loaded is None:
            return 0.0
        return max(0.0, decode_login_failures(loaded[0]).retry_after - self._clock())

    def record_failure(self, access_key_id: str, client: str) -> float:
        """Count one failure; return until when the address must now wait (0: no wait)."""

        def count_one(raw: bytes | None) -> bytes:
            # Run again on top of the count of another process that counted meanwhile.
            now = self._clock()
            count = 1
            if raw is not None:
                failures = decode_login_failures(raw)
                if now - failures.last_failure < self._window:
                    count = failures.count + 1
            retry_after = 0.0
            if count > self._free_failures:
                delay = min(2.0 ** (count - self._free_failures - 1), self._max_delay)
                retry_after = now + delay
            return encode(LoginFailures(count=count, last_failure=now, retry_after=retry_after))

        key = _key(access_key_id, client)
        what = "counting a failed login"
        try:
            counted = update(self._store, keys.LOGIN_FAILURES, key, count_one, what=what)
        except TooManyTriesError:
            return 0.0  # the store is too busy to count: refusing the login is enough
        return decode_login_failures(counted).retry_after

    def forget(self, access_key_id: str, client: str) -> None:
        """Drop the counter of an address that just logged in with the right secret."""
        self._store.delete(keys.LOGIN_FAILURES, _key(access_key_id, client))


def _key(access_key_id: str, client: str) -> bytes:
    # Client addresses (IPv4, IPv6, a unix socket's "") have no '/', access key ids neither.
    return keys.pair(access_key_id, client.replace("/", "_") or "-")
