"""Rows to Arrow record batches, a bounded number at a time: how pipeline tasks emit output.

A task's output is spelled once, as the Arrow schema of the batches it yields;
`spark_schema` gives Spark (`mapInArrow`, a data source's `schema`) the same schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Final

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

BATCH_ROWS: Final = 65_536


def spark_schema(schema: pa.Schema) -> StructType:
    """Spark's form of an Arrow schema (a timezone-aware timestamp is Spark's `timestamp`).

    Imports PySpark: call it where a job is built, never at import time.
    """
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


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
