"""kvlake/ui/parquet_diff.py: shapes from footers only, and what a corrupt side says."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

from kvlake.ui import parquet_diff
from kvlake.ui.previews import Read


def _reader(data: bytes, reads: list[tuple[int, int]]) -> Read:
    def read(start: int, end: int) -> bytes:
        reads.append((start, end))
        return data[start:end]

    return read


def test_a_shape_reads_the_footer_only() -> None:
    sink = io.BytesIO()
    pq.write_table(pa.table({"n": list(range(200_000))}), sink)
    data = sink.getvalue()
    reads: list[tuple[int, int]] = []
    shape = parquet_diff.shape(len(data), _reader(data, reads))
    assert shape == parquet_diff.Shape({"n": "int64"}, 200_000)
    assert sum(end - start for start, end in reads) < len(data) // 10, reads


def test_a_new_file_has_no_rows_before_and_a_corrupt_side_says_so() -> None:
    added = parquet_diff.change(None, parquet_diff.Shape({"a": "int64"}, 2))
    assert added.added == [("a", "int64")] and added.rows_before is None and added.rows_after == 2
    corrupt = b"PAR1 this is not parquet PAR1"
    shape = parquet_diff.shape(len(corrupt), _reader(corrupt, []))
    assert isinstance(shape, str) and "cannot be read" in shape
    assert "cannot be read" in parquet_diff.change(shape, None).error
