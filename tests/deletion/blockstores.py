"""A blockstore that fails (or runs code at) the calls a test chooses: a real BlockStore subclass.

`FaultyBlockStore` wraps any adapter the way `FaultyStore` wraps a KV store, through
the one hook of `DelegatingBlockStore` (the same the server's metrics use): every
adapter call is logged as a `BlobCall`, and `fail` decides, per call, whether it
raises before it runs, after it took effect, or not at all. `delete_many` is one
logged call (with its key count) followed by one call per key, so tests can check
both batching and per-key failures. The rest (copies, folder listings, presigned
URLs, multipart uploads) is one logged call each, passed to the inner adapter, so a
wrapped S3 still copies inside the bucket and presigns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, TypeVar

from kvlake.blockstore import BlockStore, DelegatingBlockStore
from kvlake.errors import UnavailableError


@dataclass(frozen=True, slots=True)
class BlobCall:
    """One adapter call: its 0-based index, operation, namespace, key (or key count)."""

    index: int
    op: str
    namespace: str
    key: str = ""
    size: int = 0


_T = TypeVar("_T")

When = Literal["before", "after"]
Decide = Callable[[BlobCall], When | None]


class FaultyBlockStore(DelegatingBlockStore):
    """Wraps `inner`; `fail(call)` returns "before", "after" or None for each call."""

    def __init__(self, inner: BlockStore, fail: Decide | None = None) -> None:
        super().__init__(inner)
        self.fail: Decide = fail or (lambda call: None)
        self.calls: list[BlobCall] = []
        self._lock = threading.Lock()

    def _call(self, op: str, namespace: str, key: str, action: Callable[[], _T]) -> _T:
        with self._lock:
            call = BlobCall(len(self.calls), op, namespace, key)
            self.calls.append(call)
        when = self.fail(call)
        if when == "before":
            raise UnavailableError(f"injected fault: blockstore {op} {key!r} failed before it ran")
        result = action()
        if when == "after":
            raise UnavailableError(f"injected fault: blockstore {op} {key!r} failed after it ran")
        return result

    def _listing(
        self, op: str, namespace: str, prefix: str, make: Callable[[], Iterator[_T]]
    ) -> Iterator[_T]:
        self._call(op, namespace, prefix, lambda: None)
        yield from make()

    def deletes(self) -> list[BlobCall]:
        """The `delete_many` calls seen, each with its key count."""
        return [call for call in self.calls if call.op == "delete_many"]

    def delete_many(self, namespace: str, keys: Iterable[str]) -> dict[str, Exception]:
        wanted = list(keys)
        with self._lock:
            self.calls.append(BlobCall(len(self.calls), "delete_many", namespace, "", len(wanted)))
        return BlockStore.delete_many(self, namespace, wanted)  # one logged call per key

    def close(self) -> None:
        """The inner adapter is the test's: it closes it."""
