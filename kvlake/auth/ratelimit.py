"""Failed-login counters in the KV, so every server process enforces one limit.

An access key that fails `max_failures` times within `window` seconds is locked
until the window ends, whatever the secret it then presents (so a lucky guess
during the lockout does not get in). Counters are updated by compare-and-swap;
the lock itself is written into the credential record, which every request
reads anyway, so checking it costs no query. Only existing access keys are
counted, so guessing random key ids cannot fill the store.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from kvlake.auth import keys
from kvlake.auth.records import LoginFailures, decode_login_failures, encode
from kvlake.errors import KeyNotFoundError, PreconditionFailedError
from kvlake.kv import Predicate, Store

MAX_FAILURES: Final = 10
WINDOW_SECONDS: Final = 300.0
_TRIES: Final = 10


class LoginLimiter:
    """Counts failed logins per access key. Thread-safe; state lives in the KV only."""

    def __init__(
        self,
        store: Store,
        *,
        max_failures: int = MAX_FAILURES,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._max_failures = max_failures
        self._window = window
        self._clock = clock

    def _load(self, access_key_id: str) -> tuple[LoginFailures | None, Predicate | None]:
        try:
            raw, predicate = self._store.get(keys.LOGIN_FAILURES, keys.key(access_key_id))
        except KeyNotFoundError:
            return None, None
        return decode_login_failures(raw), predicate

    def record_failure(self, access_key_id: str) -> float | None:
        """Count one failure; return when the lock ends if this failure locks the key.

        A window that has ended starts again at one.
        """
        for _ in range(_TRIES):
            failures, predicate = self._load(access_key_id)
            now = self._clock()
            if failures is None or now - failures.window_start >= self._window:
                updated = LoginFailures(window_start=now, count=1)
            else:
                updated = LoginFailures(
                    window_start=failures.window_start, count=failures.count + 1
                )
            try:
                self._store.set_if(
                    keys.LOGIN_FAILURES, keys.key(access_key_id), encode(updated), predicate
                )
            except PreconditionFailedError:
                continue  # another process counted a failure meanwhile: count on top of it
            if updated.count >= self._max_failures:
                return updated.window_start + self._window
            return None
        return None
