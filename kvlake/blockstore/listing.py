"""Listing several prefixes of a namespace at once, streamed back in prefix order.

A GC mark or orphan sweep lists every blob of a namespace; on S3 one
ListObjectsV2 page of 1,000 keys is one round trip, so a namespace of millions
of blobs lists for minutes one page at a time. Blob addresses are grouped by
hour (`data/<hour>/...`), so the caller hands over one prefix per time slice
and `parallel_listing` lists up to `parallel` of them at once, each in its own
thread. The caller still sees one stream: prefix by prefix, in the order given,
each in ascending order. Memory stays flat: each listing thread hands over pages
through a queue of at most `QUEUED_PAGES`, and blocks when the caller is slower.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Final, NamedTuple, TypeVar

T = TypeVar("T")

PAGE: Final = 1000
"""Items handed from a listing thread to the caller at a time."""
QUEUED_PAGES: Final = 4
"""Pages a listing thread may get ahead of the caller, per prefix in flight."""
_POLL: Final = 0.1
"""Seconds a blocked listing thread waits before checking whether the caller left."""


class BlobInfo(NamedTuple):
    """A blob as a listing sees it: its key in the namespace, size and modification time."""

    key: str
    size: int
    mtime: float
    """Seconds since the epoch (S3: LastModified, whole seconds)."""
    etag: str = ""
    """The store's ETag where it has one (s3, without quotes; a checksum for imports)."""


class _Done(NamedTuple):
    error: BaseException | None


def parallel_listing(
    list_one: Callable[[str], Iterator[T]], prefixes: Sequence[str], parallel: int
) -> Iterator[T]:
    """`list_one(prefix)` for every prefix, up to `parallel` running at once, in prefix order.

    An error of any listing is raised to the caller when its prefix's turn
    comes. Closing the iterator early stops the listing threads.
    """
    stop = threading.Event()
    queues: list[queue.Queue[list[T] | _Done]] = [
        queue.Queue(maxsize=QUEUED_PAGES) for _ in prefixes
    ]

    def put(number: int, item: list[T] | _Done) -> bool:
        while not stop.is_set():
            try:
                queues[number].put(item, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def produce(number: int) -> None:
        page: list[T] = []
        try:
            for item in list_one(prefixes[number]):
                page.append(item)
                if len(page) >= PAGE:
                    if not put(number, page):
                        return
                    page = []
            if page and not put(number, page):
                return
        except BaseException as exc:  # handed to the caller, who raises it in turn
            put(number, _Done(exc))
            return
        put(number, _Done(None))

    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="kvlake-listing")
    try:
        # The pool runs `parallel` at a time in submission order, so the caller's
        # prefix is always running or done, and later ones fill their queues meanwhile.
        for number in range(len(prefixes)):
            pool.submit(produce, number)
        for number in range(len(prefixes)):
            while True:
                item = queues[number].get()
                if isinstance(item, _Done):
                    if item.error is not None:
                        raise item.error
                    break
                yield from item
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
