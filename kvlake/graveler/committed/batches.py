"""Sorted changes as columns: the unit a big commit moves from staging into range files.

A commit of millions of staged entries spent most of its time in Python steps per
entry: a tuple and a `Value` made per row, split into lists, then turned into Arrow
arrays again in the range writer's put threads. A `ChangeBatch` holds a page of
changes as the range writer stores them: the keys as a list (they are hashed for the
chunking rule and compared with range bounds), the identity and data columns as
Arrow arrays, null where a change deletes its key. Slices share the arrays, so the
rows of a batch reach the Parquet encoder without another Python step each. With
parquet.py and columns.py, the only modules that import pyarrow.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import islice
from operator import attrgetter, is_, itemgetter
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from kvlake.graveler.records import Value, decode_value

BATCH: Final = 16384
"""Changes per batch when a stream of single changes is cut into batches."""
_PAIR: Final = 0x92
"""msgpack's header of an array of two: how `records.encode` starts a `Value`
(array_like: `[identity, data]`)."""
_BIN8: Final = 0xC4
_LENGTH_BYTES: Final = {_BIN8: 1, 0xC5: 2, 0xC6: 4}
"""msgpack's bin 8, 16 and 32 headers: how many big-endian bytes of length follow."""

_first, _second = itemgetter(0), itemgetter(1)
_is_none = partial(is_, None)
_identity, _data = attrgetter("identity"), attrgetter("data")


class ChangeBatch:
    """Changes sorted strictly ascending by key (the writer checks), as columns.

    Immutable once built; any number of threads may read one.
    """

    __slots__ = ("_key_array", "datas", "deletions", "identities", "keys")

    def __init__(self, keys: list[bytes], identities: Any, datas: Any) -> None:
        """A batch of `keys` with their identity and data arrays (null: delete the key)."""
        self.keys = keys
        self.identities = identities
        self.datas = datas
        self.deletions: int = identities.null_count
        self._key_array: Any = None

    @classmethod
    def from_values(
        cls, keys: list[bytes], values: list[Value | None], *, deletions: bool | None = None
    ) -> ChangeBatch:
        """A batch of keys and their new values (None deletes the key).

        `deletions` says whether any value is None, if the caller knows (else it is
        looked for: `None in values` would compare every `Value` with None, slowly).
        """
        if deletions is None:
            deletions = any(map(_is_none, values))
        if deletions:
            identities = [None if v is None else v.identity for v in values]
            datas = [None if v is None else v.data for v in values]
        else:
            identities = list(map(_identity, values))
            datas = list(map(_data, values))
        return cls(keys, pa.array(identities, type=pa.binary()), pa.array(datas, type=pa.binary()))

    @classmethod
    def from_encoded(cls, keys: list[bytes], raws: list[bytes]) -> ChangeBatch:
        """A batch of keys and their values as staging holds them: `records.encode` of a
        `Value`, or b"" (a tombstone) to delete the key.

        A page of a commit: when the page's values share their identity's length (a
        hash's) and have no tombstone, Arrow kernels cut the identity and data columns
        out of the encoded bytes, with no Python step per value; any other page is
        decoded a `Value` at a time, as before (tests/graveler/committed/test_batches.py
        pins that both give the same batch).

        Raises:
            msgspec.DecodeError: a value is not an encoded `Value`.
        """
        deletions = b"" in raws
        columns = None if deletions or not raws else _split_encoded(raws)
        if columns is not None:
            return cls(keys, *columns)
        if deletions:
            values = [decode_value(raw) if raw else None for raw in raws]
        else:
            values = list(map(decode_value, raws))
        return cls.from_values(keys, values, deletions=deletions)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def key_array(self) -> Any:
        """The keys as an Arrow array, made on first use."""
        if self._key_array is None:
            self._key_array = pa.array(self.keys, type=pa.binary())
        return self._key_array

    def slice(self, start: int, stop: int) -> ChangeBatch:
        """Rows [start, stop), sharing this batch's arrays."""
        if start == 0 and stop >= len(self.keys):
            return self
        length = stop - start
        part = ChangeBatch(
            self.keys[start:stop],
            self.identities.slice(start, length),
            self.datas.slice(start, length),
        )
        if self._key_array is not None:
            part._key_array = self._key_array.slice(start, length)
        return part

    def present(self) -> ChangeBatch:
        """Only the rows that put a value (deletions left out)."""
        if not self.deletions:
            return self
        kept = pc.is_valid(self.identities)
        keys = [key for key, keep in zip(self.keys, kept.to_pylist(), strict=True) if keep]
        part = ChangeBatch(keys, self.identities.filter(kept), self.datas.filter(kept))
        if self._key_array is not None:
            part._key_array = self._key_array.filter(kept)
        return part

    def ascending(self) -> bool:
        """Whether the keys are strictly ascending, compared over the key array in C (as
        Python compares bytes: byte by byte, then the shorter first)."""
        keys = self.key_array
        if len(keys) < 2:
            return True
        following = pc.less(keys.slice(0, len(keys) - 1), keys.slice(1))
        return bool(pc.all(following).as_py())

    def arrays(self) -> list[Any]:
        """The key, identity and data arrays (for a batch with no deletions)."""
        return [self.key_array, self.identities, self.datas]

    def changes(self) -> list[tuple[bytes, Value | None]]:
        """The rows as single changes, a `Value` (or None) each: for the few that fall
        into a stored range and are merged with its rows."""
        identities = self.identities.to_pylist()
        datas = self.datas.to_pylist()
        return [
            (key, None if identity is None else Value(identity=identity, data=data))
            for key, identity, data in zip(self.keys, identities, datas, strict=True)
        ]


def _split_encoded(raws: list[bytes]) -> tuple[Any, Any] | None:
    """The identity and data columns of encoded `Value`s (none empty), cut with Arrow
    kernels; None unless every value is `[identity, data]` with the first value's
    identity header (a bin 8 of the same length) and a well-formed data header whose
    length is the rest of the value: then nothing was guessed, the values decode to
    exactly these columns."""
    first = raws[0]
    if len(first) < 3 or first[0] != _PAIR or first[1] != _BIN8:
        return None
    encoded = pa.array(raws, type=pa.binary())
    if not isinstance(encoded, pa.Array):  # over 2 GB: Arrow cut it into chunks
        return None
    head = 3 + first[2]  # where the data's bin header starts in every value
    prefix = pa.scalar(first[:3], type=pa.binary())
    lengths = pc.binary_length(encoded)
    shortest = pc.min(lengths).as_py()
    if shortest < head + 2 or not pc.all(pc.equal(pc.binary_slice(encoded, 0, 3), prefix)).as_py():
        return None
    # The encoded bytes as one uint8 array, read at each value's start plus a position.
    _, offsets, data = encoded.buffers()
    octets = pa.Array.from_buffers(pa.uint8(), data.size, [None, data])
    starts = pa.Array.from_buffers(pa.int32(), len(raws), [None, offsets], offset=encoded.offset)

    def octet(position: int) -> Any:
        return pc.take(octets, pc.add(starts, position)).cast(pa.int64())

    headers = octet(head)
    kinds = pc.unique(headers).to_pylist()
    if not set(kinds) <= _LENGTH_BYTES.keys():
        return None
    if shortest < head + 1 + max(_LENGTH_BYTES[kind] for kind in kinds):
        return None  # a short value with a smaller header beside longer ones: not worth it
    end = pc.max(lengths).as_py()  # (binary_slice without a stop fails in pyarrow 26)
    declared: Any = None
    datas: Any = None
    for kind in kinds:
        width = _LENGTH_BYTES[kind]
        length: Any = octet(head + 1)
        for position in range(head + 2, head + 1 + width):
            length = pc.add(pc.multiply(length, 256), octet(position))
        sliced = pc.binary_slice(encoded, head + 1 + width, end)
        if declared is None:
            declared, datas = length, sliced
        else:
            mine = pc.equal(headers, kind)
            declared, datas = pc.if_else(mine, length, declared), pc.if_else(mine, sliced, datas)
    if not pc.all(pc.equal(declared, pc.binary_length(datas))).as_py():
        return None
    return pc.binary_slice(encoded, 3, head), datas


def batched(changes: Iterable[tuple[bytes, Value | None]]) -> Iterator[ChangeBatch]:
    """Single changes (sorted by key) as batches of at most `BATCH`."""
    pending = iter(changes)
    while chunk := list(islice(pending, BATCH)):
        yield ChangeBatch.from_values(list(map(_first, chunk)), list(map(_second, chunk)))


class BatchCursor:
    """Reads sorted batches front to back, by key bound: how a commit walks its changes
    beside the base's ranges, a bisection per range instead of a comparison per change."""

    def __init__(self, batches: Iterable[ChangeBatch]) -> None:
        self._pending = iter(batches)
        self._batch: ChangeBatch | None = None
        self._position = 0
        self._advance()

    def _advance(self) -> None:
        """Move to the next batch with rows left, or to the end."""
        while self._batch is None or self._position >= len(self._batch.keys):
            self._batch = next(self._pending, None)
            self._position = 0
            if self._batch is None:
                return

    def peek(self) -> bytes | None:
        """The next change's key, or None when none is left."""
        return None if self._batch is None else self._batch.keys[self._position]

    def below(self, bound: bytes, *, inclusive: bool) -> Iterator[ChangeBatch]:
        """Take the changes with key < `bound` (<= with `inclusive`), as batch slices."""
        find = bisect_right if inclusive else bisect_left
        while self._batch is not None:
            keys = self._batch.keys
            # The batch's keys are checked ascending by the writer; a bisection over
            # unsorted keys would only cut the batch elsewhere, never lose a row.
            stop = find(keys, bound, self._position)
            if stop == self._position:
                return
            yield self._batch.slice(self._position, stop)
            self._position = stop
            if stop < len(keys):
                return
            self._advance()

    def rest(self) -> Iterator[ChangeBatch]:
        """Take every change left."""
        while self._batch is not None:
            yield self._batch.slice(self._position, len(self._batch.keys))
            self._position = len(self._batch.keys)
            self._advance()
