"""A fake clock for rate limiters: time moves only when the code under test sleeps."""

from __future__ import annotations


class FakeClock:
    """Pass the instance as `clock` and its `sleep` as `sleep`; `sleeps` records each wait."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
