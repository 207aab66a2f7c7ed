"""Previews read a bounded number of bytes, however large the object (no server needed)."""

from __future__ import annotations

import io
import os

import pyarrow as pa
import pyarrow.parquet as pq

from kvlake.ui import previews


class Blob:
    """An object's bytes behind ranged reads, counting what is read."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.read_bytes = 0

    def read(self, start: int, end: int) -> bytes:
        self.read_bytes += end - start
        return self.data[start:end]


def test_text_reads_only_its_first_bytes() -> None:
    blob = Blob(b"line\n" * 1_000_000)
    shown = previews.preview("big.log", "text/plain", len(blob.data), blob.read)
    assert shown.kind == "text" and shown.truncated
    assert blob.read_bytes == previews.TEXT_BYTES


def test_a_parquet_row_group_over_the_budget_is_not_read() -> None:
    random = os.urandom(previews.PARQUET_BYTES + 1024 * 1024)
    table = pa.table({"blob": [random]})
    out = io.BytesIO()
    pq.write_table(table, out, compression="none")
    blob = Blob(out.getvalue())
    shown = previews.preview("huge.parquet", "", len(blob.data), blob.read)
    assert shown.kind == "error" and "would read over" in shown.message
    assert blob.read_bytes <= previews.PARQUET_BYTES


def test_a_parquet_preview_reads_footer_and_first_rows_only() -> None:
    table = pa.table({"id": list(range(200_000))})
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=10_000)
    blob = Blob(out.getvalue())
    shown = previews.preview("t.parquet", "", len(blob.data), blob.read)
    assert shown.kind == "parquet" and len(shown.rows) == previews.ROWS
    assert blob.read_bytes < len(blob.data) / 2
