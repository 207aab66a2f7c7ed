"""One adaptive request rate per object-storage endpoint, shared by every thread of a process.

Object stores throttle by answering `SlowDown` (S3: 503) rather than queueing,
and a client that simply retries each throttled request with its own back-off
keeps the whole process above the limit: Icechunk saw 50 concurrent delete
batches drain their retries within a second, and lakeFS's GC fails on
`SlowDown` (lakeFS #5729). So every request of a process to one endpoint first
takes a slot from one `AdaptiveRateLimiter`, whose rate follows AIMD, the rule
TCP uses for congestion:

- each success adds `increase` requests per second (additive increase);
- a throttled answer multiplies the rate by `decrease` (multiplicative decrease),
  but only once per round: answers to requests sent before the last decrease
  carry no news, so 50 workers throttled at once halve the rate once, not 50 times.

The limiter knows nothing of S3 (the adapter decides what counts as throttled),
and the clock and sleep are injectable, so tests drive it without waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from kvlake.errors import InvalidInputError

DEFAULT_MAX_RATE: Final = 5000.0
"""Requests per second before any throttling: above S3's 3,500 writes per prefix, so an
unthrottled store is not slowed, while a throttled one is brought under its limit."""
DEFAULT_MIN_RATE: Final = 1.0
"""The floor: a store that throttles everything still gets one request a second to retry."""


class AdaptiveRateLimiter:
    """Spaces requests at an AIMD-adapted rate. Thread-safe; share one per endpoint."""

    def __init__(
        self,
        *,
        max_rate: float = DEFAULT_MAX_RATE,
        min_rate: float = DEFAULT_MIN_RATE,
        increase: float = 1.0,
        decrease: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        endpoint: str = "",
    ) -> None:
        if not 0 < min_rate <= max_rate or increase < 0 or not 0 < decrease < 1:
            raise InvalidInputError(
                f"rate limiter settings min_rate={min_rate}, max_rate={max_rate},"
                f" increase={increase}, decrease={decrease} are invalid; pass"
                " 0 < min_rate <= max_rate, increase >= 0 and 0 < decrease < 1"
            )
        self._lock = threading.Lock()
        self.endpoint = endpoint
        """The endpoint whose requests this limiter spaces, as throttle observers see it."""
        self._max_rate = max_rate
        self._min_rate = min_rate
        self._increase = increase
        self._decrease = decrease
        self._clock = clock
        self._sleep = sleep
        self._rate = max_rate
        self._next_slot = clock()
        self._round = 0
        self.throttled = 0
        """Throttled answers reported so far (each one, not only those that lowered the rate)."""

    @property
    def rate(self) -> float:
        """The current rate in requests per second."""
        with self._lock:
            return self._rate

    @property
    def round(self) -> int:
        """The current round: a request sent now reports throttling with this number."""
        with self._lock:
            return self._round

    def acquire(self) -> int:
        """Wait for this request's slot; return the round to pass to `throttled_in`."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + 1.0 / self._rate
            current = self._round
        if slot > now:
            self._sleep(slot - now)
        return current

    def succeeded(self) -> None:
        """A request was answered without throttling: raise the rate by `increase`."""
        with self._lock:
            self._rate = min(self._max_rate, self._rate + self._increase)

    def throttled_in(self, round_: int) -> None:
        """A request sent in `round_` was throttled: cut the rate, once per round."""
        for observe in _THROTTLE_OBSERVERS:
            observe(self.endpoint)
        with self._lock:
            self.throttled += 1
            if round_ != self._round:
                return  # sent before the last cut, which already answered this congestion
            self._round += 1
            self._rate = max(self._min_rate, self._rate * self._decrease)
            # Requests already spaced at the old rate are pushed back to the new spacing.
            self._next_slot = max(self._next_slot, self._clock() + 1.0 / self._rate)

    def pause(self, seconds: float) -> None:
        """Sleep with the limiter's clock: every back-off of an adapter goes through here."""
        if seconds > 0:
            self._sleep(seconds)


_SHARED: dict[str, AdaptiveRateLimiter] = {}
_SHARED_LOCK = threading.Lock()
_THROTTLE_OBSERVERS: list[Callable[[str], None]] = []


def observe_throttling(observer: Callable[[str], None]) -> Callable[[], None]:
    """Call `observer(endpoint)` for every throttled answer any limiter of this process
    hears (the server counts them in `/metrics`); idempotent for one observer. Returns
    the function that stops it."""
    with _SHARED_LOCK:
        if observer not in _THROTTLE_OBSERVERS:
            _THROTTLE_OBSERVERS.append(observer)

    def stop() -> None:
        with _SHARED_LOCK:
            if observer in _THROTTLE_OBSERVERS:
                _THROTTLE_OBSERVERS.remove(observer)

    return stop


def shared_limiter(endpoint: str) -> AdaptiveRateLimiter:
    """The process's one limiter for `endpoint`, created on first use.

    Every blockstore of the process that talks to the same endpoint gets the
    same limiter, so deletion workers, GC and uploads slow down together.
    """
    with _SHARED_LOCK:
        limiter = _SHARED.get(endpoint)
        if limiter is None:
            limiter = _SHARED[endpoint] = AdaptiveRateLimiter(endpoint=endpoint)
        return limiter
