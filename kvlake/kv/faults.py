"""A store that fails the calls a test chooses, to prove crash consistency above the KV layer.

`FaultyStore` wraps any `Store` and, for each driver-level call, logs it and
consults a list of `Fault`s. A fault fires *before* the call (nothing happens)
or *after* it (the write took effect, then the caller sees an error: the case
where a process dies between a durable write and its acknowledgement). Faults
are chosen by script (skip the first N matching calls, then fail M) or by rate
with a seeded generator, so every failure a test sees can be replayed.

Calls are counted at the driver boundary: one per point operation, one per
scan page, one per batch chunk (`set_many`, `delete_many`, `drop_partition`,
`get_across` each delegate to the inner store's fast batch method). `calls` therefore lists
exactly the steps a crash can fall between, and `FaultyStore.fail_nth` makes
"fail the n-th call, for every n" a loop.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, Literal, Self, TypeVar

from kvlake.errors import InvalidInputError, UnavailableError
from kvlake.kv.store import KeyValue, Predicate, Store

_T = TypeVar("_T")

When = Literal["before", "after"]

ANY_OP: Final = "*"
"""`Fault.op` value that matches every operation."""

OPS: Final = (
    "delete",
    "delete_if",
    "delete_many",
    "drop_partition",
    "get",
    "get_across",
    "get_many",
    "partitions",
    "scan",
    "set",
    "set_if",
    "set_many",
)
"""The operation names a `Fault` can target and `Call.op` reports."""


@dataclass(frozen=True, slots=True)
class Call:
    """One driver-level call as `FaultyStore` saw it.

    `index` is its 0-based position in `FaultyStore.calls`. `key` is the key of
    a point operation or the first key a scan page asked for; batch operations
    and `partitions` have none, and batches report their item count as `size`.
    """

    index: int
    op: str
    partition: bytes | None = None
    key: bytes | None = None
    size: int | None = None


ErrorFactory = Callable[[Call], Exception]


@dataclass(frozen=True, kw_only=True)
class Fault:
    """Which calls to fail, and how.

    Among the calls that match `op`, `partition` and `key` (None matches
    anything; batch calls never match a `key` filter), let `skip` through, then
    fail the next `times` (None: all of them). With `rate` below 1 each of those
    candidates fails only with that probability, drawn from the store's seeded
    generator. `error` builds the exception; the default is an `UnavailableError`
    saying which call was failed.

    Raises:
        InvalidInputError: an unknown op or when, a negative count, a rate outside (0, 1].
    """

    op: str = ANY_OP
    when: When = "before"
    skip: int = 0
    times: int | None = 1
    partition: bytes | None = None
    key: bytes | None = None
    rate: float = 1.0
    error: ErrorFactory | None = None

    def __post_init__(self) -> None:
        if self.op != ANY_OP and self.op not in OPS:
            raise InvalidInputError(
                f"fault op {self.op!r} is unknown; use {ANY_OP!r} or one of {OPS}"
            )
        if self.when not in ("before", "after"):
            raise InvalidInputError(f"fault when={self.when!r} is unknown; use 'before' or 'after'")
        if self.skip < 0 or (self.times is not None and self.times < 0):
            raise InvalidInputError(
                f"fault skip={self.skip} times={self.times}: use counts >= 0 (times=None: always)"
            )
        if not 0.0 < self.rate <= 1.0:
            raise InvalidInputError(f"fault rate={self.rate} is outside (0, 1]; e.g. rate=0.1")

    def matches(self, call: Call) -> bool:
        """Whether `call` is one this fault counts (before skip and times apply)."""
        return (
            (self.op == ANY_OP or self.op == call.op)
            and (self.partition is None or self.partition == call.partition)
            and (self.key is None or self.key == call.key)
        )


@dataclass(slots=True)
class _Armed:
    fault: Fault
    seen: int = 0
    fired: int = 0


class FaultyStore(Store):
    """Wraps `inner` and fails the calls its faults choose. Safe for many threads.

    The decision for a call (log entry, counters, random draw) is taken under
    one lock; the inner call runs outside it, so concurrency stays real. The
    random draws are in call order, so a seed replays exactly only for a
    single-threaded caller. `close()` closes the inner store too.
    """

    def __init__(
        self,
        inner: Store,
        faults: list[Fault] | None = None,
        *,
        rate: float = 0.0,
        seed: int = 0,
    ) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._random = random.Random(seed)
        self._armed = [_Armed(fault) for fault in faults or []]
        if rate:
            self._armed.append(_Armed(Fault(rate=rate, times=None)))
        self._calls: list[Call] = []
        self._injected: list[Call] = []

    @classmethod
    def fail_nth(cls, inner: Store, n: int, *, when: When = "before") -> Self:
        """A store whose call number `n` (0-based, as in `calls`) fails.

        Run a scenario once on a plain `FaultyStore` to learn `len(calls)`, then
        once per `n` in `range(len(calls))` and per `when` to cover every crash point.
        """
        return cls(inner, [Fault(skip=n, when=when)])

    @property
    def inner(self) -> Store:
        """The wrapped store, for setting up and checking state without faults."""
        return self._inner

    @property
    def calls(self) -> list[Call]:
        """A copy of every call seen so far, in order, failed ones included."""
        with self._lock:
            return list(self._calls)

    @property
    def injected(self) -> list[Call]:
        """A copy of the calls that got an injected error, in order."""
        with self._lock:
            return list(self._injected)

    def count(self, op: str | None = None, partition: bytes | None = None) -> int:
        """How many calls were seen, optionally only of one op and/or partition."""
        with self._lock:
            return sum(
                1
                for call in self._calls
                if (op is None or call.op == op)
                and (partition is None or call.partition == partition)
            )

    def arm(self, *faults: Fault) -> None:
        """Add faults; their `skip` counts matching calls from now on."""
        with self._lock:
            self._armed.extend(_Armed(fault) for fault in faults)

    def disarm(self) -> None:
        """Remove every fault (including a rate); the call log is kept."""
        with self._lock:
            self._armed.clear()

    # -- the decision ---------------------------------------------------------

    def _decide(
        self, op: str, partition: bytes | None, key: bytes | None, size: int | None
    ) -> tuple[Fault | None, Call]:
        with self._lock:
            call = Call(len(self._calls), op, partition, key, size)
            self._calls.append(call)
            chosen: Fault | None = None
            # Every fault counts every call it matches, so each one's `skip` means the
            # same whatever other faults do; the first one due fires.
            for armed in self._armed:
                fault = armed.fault
                if not fault.matches(call):
                    continue
                armed.seen += 1
                due = armed.seen > fault.skip and (fault.times is None or armed.fired < fault.times)
                if chosen is not None or not due:
                    continue
                if fault.rate < 1.0 and self._random.random() >= fault.rate:
                    continue
                armed.fired += 1
                chosen = fault
                self._injected.append(call)
            return chosen, call

    def _run(
        self,
        op: str,
        partition: bytes | None,
        key: bytes | None,
        action: Callable[[], _T],
        size: int | None = None,
    ) -> _T:
        fault, call = self._decide(op, partition, key, size)
        if fault is None:
            return action()
        if fault.when == "before":
            raise _error(fault, call)
        # "after": the inner call takes effect; if it fails on its own, that error wins
        # (the fault still counts as fired: the caller saw an error at this step).
        action()
        raise _error(fault, call)

    # -- the driver primitives, each one faultable call ------------------------

    def _get(self, partition: bytes, key: bytes) -> bytes:
        return self._run("get", partition, key, lambda: self._inner._get(partition, key))

    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        self._run("set", partition, key, lambda: self._inner._set(partition, key, value))

    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        self._run(
            "set_if", partition, key, lambda: self._inner._set_if(partition, key, value, predicate)
        )

    def _delete(self, partition: bytes, key: bytes) -> None:
        self._run("delete", partition, key, lambda: self._inner._delete(partition, key))

    def _delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        return self._run(
            "delete_if", partition, key, lambda: self._inner._delete_if(partition, key, expected)
        )

    def _scan_page(
        self, partition: bytes, start: bytes, inclusive: bool, limit: int
    ) -> list[KeyValue]:
        return self._run(
            "scan",
            partition,
            start,
            lambda: self._inner._scan_page(partition, start, inclusive, limit),
        )

    def _partitions(self, after: bytes) -> Iterator[bytes]:
        return self._run("partitions", None, None, lambda: self._inner._partitions(after))

    def _get_many(self, partition: bytes, keys: list[bytes]) -> dict[bytes, bytes]:
        return self._run(
            "get_many",
            partition,
            None,
            lambda: self._inner._get_many(partition, keys),
            len(keys),
        )

    def _get_across(
        self, partitions: list[bytes], keys: list[bytes]
    ) -> dict[bytes, dict[bytes, bytes]]:
        # One call, as the SQL drivers make it one round trip; its partition is the first.
        return self._run(
            "get_across",
            partitions[0] if partitions else None,
            None,
            lambda: self._inner._get_across(partitions, keys),
            len(partitions) * len(keys),
        )

    def _set_many(self, partition: bytes, items: list[KeyValue]) -> None:
        self._run(
            "set_many", partition, None, lambda: self._inner._set_many(partition, items), len(items)
        )

    # `_swap_many` is Store's default on purpose: one faultable `set_if` a key, so tests
    # can stop a batch of swaps between any two of them.

    def _delete_many(self, partition: bytes, keys: list[bytes]) -> None:
        self._run(
            "delete_many",
            partition,
            None,
            lambda: self._inner._delete_many(partition, keys),
            len(keys),
        )

    def _drop_partition(self, partition: bytes) -> None:
        self._run("drop_partition", partition, None, lambda: self._inner._drop_partition(partition))

    def close(self) -> None:
        self._inner.close()


def _error(fault: Fault, call: Call) -> Exception:
    if fault.error is not None:
        return fault.error(call)
    where = "" if call.partition is None else f" on partition {call.partition!r}"
    if call.key is not None:
        where += f" key {call.key!r}"
    effect = "after it took effect" if fault.when == "after" else "before it ran"
    return UnavailableError(
        f"injected fault: KV {call.op} (call #{call.index}){where} failed {effect}; "
        "this store is a FaultyStore used by tests"
    )
