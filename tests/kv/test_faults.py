"""FaultyStore fails exactly the calls a test chooses, before or after they take effect."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kvlake.errors import (
    ClosedError,
    InvalidInputError,
    KeyNotFoundError,
    PreconditionFailedError,
    UnavailableError,
)
from kvlake.kv import Store, open_store
from kvlake.kv.faults import Call, Fault, FaultyStore, When
from kvlake.kv.store import READ_CHUNK, WRITE_CHUNK

P = b"part"
WHENS: tuple[When, ...] = ("before", "after")


@pytest.fixture
def inner() -> Iterator[Store]:
    with open_store("mem://") as store:
        yield store


def keys_of(store: Store, partition: bytes = P) -> list[bytes]:
    return [key for key, _ in store.scan(partition)]


def test_without_faults_every_call_passes_through_and_is_logged(inner: Store) -> None:
    store = FaultyStore(inner)
    store.set(P, b"a", b"1")
    assert store.get(P, b"a")[0] == b"1"
    store.set_many(P, [(b"b", b"2"), (b"c", b"3")])
    assert list(store.scan(P)) == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    assert list(store.partitions()) == [P]
    assert [(c.op, c.partition, c.key, c.size) for c in store.calls] == [
        ("set", P, b"a", None),
        ("get", P, b"a", None),
        ("set_many", P, None, 2),
        ("scan", P, b"", None),
        ("partitions", None, None, None),
    ]
    assert [c.index for c in store.calls] == [0, 1, 2, 3, 4]
    assert store.injected == []


def test_before_fault_fails_the_call_and_writes_nothing(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(op="set")])
    with pytest.raises(UnavailableError, match=r"injected fault: KV set \(call #0\).*before"):
        store.set(P, b"a", b"1")
    with pytest.raises(KeyNotFoundError):
        inner.get(P, b"a")
    assert store.injected == [Call(0, "set", P, b"a")]


def test_after_fault_writes_then_fails(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(op="set", when="after")])
    with pytest.raises(UnavailableError, match="after it took effect"):
        store.set(P, b"a", b"1")
    assert inner.get(P, b"a")[0] == b"1"


def test_skip_then_times_fails_a_window_of_matching_calls(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(op="set", skip=2, times=2)])
    outcomes = []
    for i in range(6):
        try:
            store.set(P, b"k%d" % i, b"v")
            outcomes.append("ok")
        except UnavailableError:
            outcomes.append("fail")
    assert outcomes == ["ok", "ok", "fail", "fail", "ok", "ok"]
    assert keys_of(inner) == [b"k0", b"k1", b"k4", b"k5"]


def test_times_none_fails_every_matching_call(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(op="delete", times=None)])
    inner.set(P, b"a", b"1")
    for _ in range(3):
        with pytest.raises(UnavailableError):
            store.delete(P, b"a")
    store.set(P, b"b", b"2")  # other ops are not affected
    assert keys_of(inner) == [b"a", b"b"]


def test_partition_and_key_filters_choose_the_call(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(partition=b"other", key=b"x", times=None)])
    store.set(P, b"x", b"1")
    store.set(b"other", b"y", b"1")
    with pytest.raises(UnavailableError):
        store.set(b"other", b"x", b"1")
    with pytest.raises(UnavailableError):
        store.get(b"other", b"x")
    store.set_many(b"other", [(b"x", b"2")])  # a batch has no single key: never matches
    assert [c.op for c in store.injected] == ["set", "get"]


def test_error_factory_chooses_the_exception(inner: Store) -> None:
    def conflict(call: Call) -> Exception:
        return PreconditionFailedError(f"lost a race on {call.key!r}")

    store = FaultyStore(inner, [Fault(op="set_if", error=conflict)])
    with pytest.raises(PreconditionFailedError, match="lost a race on b'k'"):
        store.set_if(P, b"k", b"v", None)
    with pytest.raises(KeyNotFoundError):
        inner.get(P, b"k")


def test_after_fault_on_a_call_that_fails_by_itself_reports_the_real_error(inner: Store) -> None:
    inner.set(P, b"k", b"old")
    store = FaultyStore(inner, [Fault(op="set_if", when="after")])
    with pytest.raises(PreconditionFailedError):
        store.set_if(P, b"k", b"new", None)
    assert inner.get(P, b"k")[0] == b"old"
    assert len(store.injected) == 1


def test_scan_faults_per_page(inner: Store) -> None:
    inner.set_many(P, [(b"k%d" % i, b"v") for i in range(5)])
    store = FaultyStore(inner, [Fault(op="scan", skip=1)])
    seen = []
    with pytest.raises(UnavailableError), store.scan(P, batch_size=2) as scan:
        for key, _ in scan:
            seen.append(key)
    assert seen == [b"k0", b"k1"]
    assert [(c.op, c.key) for c in store.calls] == [("scan", b""), ("scan", b"k1")]


def test_partitions_listing_can_fail(inner: Store) -> None:
    inner.set(P, b"k", b"v")
    store = FaultyStore(inner, [Fault(op="partitions", when="after")])
    with pytest.raises(UnavailableError):
        store.partitions()
    assert list(store.partitions()) == [P]


def test_set_many_is_one_faultable_call_per_chunk(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(op="set_many", skip=1)])
    items = [(b"%06d" % i, b"v") for i in range(WRITE_CHUNK + 5)]
    with pytest.raises(UnavailableError):
        store.set_many(P, items)
    assert [(c.op, c.size) for c in store.calls] == [("set_many", WRITE_CHUNK), ("set_many", 5)]
    assert len(keys_of(inner)) == WRITE_CHUNK  # the first chunk landed, the second did not


def test_get_many_is_one_faultable_call_per_chunk(inner: Store) -> None:
    inner.set(P, b"000001", b"v")
    store = FaultyStore(inner, [Fault(op="get_many", skip=1)])
    wanted = [b"%06d" % i for i in range(READ_CHUNK + 5)]
    with pytest.raises(UnavailableError):
        store.get_many(P, wanted)
    assert [(c.op, c.size) for c in store.calls] == [("get_many", READ_CHUNK), ("get_many", 5)]
    assert store.get_many(P, wanted[:3]) == {b"000001": b"v"}


def test_get_across_can_be_targeted_by_name(inner: Store) -> None:
    inner.set(P, b"k", b"v")
    store = FaultyStore(inner, [Fault(op="get_across")])
    with pytest.raises(UnavailableError):
        store.get_across([P], [b"k"])
    assert store.get(P, b"k")[0] == b"v"  # other reads pass
    assert [c.op for c in store.calls] == ["get_across", "get"]


@pytest.mark.parametrize("when", WHENS)
def test_delete_many_and_drop_partition_are_faultable(inner: Store, when: When) -> None:
    inner.set_many(P, [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    faults = [Fault(op="delete_many", when=when), Fault(op="drop_partition", when=when)]
    store = FaultyStore(inner, faults)
    with pytest.raises(UnavailableError):
        store.delete_many(P, [b"a", b"b"])
    assert keys_of(inner) == ([b"c"] if when == "after" else [b"a", b"b", b"c"])
    with pytest.raises(UnavailableError):
        store.drop_partition(P)
    assert keys_of(inner) == ([] if when == "after" else [b"a", b"b", b"c"])
    assert [c.op for c in store.calls] == ["delete_many", "drop_partition"]


@pytest.mark.parametrize("when", WHENS)
def test_delete_if_is_faultable_and_passes_its_answer_through(inner: Store, when: When) -> None:
    inner.set(P, b"a", b"1")
    store = FaultyStore(inner, [Fault(op="delete_if", key=b"a", when=when)])
    with pytest.raises(UnavailableError):
        store.delete_if(P, b"a", b"1")
    assert keys_of(inner) == ([] if when == "after" else [b"a"])
    inner.set(P, b"b", b"2")
    assert store.delete_if(P, b"b", b"other") is False
    assert store.delete_if(P, b"b", b"2") is True
    assert [(c.op, c.key) for c in store.calls] == [("delete_if", b"a")] + [("delete_if", b"b")] * 2


def test_rate_faults_are_deterministic_for_a_seed(inner: Store) -> None:
    def run(seed: int) -> list[int]:
        store = FaultyStore(inner, rate=0.1, seed=seed)
        for i in range(1000):
            try:
                store.set(P, b"%d" % i, b"v")
            except UnavailableError:
                pass
        return [call.index for call in store.injected]

    first = run(7)
    assert first == run(7)
    assert first != run(8)
    assert 50 < len(first) < 150


def test_fail_nth_fails_exactly_that_call_for_every_n() -> None:
    def scenario(store: Store) -> None:
        store.set(P, b"a", b"1")
        _, predicate = store.get(P, b"a")
        store.set_if(P, b"a", b"2", predicate)
        store.delete(P, b"b")

    probe = FaultyStore(open_store("mem://"))
    scenario(probe)
    ops = [call.op for call in probe.calls]
    assert ops == ["set", "get", "set_if", "delete"]
    # What key a holds when the scenario stops at call n: "after" means the call took effect.
    expected: dict[tuple[int, When], bytes | None] = {
        (0, "before"): None,
        (0, "after"): b"1",
        (1, "before"): b"1",
        (1, "after"): b"1",
        (2, "before"): b"1",
        (2, "after"): b"2",
        (3, "before"): b"2",
        (3, "after"): b"2",
    }
    for n, op in enumerate(ops):
        for when in WHENS:
            store = FaultyStore.fail_nth(open_store("mem://"), n, when=when)
            with pytest.raises(UnavailableError):
                scenario(store)
            assert len(store.calls) == n + 1
            assert store.injected == [store.calls[n]] and store.calls[n].op == op
            held = dict(store.inner.scan(P)).get(b"a")
            assert held == expected[n, when], (n, when)


def test_arm_counts_from_now_and_disarm_removes_every_fault(inner: Store) -> None:
    store = FaultyStore(inner, rate=1.0)
    with pytest.raises(UnavailableError):
        store.set(P, b"a", b"1")
    store.disarm()
    store.set(P, b"a", b"1")
    store.arm(Fault(op="get", skip=1))
    store.get(P, b"a")
    with pytest.raises(UnavailableError):
        store.get(P, b"a")
    assert store.count() == 4
    assert store.count(op="get") == 2
    assert store.count(op="set", partition=b"nope") == 0


def test_many_threads_see_exactly_the_planned_faults(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(op="set", skip=100, times=50)])
    failures: list[int] = []
    lock = threading.Lock()

    def work(worker: int) -> None:
        for i in range(200):
            try:
                store.set(P, b"%d/%d" % (worker, i), b"v")
            except UnavailableError:
                with lock:
                    failures.append(worker)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(failures) == 50
    assert sorted(c.index for c in store.calls) == list(range(800))
    assert len(keys_of(inner)) == 750


@pytest.mark.parametrize(
    "kwargs",
    [{"op": "nope"}, {"when": "during"}, {"skip": -1}, {"times": -1}, {"rate": 0.0}, {"rate": 2}],
)
def test_invalid_faults_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        Fault(**kwargs)  # type: ignore[arg-type]


def test_close_closes_the_inner_store(inner: Store) -> None:
    store = FaultyStore(inner)
    store.set(P, b"a", b"1")
    store.close()
    with pytest.raises(ClosedError):
        inner.get(P, b"a")


@pytest.mark.parametrize("when", WHENS)
def test_every_driver_sees_before_and_after_faults_alike(store: Store, when: When) -> None:
    """`store` is the conftest fixture: each driver in turn, PostgreSQL included."""
    faulty = FaultyStore(store, [Fault(op=op, when=when) for op in ("set", "set_many", "scan")])
    with pytest.raises(UnavailableError):
        faulty.set(P, b"a", b"1")
    with pytest.raises(UnavailableError):
        faulty.set_many(P, [(b"b", b"2"), (b"c", b"3")])
    written = [b"a", b"b", b"c"] if when == "after" else []
    assert keys_of(store) == written
    with pytest.raises(UnavailableError):
        list(faulty.scan(P))
    assert [key for key, _ in faulty.scan(P)] == written
    assert [c.op for c in faulty.injected] == ["set", "set_many", "scan"]


def test_each_fault_counts_matching_calls_whatever_the_others_do(inner: Store) -> None:
    store = FaultyStore(inner, [Fault(op="set"), Fault(op="set", skip=1), Fault(skip=3)])
    outcomes = []
    for i in range(5):
        try:
            store.set(P, b"k%d" % i, b"v")
            outcomes.append("ok")
        except UnavailableError:
            outcomes.append("fail")
    assert outcomes == ["fail", "fail", "ok", "fail", "ok"]
