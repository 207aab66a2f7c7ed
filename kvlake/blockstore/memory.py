"""An in-process blockstore for tests: `mem://` namespaces, nothing survives the process.

Upper layers run their tests on this adapter instead of a disk, so it must
behave like `LocalBlockStore` wherever the contract speaks: blobs appear whole
or not at all, ranges clip the same way, listings are ascending and streamed,
and `mem://a` + `b/c` names the same blob as `mem://a/b` + `c` (as two folders
on disk would). One lock makes each operation atomic; blobs are immutable
`bytes`, so a reader never sees a later put.
"""

from __future__ import annotations

import bisect
import io
import threading
import time
from collections.abc import Iterator
from typing import BinaryIO, Final, Self

from kvlake.blockstore.listing import BlobInfo
from kvlake.blockstore.store import BlockStore
from kvlake.errors import ClosedError, ConfigError

LIST_PAGE: Final = 1000
"""Listings copy this many keys at a time under the lock, then yield them."""


class MemoryBlockStore(BlockStore):
    """Blobs in a dict keyed by `<namespace path>/<key>`. URL: `mem://` (each open is empty).

    Thread-safe: every operation holds one lock for its dict and sorted-key
    updates; a listing takes the lock once per page, so it is not a snapshot.
    """

    scheme = "mem"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blobs: dict[str, bytes] = {}
        self._mtimes: dict[str, float] = {}
        self._sorted_paths: list[str] = []
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Open a new, empty store for `mem://`; anything after `//` is refused."""
        if url != "mem://":
            raise ConfigError(
                f"KVLAKE_BLOCKSTORE_URL {url!r} has a path; the memory blockstore takes just mem://"
            )
        return cls()

    def check_namespace(self, namespace: str) -> str:
        """Accept `mem://<relative path>`, e.g. `mem://lake/repo1`; see `BlockStore`."""
        return f"{self.scheme}://{self._namespace_path(namespace)}"

    def _path(self, namespace: str, key: str) -> str:
        return f"{self._namespace_path(namespace)}/{key}"

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this memory blockstore was closed; open a new one")

    def _put(self, namespace: str, key: str, chunks: Iterator[bytes]) -> int:
        # Read the whole stream before taking the lock: a failing stream stores nothing.
        data = b"".join(chunks)
        path = self._path(namespace, key)
        with self._lock:
            self._check_open()
            if path not in self._blobs:
                bisect.insort(self._sorted_paths, path)
            self._blobs[path] = data
            self._mtimes[path] = time.time()
        return len(data)

    def _blob(self, namespace: str, key: str) -> bytes:
        path = self._path(namespace, key)
        with self._lock:
            self._check_open()
            data = self._blobs.get(path)
        if data is None:
            raise self._not_found(namespace, key)
        return data

    def _open_reader(self, namespace: str, key: str, start: int, end: int | None) -> BinaryIO:
        data = self._blob(namespace, key)
        stop = self._clip_range(namespace, key, start, end, len(data))
        return io.BytesIO(data[start:stop])

    def _size(self, namespace: str, key: str) -> int:
        return len(self._blob(namespace, key))

    def _delete(self, namespace: str, key: str) -> None:
        path = self._path(namespace, key)
        with self._lock:
            self._check_open()
            if self._blobs.pop(path, None) is not None:
                del self._mtimes[path]
                del self._sorted_paths[bisect.bisect_left(self._sorted_paths, path)]

    def _list_keys(self, namespace: str, prefix: str) -> Iterator[str]:
        return (blob.key for blob in self._list_blobs(namespace, prefix))

    def _list_blobs(self, namespace: str, prefix: str) -> Iterator[BlobInfo]:
        base = f"{self._namespace_path(namespace)}/"
        wanted = base + prefix
        after, inclusive = wanted, True
        while True:
            with self._lock:
                self._check_open()
                find = bisect.bisect_left if inclusive else bisect.bisect_right
                first = find(self._sorted_paths, after)
                paths = self._sorted_paths[first : first + LIST_PAGE]
                page = [(p, len(self._blobs[p]), self._mtimes[p]) for p in paths]
            for path, size, mtime in page:
                if not path.startswith(wanted):
                    return
                yield BlobInfo(path[len(base) :], size, mtime)
            if len(page) < LIST_PAGE:
                return
            after, inclusive = page[-1][0], False

    def close(self) -> None:
        """Drop every blob; later calls raise ClosedError. Closing twice is fine."""
        with self._lock:
            self._closed = True
            self._blobs.clear()
            self._mtimes.clear()
            self._sorted_paths.clear()
