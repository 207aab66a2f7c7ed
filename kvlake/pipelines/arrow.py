"""Rows to Arrow record batches, a bounded number at a time: how pipeline tasks emit output."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Final

import pyarrow as pa

BATCH_ROWS: Final = 65_536


def record_batches(
    rows: Iterable[Sequence[object]], schema: pa.Schema, *, size: int = BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """Group rows (values in the schema's column order) into batches of `size` rows.

    A task holds one batch, however many rows it yields.
    """
    columns: list[list[object]] = [[] for _ in schema]
    count = 0
    for row in rows:
        for column, value in zip(columns, row, strict=True):
            column.append(value)
        count += 1
        if count == size:
            yield pa.record_batch(columns, schema=schema)
            columns, count = [[] for _ in schema], 0
    if count:
        yield pa.record_batch(columns, schema=schema)
