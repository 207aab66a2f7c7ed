"""Bounded waiting for something another thread or process does: the one polling loop.

Tests never assert on how long something took (timing lives in benchmarks/). A
timeout only keeps a broken test from hanging, so it is generous, and running out
of it fails the test with what was awaited.
"""

from __future__ import annotations

import time
from collections.abc import Callable

DEFAULT_TIMEOUT = 30.0
DEFAULT_INTERVAL = 0.05


def wait_until(
    predicate: Callable[[], object],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = DEFAULT_INTERVAL,
    message: str | Callable[[], str] = "",
) -> None:
    """Return once `predicate()` is true; call it every `interval` seconds meanwhile.

    `message` (or what it returns, computed only on failure) says what was awaited.

    Raises:
        AssertionError: still false after `timeout` seconds.
        Whatever `predicate` raises: a predicate fails fast by raising (a server exited).
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            what = message() if callable(message) else message
            raise AssertionError(f"waited {timeout} s for {what or 'a condition'}")
        time.sleep(interval)
