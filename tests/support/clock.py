"""A clock tests move: time passes only when a test says so, so no test depends on timing."""

from __future__ import annotations


class FakeClock:
    """Time that moves only when a test says so (starts at a fixed, realistic epoch)."""

    def __init__(self) -> None:
        self.now = 1_750_000_000.0
        self.sleeps: list[float] = []
        """Every wait passed to `sleep`, in order."""

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def sleep(self, seconds: float) -> None:
        """A `time.sleep` for code that takes one: records the wait and moves the time."""
        self.sleeps.append(seconds)
        self.now += seconds
