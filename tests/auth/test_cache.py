"""The auth memo: entries expire after the ttl, and a clear voids lookups already running."""

from __future__ import annotations

import pytest

from kvlake.auth.cache import MAX_TTL, TtlCache
from tests.support import FakeClock


def test_an_entry_is_kept_for_the_ttl_and_then_forgotten(clock: FakeClock) -> None:
    cache: TtlCache[str, int] = TtlCache(1.0, clock=clock)
    cache.put("a", 1, cache.generation)
    clock.advance(0.5)
    assert cache.get("a") == 1
    clock.advance(0.5)
    assert cache.get("a") is None


def test_a_lookup_that_began_before_a_clear_is_not_kept(clock: FakeClock) -> None:
    cache: TtlCache[str, int] = TtlCache(1.0, clock=clock)
    generation = cache.generation  # a lookup starts reading the KV...
    cache.clear()  # ...a write changes what it read...
    cache.put("a", 1, generation)  # ...and its stale answer is dropped
    assert cache.get("a") is None
    cache.put("a", 2, cache.generation)
    assert cache.get("a") == 2


def test_a_zero_ttl_keeps_nothing(clock: FakeClock) -> None:
    cache: TtlCache[str, int] = TtlCache(0.0, clock=clock)
    cache.put("a", 1, cache.generation)
    assert cache.get("a") is None


def test_a_full_cache_starts_over_instead_of_growing(clock: FakeClock) -> None:
    cache: TtlCache[int, int] = TtlCache(1.0, clock=clock, capacity=3)
    for number in range(4):
        cache.put(number, number, cache.generation)
    assert [cache.get(number) for number in range(4)] == [None, None, None, 3]


@pytest.mark.parametrize("ttl", [-0.1, MAX_TTL + 0.1])
def test_a_ttl_beyond_the_documented_bound_is_refused(clock: FakeClock, ttl: float) -> None:
    with pytest.raises(ValueError, match="out of range"):
        TtlCache(ttl, clock=clock)
