"""AdaptiveRateLimiter: AIMD on a fake clock, so no test waits or measures time."""

from __future__ import annotations

import pytest

from kvlake.blockstore.throttle import AdaptiveRateLimiter, shared_limiter
from kvlake.errors import InvalidInputError
from tests.support import FakeClock


def limiter(clock: FakeClock, **options: float) -> AdaptiveRateLimiter:
    return AdaptiveRateLimiter(clock=clock, sleep=clock.sleep, endpoint="test", **options)


def test_requests_are_spaced_at_the_rate() -> None:
    clock = FakeClock()
    limit = limiter(clock, max_rate=10.0)
    for _ in range(5):
        limit.acquire()
    assert clock.sleeps == pytest.approx([0.1] * 4)


def test_a_throttle_halves_the_rate_once_per_round() -> None:
    clock = FakeClock()
    limit = limiter(clock, max_rate=100.0)
    rounds = [limit.acquire() for _ in range(50)]  # 50 workers sent at the same rate...
    for round_ in rounds:  # ...and all were throttled: one congestion, one cut
        limit.throttled_in(round_)
    assert limit.rate == 50.0
    assert limit.throttled == 50
    limit.throttled_in(limit.acquire())  # a request sent after the cut is news
    assert limit.rate == 25.0


def test_successes_add_to_the_rate_up_to_the_maximum() -> None:
    clock = FakeClock()
    limit = limiter(clock, max_rate=8.0, increase=1.0)
    limit.throttled_in(limit.acquire())
    assert limit.rate == 4.0
    for expected in (5.0, 6.0, 7.0, 8.0, 8.0):
        limit.succeeded()
        assert limit.rate == expected


def test_the_rate_never_falls_below_the_minimum() -> None:
    clock = FakeClock()
    limit = limiter(clock, max_rate=8.0, min_rate=2.0)
    for _ in range(10):
        limit.throttled_in(limit.acquire())
    assert limit.rate == 2.0


def test_a_cut_pushes_back_requests_already_spaced() -> None:
    clock = FakeClock()
    limit = limiter(clock, max_rate=100.0, decrease=0.1)
    limit.throttled_in(limit.acquire())  # now 10 requests a second
    limit.acquire()
    assert clock.sleeps[-1] == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("min_rate", "max_rate", "increase", "decrease"),
    [(0.0, 5.0, 1.0, 0.5), (10.0, 5.0, 1.0, 0.5), (1.0, 5.0, 1.0, 1.0), (1.0, 5.0, -1.0, 0.5)],
)
def test_bad_settings_are_refused(
    min_rate: float, max_rate: float, increase: float, decrease: float
) -> None:
    with pytest.raises(InvalidInputError, match="rate limiter"):
        AdaptiveRateLimiter(
            min_rate=min_rate, max_rate=max_rate, increase=increase, decrease=decrease
        )


def test_one_limiter_per_endpoint_and_process() -> None:
    first = shared_limiter("http://limiter-test-a")
    assert shared_limiter("http://limiter-test-a") is first
    assert shared_limiter("http://limiter-test-b") is not first
