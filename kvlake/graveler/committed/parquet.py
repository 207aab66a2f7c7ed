"""The Parquet format of range and metarange files, read whole or a few columns at a time.

Spark jobs read these files directly, so the columns are plain: a range has
`key`, `identity` and `data` (binary), a metarange has `id` (string), `min_key`,
`max_key` (binary), `count` and `size` (int64). Files are content-addressed, so
the same rows must always give the same bytes: every writer option is fixed
here, nothing time- or host-dependent is written, and one row group holds the
whole file. (The bytes do name the pyarrow version in `created_by`; upgrading it
only makes new files share less with old ones.) With columns.py, the only
module that imports pyarrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from kvlake.errors import MetarangeNotFoundError, RangeNotFoundError
from kvlake.graveler.committed.records import RangeInfo

RANGE_SCHEMA: Final = pa.schema(
    [
        pa.field("key", pa.binary(), nullable=False),
        pa.field("identity", pa.binary(), nullable=False),
        pa.field("data", pa.binary(), nullable=False),
    ]
)

METARANGE_SCHEMA: Final = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("min_key", pa.binary(), nullable=False),
        pa.field("max_key", pa.binary(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
    ]
)

# Fixed so that equal rows give equal bytes. Identities and data are mostly
# unique, so dictionaries would only be built and thrown away; zstd level 1 is
# the fastest codec that Spark reads and that halves the files. Statistics on
# `key` let Spark prune ranges; on the other columns they would be noise.
_COMMON_OPTIONS: Final[dict[str, Any]] = {
    "version": "2.6",
    "data_page_version": "1.0",
    "use_dictionary": False,
    "compression": "zstd",
    "compression_level": 1,
    "store_schema": False,
    "write_page_index": False,
}
_RANGE_OPTIONS: Final[dict[str, Any]] = {**_COMMON_OPTIONS, "write_statistics": ["key"]}
_METARANGE_OPTIONS: Final[dict[str, Any]] = {**_COMMON_OPTIONS, "write_statistics": False}


RangeColumn = Literal["key", "identity", "data"]
"""The name of a column of a range file."""


def encode_range(keys: list[bytes], identities: list[bytes], datas: list[bytes]) -> bytes:
    """Encode sorted entries, given column by column, as the bytes of a range file."""
    return encode_range_pieces([(keys, identities, datas)])


def encode_range_pieces(pieces: Sequence[Sequence[Any]]) -> bytes:
    """Encode sorted entries, given as consecutive pieces, as the bytes of a range file.

    A piece is its key, identity and data columns, each a list of bytes or an
    Arrow binary array (a slice of a decoded range, say). The bytes depend on
    the rows alone, not on how they were cut into pieces.
    """
    columns = [
        pa.chunked_array(
            [pa.array(c, type=pa.binary()) if isinstance(c, list) else c for c in chunks],
            type=pa.binary(),
        )
        for chunks in zip(*pieces, strict=True)
    ]
    # One contiguous chunk per column: the writer cuts pages per chunk, so the
    # same rows in other chunks could give other bytes, and so another id.
    table = pa.Table.from_arrays(columns, schema=RANGE_SCHEMA).combine_chunks()
    return _write(table, _RANGE_OPTIONS)


def decode_range(data: bytes, range_id: str) -> tuple[list[bytes], list[bytes], list[bytes]]:
    """Decode a range file into its key, identity and data columns.

    Raises:
        RangeNotFoundError: the file is not a readable range file.
    """
    table = _read(data, RANGE_SCHEMA, f"range {range_id}", RangeNotFoundError)
    keys: list[bytes] = table.column(0).to_pylist()
    identities: list[bytes] = table.column(1).to_pylist()
    datas: list[bytes] = table.column(2).to_pylist()
    return keys, identities, datas


def decode_range_columns(data: bytes, range_id: str, names: Sequence[RangeColumn]) -> list[Any]:
    """Decode only the named columns of a range file, as contiguous Arrow binary arrays.

    Columns not asked for are not even decompressed.

    Raises:
        RangeNotFoundError: the file is not a readable range file.
    """
    table = _read(data, RANGE_SCHEMA, f"range {range_id}", RangeNotFoundError, names)
    columns = [table.column(i) for i in range(len(names))]
    # A one-row-group file reads as one chunk; combining would copy it.
    return [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks() for c in columns]


def encode_metarange(ranges: Sequence[RangeInfo]) -> bytes:
    """Encode the ranges of a metarange, in key order, as the bytes of a metarange file."""
    columns = [
        pa.array([r.id for r in ranges], type=pa.string()),
        pa.array([r.min_key for r in ranges], type=pa.binary()),
        pa.array([r.max_key for r in ranges], type=pa.binary()),
        pa.array([r.count for r in ranges], type=pa.int64()),
        pa.array([r.size for r in ranges], type=pa.int64()),
    ]
    return _write(pa.Table.from_arrays(columns, schema=METARANGE_SCHEMA), _METARANGE_OPTIONS)


def decode_metarange(data: bytes, metarange_id: str) -> list[RangeInfo]:
    """Decode a metarange file into its ranges, in key order.

    Raises:
        MetarangeNotFoundError: the file is not a readable metarange file.
    """
    table = _read(data, METARANGE_SCHEMA, f"metarange {metarange_id}", MetarangeNotFoundError)
    rows = zip(*(table.column(i).to_pylist() for i in range(5)), strict=True)
    return [
        RangeInfo(id=id_, min_key=min_key, max_key=max_key, count=count, size=size)
        for id_, min_key, max_key, count, size in rows
    ]


def _write(table: Any, options: dict[str, Any]) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=max(table.num_rows, 1), **options)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _read(
    data: bytes,
    schema: Any,
    what: str,
    error: type[Exception],
    columns: Sequence[str] | None = None,
) -> Any:
    try:
        # ParquetFile skips the datasets layer read_table goes through: 2x faster here.
        file = pq.ParquetFile(pa.BufferReader(data))
        found = file.schema_arrow
        table = None if not found.equals(schema) else file.read(columns=columns, use_threads=False)
    except pa.ArrowException as exc:
        raise error(f"{what} is not a readable Parquet file ({exc}); was the id mistyped?") from exc
    if table is None:
        names = ", ".join(found.names)
        raise error(f"{what} has columns ({names}), not those of a {what.split()[0]} file")
    return table
