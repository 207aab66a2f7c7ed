"""The rows of a planned dataset read (kvlake/pipelines/datasets.py) as Spark tasks.

`pushFilters` keeps the filters on partition columns to prune files at
planning, and hands every filter back so Spark still applies it to the rows
(pruning may only skip files that cannot match). Each task opens its files'
blobs straight from the blockstore, reads only the columns the read's schema
names, and adds the partition columns from the file's folders.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec
import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from kvlake.errors import BlobNotFoundError, BlobReplacedError, InvalidInputError, StaleReadError
from kvlake.pipelines.blobfile import open_blob_file
from kvlake.pipelines.datasets import (
    MAX_PARTITION_BYTES,
    DataFile,
    DatasetPlan,
    group_files,
    split_bytes,
)
from kvlake.pipelines.executors import task_lake
from kvlake.pipelines.formats import BATCH_ROWS, conform, file_format
from kvlake.pipelines.partitions import PartitionValue, may_match, parse_value


class FilesPartition(InputPartition):
    """One task's files, shipped encoded."""

    def __init__(self, files: Sequence[DataFile]) -> None:
        super().__init__(msgspec.msgpack.encode(list(files)))


class DatasetReader(DataSourceReader):
    """Reads a planned dataset: prunes by partition filters, one task per group of files."""

    def __init__(
        self, plan: DatasetPlan, schema: StructType, options: Mapping[str, str], settings: str
    ) -> None:
        self._plan = plan
        self._schema = schema.json()
        self._options = dict(options)
        self._settings = settings
        self._filters: list[Any] = []
        self._max_bytes = int(options.get("maxpartitionbytes", MAX_PARTITION_BYTES))
        # Spark's default parallelism is the cores of a local master; the planner runs on
        # the driver, which has no SparkContext here: its cores, or the option.
        self._parallelism = int(options.get("minpartitions", os.cpu_count() or 1))

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:  # noqa: N802 - Spark's name
        self._filters = list(filters)  # may_match ignores what is not on a partition column
        return filters  # Spark applies every filter to the rows: pruning only skips files

    def partitions(self) -> list[InputPartition]:
        files = [file for file in self._plan.files if self._may_match(file)]
        size = split_bytes(files, max_bytes=self._max_bytes, parallelism=self._parallelism)
        return [FilesPartition(group) for group in group_files(files, max_bytes=size)]

    def _may_match(self, file: DataFile) -> bool:
        values = self._values(file)
        return all(may_match(condition, values) for condition in self._filters)

    def _values(self, file: DataFile) -> dict[str, PartitionValue]:
        return {
            name: parse_value(text, kind)
            for (name, kind), text in zip(self._plan.partitions, file.partition, strict=True)
        }

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        files = msgspec.msgpack.decode(partition.value, type=list[DataFile])
        schema = StructType.fromJson(msgspec.json.decode(self._schema))
        target = to_arrow_schema(schema, timezone="UTC")
        partition_names = {name for name, _ in self._plan.partitions}
        data = pa.schema([field for field in target if field.name not in partition_names])
        lake = task_lake(self._settings)
        fmt = file_format(self._plan.format)
        for file in files:
            values = self._values(file)
            try:
                blob = open_blob_file(
                    lake.blockstore, file.namespace, file.key, file.size, if_match=file.etag
                )
                with blob as f:
                    for table in fmt.read(f, data, self._options):
                        rows = conform(table, data, source=file.path)
                        yield from _with_partitions(rows, target, values).to_batches(BATCH_ROWS)
            except BlobNotFoundError:
                raise StaleReadError(
                    f"{file.path} of {self._plan.uri} is gone since the read was planned (an"
                    " uncommitted object overwritten or deleted, then its blob collected); read"
                    " again, or read a commit id for a stable snapshot"
                ) from None
            except BlobReplacedError as exc:
                raise BlobReplacedError(
                    f"{file.path} of {self._plan.uri} cannot be read: {exc}"
                ) from None
            except InvalidInputError as exc:
                raise InvalidInputError(f"{file.path}: {exc}") from exc


def _with_partitions(
    table: pa.Table, target: pa.Schema, values: Mapping[str, PartitionValue]
) -> pa.Table:
    """`table`'s columns and the file's partition values, in `target`'s order."""
    columns = []
    for field in target:
        if field.name in values:
            value = pa.scalar(values[field.name], type=field.type)
            columns.append(pa.repeat(value, table.num_rows))
        else:
            columns.append(table.column(field.name))
    return pa.Table.from_arrays(columns, schema=target)
