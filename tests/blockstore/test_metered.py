"""The server's blockstore metering: one report per adapter call, with its outcome, and
listings timed by the adapter's work only; throttled answers reach the throttle observers.
(The whole adapter contract also runs through the wrapper: the `metered-s3` adapter.)"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import BlockStore, MeteredBlockStore, observe_throttling, open_blockstore
from kvlake.blockstore.throttle import AdaptiveRateLimiter
from kvlake.errors import BlobNotFoundError, ConflictError
from tests.support import FakeClock, backends
from tests.support.backends import BLOCKSTORES

from .conftest import ADAPTERS

Calls = list[tuple[str, float, str]]


@pytest.fixture(params=sorted(BLOCKSTORES))
def inner(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlockStore]:
    with open_blockstore(ADAPTERS[request.param](request, tmp_path)) as store:
        yield store


def _metered(inner: BlockStore, clock: FakeClock | None = None) -> tuple[MeteredBlockStore, Calls]:
    calls: Calls = []
    if clock is None:
        return MeteredBlockStore(inner, lambda *call: calls.append(call)), calls
    return MeteredBlockStore(inner, lambda *call: calls.append(call), clock=clock), calls


def test_each_call_is_reported_once_with_its_outcome(inner: BlockStore) -> None:
    store, calls = _metered(inner)
    namespace = backends.namespace(inner, "repo1")
    store.put(namespace, "a", io.BytesIO(b"abc"))
    assert store.get(namespace, "a") == b"abc"
    with pytest.raises(BlobNotFoundError):
        store.size(namespace, "missing")
    assert not store.exists(namespace, "missing")
    store.put(namespace, "b", b"b")
    assert store.delete_many(namespace, ["a", "b"]) == {}
    assert [(op, outcome) for op, _, outcome in calls] == [
        ("put", "ok"),
        ("open_reader", "ok"),
        ("size", "not_found"),
        ("size", "not_found"),
        ("put", "ok"),
        ("delete_many", "ok"),  # one call: the adapter's own batch (S3: one DeleteObjects)
    ]


def test_a_listing_is_one_call_timed_by_the_adapter_not_the_caller(inner: BlockStore) -> None:
    clock = FakeClock()
    store, calls = _metered(inner, clock)
    namespace = backends.namespace(inner, "repo1")
    for key in ("d/1", "d/2", "d/3"):
        inner.put(namespace, key, b"x")
    seen = []
    for key in store.list_keys(namespace, "d/"):
        seen.append(key)
        clock.advance(10.0)  # the caller's work between items: not the adapter's time
    assert seen == ["d/1", "d/2", "d/3"]
    assert calls == [("list_keys", 0.0, "ok")]

    calls.clear()
    first = next(iter(store.list_keys(namespace, "d/")))  # a listing stopped early
    assert first == "d/1"
    assert [(op, outcome) for op, _, outcome in calls] == [("list_keys", "ok")]


def test_a_failed_call_is_reported_as_an_error(tmp_path: Path) -> None:
    with open_blockstore(f"local://{tmp_path}/blocks") as inner:
        store, calls = _metered(inner)
        namespace = "local://lake/repo1"
        store.put(namespace, "file", b"x")
        with pytest.raises(ConflictError):  # a key below a blob: the folder is a file
            store.put(namespace, "file/below", b"y")
    assert [(op, outcome) for op, _, outcome in calls] == [("put", "ok"), ("put", "error")]


def test_throttled_answers_reach_every_throttle_observer() -> None:
    heard: list[str] = []
    stop = observe_throttling(heard.append)
    clock = FakeClock()
    limiter = AdaptiveRateLimiter(clock=clock, sleep=clock.sleep, endpoint="http://s3.test")
    round_ = limiter.acquire()
    limiter.throttled_in(round_)
    limiter.throttled_in(round_)  # the same round: the rate is cut once, both are heard
    stop()
    limiter.throttled_in(limiter.acquire())
    assert heard == ["http://s3.test", "http://s3.test"]
    assert limiter.throttled == 3
