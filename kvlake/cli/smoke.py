"""The smoke run behind `kvlake kv check`: every Store call once per key, timed and checked.

It writes only to a partition of its own, named by a fresh uuid, and drops it
even when a step fails, so it is safe against a store in use. A wrong answer
is an `UnavailableError`: the store is reachable but cannot be trusted.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

import click

from kvlake.errors import KvlakeError, UnavailableError
from kvlake.kv import Store

_T = TypeVar("_T")


def smoke(store: Store, entries: int) -> None:
    """Run set, get, set_if, set_many, scan, delete and drop_partition over `entries` keys.

    Prints one throughput line per step. Raises UnavailableError if any step
    returns what the previous ones should not have produced; the smoke
    partition is dropped (best effort) whatever happens.
    """
    partition = f"kvlake-smoke/{uuid.uuid4().hex}".encode()
    keys = [b"key/%09d" % i for i in range(entries)]
    items = [(k, b"v3:" + k) for k in keys]

    def set_each() -> None:
        for key in keys:
            store.set(partition, key, b"v1:" + key)

    def swap_each() -> None:
        for key, (_, predicate) in zip(keys, got, strict=True):
            store.set_if(partition, key, b"v2:" + key, predicate)

    def delete_half() -> None:
        for key in keys[::2]:
            store.delete(partition, key)

    try:
        _timed("set", entries, set_each)
        got = _timed("get", entries, lambda: [store.get(partition, k) for k in keys])
        _expect(all(v == b"v1:" + k for k, (v, _) in zip(keys, got, strict=True)), "get", "set")
        _timed("set_if", entries, swap_each)
        _timed("set_many", entries, lambda: store.set_many(partition, items))
        scanned = _timed("scan", entries, lambda: list(store.scan(partition)))
        _expect(scanned == items, "scan", "set_many, in ascending key order")
        _timed("delete", len(keys[::2]), delete_half)
        _timed("drop_partition", len(keys[1::2]), lambda: store.drop_partition(partition))
        _expect(not list(store.scan(partition)), "scan after drop_partition", "no entries")
    except BaseException:
        # Best effort only: the first error is the one worth reporting.
        with contextlib.suppress(KvlakeError):
            store.drop_partition(partition)
        raise


def _timed(label: str, count: int, step: Callable[[], _T]) -> _T:
    started = time.perf_counter()
    result = step()
    seconds = max(time.perf_counter() - started, 1e-9)
    click.echo(f"  {label:<15}{count:>9} entries {seconds:8.3f} s {count / seconds:>12,.0f}/s")
    return result


def _expect(ok: bool, step: str, wanted: str) -> None:
    if not ok:
        raise UnavailableError(
            f"KV smoke run: {step} did not return what {wanted} should give; the store "
            "behaves incorrectly: check its driver and database"
        )
