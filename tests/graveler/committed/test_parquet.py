"""Range and metarange files are plain Parquet that Spark (here: pyarrow) reads directly."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import MetarangeNotFoundError, RangeNotFoundError
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.committed.parquet import decode_metarange, decode_range

from .helpers import entries


def read(blockstore: BlockStore, namespace: str, file_id: str) -> pq.ParquetFile:
    return pq.ParquetFile(io.BytesIO(blockstore.get(namespace, f"_lakefs/{file_id}")))


def test_a_range_file_has_plain_binary_columns(
    manager: CommittedManager, blockstore: BlockStore, namespace: str
) -> None:
    written = entries(100)
    metarange_id = manager.write_metarange(namespace, written)
    info = manager.ranges(namespace, metarange_id)[0]
    file = read(blockstore, namespace, info.id)
    table = file.read()

    assert [(f.name, f.type) for f in table.schema] == [
        ("key", pa.binary()),
        ("identity", pa.binary()),
        ("data", pa.binary()),
    ]
    assert file.metadata.num_row_groups == 1
    assert file.metadata.metadata is None  # no schema blob, no timestamps: same rows, same bytes
    rows = list(zip(*(table.column(i).to_pylist() for i in range(3)), strict=True))
    assert rows == [(k, v.identity, v.data) for k, v in written[: info.count]]


def test_a_metarange_file_lists_its_ranges(
    manager: CommittedManager, blockstore: BlockStore, namespace: str
) -> None:
    metarange_id = manager.write_metarange(namespace, entries(100))
    table = read(blockstore, namespace, metarange_id).read()

    assert [(f.name, f.type) for f in table.schema] == [
        ("id", pa.string()),
        ("min_key", pa.binary()),
        ("max_key", pa.binary()),
        ("count", pa.int64()),
        ("size", pa.int64()),
    ]
    assert table.to_pylist() == [
        {"id": r.id, "min_key": r.min_key, "max_key": r.max_key, "count": r.count, "size": r.size}
        for r in manager.ranges(namespace, metarange_id)
    ]


def test_bytes_that_are_not_parquet_are_refused_by_name() -> None:
    with pytest.raises(RangeNotFoundError, match="range abc is not a readable Parquet file"):
        decode_range(b"not parquet", "abc")
    with pytest.raises(MetarangeNotFoundError, match="metarange abc is not a readable"):
        decode_metarange(b"PAR1", "abc")
