"""Reading range and metarange files through bounded LRU caches of decoded files.

Files are immutable once written (their id is the hash of their bytes), so a
decoded file can be cached by (storage namespace, id) forever and shared by any
number of threads without copying; the caches only bound memory. The namespace
is part of the cache key so that a file is never served for a namespace that
does not hold it. `CommittedStats` counts the I/O so tests can tell a range
passed by reference from one that was opened.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, Literal, NamedTuple, TypeVar

from kvlake.blockstore.store import BlockStore
from kvlake.errors import BlobNotFoundError, MetarangeNotFoundError, RangeNotFoundError
from kvlake.graveler.committed.columns import RangeColumns
from kvlake.graveler.committed.parquet import decode_metarange, decode_range
from kvlake.graveler.committed.records import RangeInfo, file_key

_V = TypeVar("_V")

METARANGE_CACHE_SIZE = 16
"""Decoded metaranges kept: one per commit being read is plenty."""

Counter = Literal[
    "range_reads",
    "range_cache_hits",
    "metarange_reads",
    "files_written",
    "files_already_present",
    "ranges_reused",
]


class CommittedStats:
    """Counters of committed-data work since the manager was made. Thread-safe.

    range_reads: range files fetched and decoded (cache misses).
    range_cache_hits: range lookups served from the cache.
    metarange_reads: metarange files fetched and decoded.
    files_written: range and metarange files put into the blockstore.
    files_already_present: files not put because that id was already stored.
    ranges_reused: ranges passed by reference into a new metarange, unopened.
    """

    __slots__ = (
        "_lock",
        "files_already_present",
        "files_written",
        "metarange_reads",
        "range_cache_hits",
        "range_reads",
        "ranges_reused",
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.range_reads = 0
        self.range_cache_hits = 0
        self.metarange_reads = 0
        self.files_written = 0
        self.files_already_present = 0
        self.ranges_reused = 0

    def count(self, counter: Counter, n: int = 1) -> None:
        """Add `n` to one counter."""
        with self._lock:
            setattr(self, counter, getattr(self, counter) + n)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)}" for name in self.__slots__[1:])
        return f"CommittedStats({fields})"


class DecodedRange(NamedTuple):
    """A range file as parallel column lists, for bisecting by key."""

    keys: list[bytes]
    identities: list[bytes]
    datas: list[bytes]


class Metarange(NamedTuple):
    """A metarange file: its ranges in key order and their max keys, for bisecting."""

    ranges: list[RangeInfo]
    max_keys: list[bytes]

    def find(self, key: bytes) -> int:
        """The index of the first range whose max key is >= `key` (may be len(ranges))."""
        return bisect_left(self.max_keys, key)


RANGE_CACHE_BYTES = 256 << 20
"""Memory the decoded-range cache may hold: all ranges of a ~1.5M-entry commit."""

COLUMNS_CACHE_BYTES = 64 << 20
"""Memory the key-and-identity cache may hold: the ranges a diff or merge is walking."""

_OBJECT_OVERHEAD = 33
"""Bytes CPython spends on a bytes object beyond its contents."""


def decoded_size(decoded: DecodedRange) -> int:
    """Roughly how much memory a decoded range holds."""
    columns = (decoded.keys, decoded.identities, decoded.datas)
    return sum(sum(map(len, column)) + (_OBJECT_OVERHEAD + 8) * len(column) for column in columns)


class _Lru(Generic[_V]):
    """A thread-safe LRU map bounded by count and by weight. Loads run outside the lock.

    A race may decode a file twice; both results are equal, so either may stay.
    """

    def __init__(
        self, capacity: int, *, max_weight: int = 0, weigh: Callable[[_V], int] | None = None
    ) -> None:
        self._capacity = capacity
        self._max_weight = max_weight
        self._weigh = weigh
        self._weights: dict[Hashable, int] = {}
        self._weight = 0
        self._items: OrderedDict[Hashable, _V] = OrderedDict()
        self._lock = threading.Lock()

    def lookup(self, key: Hashable, load: Callable[[], _V], *, keep: bool) -> tuple[_V, bool]:
        """Return the cached value and True, or load it (caching it if `keep`) and False."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key], True
        value = load()
        if keep and self._capacity > 0:
            weight = self._weigh(value) if self._weigh else 0
            with self._lock:
                if key not in self._items:
                    self._weights[key] = weight
                    self._weight += weight
                self._items[key] = value
                self._items.move_to_end(key)
                while len(self._items) > self._capacity or (
                    self._max_weight and self._weight > self._max_weight and len(self._items) > 1
                ):
                    evicted, _ = self._items.popitem(last=False)
                    self._weight -= self._weights.pop(evicted)
        return value, False


class CommittedReader:
    """Fetches and decodes range and metarange files, caching the decoded forms."""

    def __init__(
        self,
        blockstore: BlockStore,
        range_cache_size: int,
        stats: CommittedStats,
        *,
        range_cache_bytes: int = RANGE_CACHE_BYTES,
    ) -> None:
        self._blockstore = blockstore
        self._stats = stats
        self._ranges: _Lru[DecodedRange] = _Lru(
            range_cache_size, max_weight=range_cache_bytes, weigh=decoded_size
        )
        self._columns: _Lru[RangeColumns] = _Lru(
            range_cache_size, max_weight=COLUMNS_CACHE_BYTES, weigh=_columns_size
        )
        self._metaranges: _Lru[Metarange] = _Lru(METARANGE_CACHE_SIZE)

    def metarange(self, namespace: str, metarange_id: str) -> Metarange:
        """Return a decoded metarange.

        Raises:
            MetarangeNotFoundError: no metarange file with that id in the namespace.
        """
        key = file_key("metarange", metarange_id)

        def load() -> Metarange:
            data = self._fetch(namespace, key, f"metarange {metarange_id}", MetarangeNotFoundError)
            ranges = decode_metarange(data, metarange_id)
            self._stats.count("metarange_reads")
            return Metarange(ranges, [r.max_key for r in ranges])

        metarange, _ = self._metaranges.lookup((namespace, metarange_id), load, keep=True)
        return metarange

    def range(self, namespace: str, range_id: str, *, keep: bool = True) -> DecodedRange:
        """Return a decoded range; `keep=False` reads it without evicting hotter ranges.

        Raises:
            RangeNotFoundError: no range file with that id in the namespace.
        """
        return self._range(self._ranges, _decode_range, namespace, range_id, keep=keep)

    def range_columns(self, namespace: str, range_id: str, *, keep: bool = True) -> RangeColumns:
        """Return a range's key and identity columns (data on demand), cached apart from `range`.

        Comparisons walk many ranges once each; their own cache keeps them from
        evicting the decoded ranges that point reads keep hot.

        Raises:
            RangeNotFoundError: no range file with that id in the namespace.
        """
        return self._range(self._columns, RangeColumns, namespace, range_id, keep=keep)

    def _range(
        self,
        cache: _Lru[_V],
        decode: Callable[[str, bytes], _V],
        namespace: str,
        range_id: str,
        *,
        keep: bool,
    ) -> _V:
        key = file_key("range", range_id)

        def load() -> _V:
            data = self._fetch(namespace, key, f"range {range_id}", RangeNotFoundError)
            decoded = decode(range_id, data)
            self._stats.count("range_reads")
            return decoded

        decoded, hit = cache.lookup((namespace, range_id), load, keep=keep)
        if hit:
            self._stats.count("range_cache_hits")
        return decoded

    def _fetch(
        self,
        namespace: str,
        key: str,
        what: str,
        error: type[MetarangeNotFoundError | RangeNotFoundError],
    ) -> bytes:
        try:
            return self._blockstore.get(namespace, key)
        except BlobNotFoundError as exc:
            raise error(
                f"{what} does not exist in storage namespace {namespace!r}; "
                f"use an id returned by write_metarange or apply on this namespace"
            ) from exc


def _columns_size(columns: RangeColumns) -> int:
    return columns.nbytes


def _decode_range(range_id: str, data: bytes) -> DecodedRange:
    return DecodedRange(*decode_range(data, range_id))
