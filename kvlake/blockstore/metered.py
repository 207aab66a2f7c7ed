"""A blockstore that reports every adapter call (its name, duration and outcome) to an observer.

`MeteredBlockStore` wraps any adapter, as `MeteredStore` wraps a KV store: one report
per call (a put, a read opened, a head, a batched `delete_many`, a multipart step),
and one per listing, timed by the time spent inside the adapter's iteration, not the
caller's work between items. Outcomes are `ok`, `not_found` (a blob that is not there:
often the answer the caller wanted) and `error`. The observer is a plain callable,
so this layer knows nothing of Prometheus: the server passes one that feeds `/metrics`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from kvlake.blockstore.delegating import DelegatingBlockStore
from kvlake.blockstore.store import BlockStore
from kvlake.errors import BlobNotFoundError

_T = TypeVar("_T")

BlobObserver = Callable[[str, float, str], None]
"""Called after each adapter call with (call name, seconds, outcome)."""


def _outcome(error: BaseException) -> str:
    return "not_found" if isinstance(error, BlobNotFoundError) else "error"


class MeteredBlockStore(DelegatingBlockStore):
    """Wraps `inner` and reports each adapter call to `observe` (thread-safe if it is)."""

    def __init__(
        self,
        inner: BlockStore,
        observe: BlobObserver,
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        super().__init__(inner)
        self._observe = observe
        self._clock = clock

    def _call(self, op: str, namespace: str, key: str, action: Callable[[], _T]) -> _T:
        started = self._clock()
        try:
            result = action()
        except BaseException as exc:
            self._observe(op, self._clock() - started, _outcome(exc))
            raise
        self._observe(op, self._clock() - started, "ok")
        return result

    def _listing(
        self, op: str, namespace: str, prefix: str, make: Callable[[], Iterator[_T]]
    ) -> Iterator[_T]:
        spent = 0.0
        outcome = "ok"
        try:
            started = self._clock()
            items = make()
            spent += self._clock() - started
            while True:
                started = self._clock()
                try:
                    item = next(items)
                except StopIteration:
                    return
                finally:
                    spent += self._clock() - started
                yield item
        except GeneratorExit:
            raise  # the caller stopped early: a listing cut short is still a listing that worked
        except BaseException as exc:
            outcome = _outcome(exc)
            raise
        finally:
            self._observe(op, spent, outcome)
