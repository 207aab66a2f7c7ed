"""`spark.read.format("kvlake")`: any ref of a lake, or a diff of two, as a DataFrame.

    spark.read.format("kvlake").load("lakefs://lake/main/tables/")
    spark.read.format("kvlake").option("diff_against", "v1").load("lakefs://lake/main")
    spark.read.format("kvlake").option("format", "parquet").load("lakefs://lake/v1/events/")

The driver resolves the ref once and cuts it at its committed ranges (graveler
spans); each Spark task reads one span: its range file from the blockstore and
the staged entries over the same keys from the KV store, so a 10M-object commit
reads in parallel and a prefix prunes ranges. Tasks open the lake from the
`kvlake.settings` option (the JSON `read_lake` passes), or else from their own
KVLAKE_* environment (on a cluster: `spark.executorEnv.KVLAKE_CONFIG`).

With a `format` option the rows of the dataset's files are read instead
(kvlake/pipelines/datasets.py plans, dataset_reader.py reads): `schema()` lists
the files once and the plan travels with the pickled source to `reader()`, so
the schema and the rows come from one snapshot of the ref.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import msgspec
import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.types import StructType

from kvlake.catalog.records import from_value, physical_address
from kvlake.errors import InvalidInputError
from kvlake.graveler import Span, SpanChange, Value
from kvlake.operations import parse_ref_path
from kvlake.pipelines.arrow import record_batches, spark_schema
from kvlake.pipelines.dataset_reader import DatasetReader
from kvlake.pipelines.dataset_writer import open_writer
from kvlake.pipelines.datasets import DatasetPlan, plan_read
from kvlake.pipelines.executors import SETTINGS_OPTION, task_lake
from kvlake.pipelines.stream_writer import open_stream_writer

BATCH_ROWS: Final = 8192

OBJECTS: Final = pa.schema(
    [
        ("path", pa.string()),
        ("physical_address", pa.string()),
        ("size", pa.int64()),
        ("checksum", pa.string()),
        ("mtime", pa.timestamp("us", tz="UTC")),
        ("content_type", pa.string()),
        ("metadata", pa.map_(pa.string(), pa.string())),
    ]
)
CHANGES: Final = pa.schema(
    [
        ("path", pa.string()),
        ("type", pa.string()),
        ("old_physical_address", pa.string()),
        ("new_physical_address", pa.string()),
        ("size", pa.int64()),
    ]
)


class SpanPartition(InputPartition):
    """One task's span, shipped encoded (ids and keys only)."""

    def __init__(self, span: Span) -> None:
        super().__init__(msgspec.msgpack.encode(span))


class LakeDataSource(DataSource):
    """The `kvlake` format: objects of a ref, or with `diff_against`, its changes."""

    _plan: DatasetPlan | None = None

    @classmethod
    def name(cls) -> str:
        return "kvlake"

    def schema(self) -> str | StructType:
        if "format" not in self.options:
            return spark_schema(CHANGES if "diff_against" in self.options else OBJECTS)
        self._plan = self._plan_read()
        return _project(self._plan.spark_schema(), self.options.get("columns"))

    def reader(self, schema: Any) -> DataSourceReader:
        if "format" not in self.options:
            return LakeReader(dict(self.options))
        plan = self._plan if self._plan is not None else self._plan_read()
        settings = self.options.get(SETTINGS_OPTION, "")
        return DatasetReader(plan, schema, dict(self.options), settings)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return open_writer(
            dict(self.options),
            schema,
            overwrite=overwrite,
            settings=self.options.get(SETTINGS_OPTION, ""),
        )

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        return open_stream_writer(
            dict(self.options),
            schema,
            overwrite=overwrite,
            settings=self.options.get(SETTINGS_OPTION, ""),
        )

    def _plan_read(self) -> DatasetPlan:
        lake = task_lake(self.options.get(SETTINGS_OPTION, ""))
        return plan_read(lake, self.options.get("path", ""), dict(self.options))


class LakeReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        uri = options.get("path", "")
        self._uri = parse_ref_path(uri)
        self._against = options.get("diff_against")
        self._settings = options.get(SETTINGS_OPTION, "")

    def partitions(self) -> list[SpanPartition]:
        graveler = task_lake(self._settings).graveler
        repository = graveler.get_repository(self._uri.repository)
        spans = graveler.spans.split(
            repository, self._uri.branch, prefix=self._uri.prefix.encode(), against=self._against
        )
        return [SpanPartition(span) for span in spans]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        span = msgspec.msgpack.decode(partition.value, type=Span)
        graveler = task_lake(self._settings).graveler
        namespace = graveler.get_repository(span.repository).storage_namespace
        if span.against is None:
            rows = (_object_row(namespace, key, value) for key, value in graveler.spans.read(span))
            yield from record_batches(rows, OBJECTS, size=BATCH_ROWS)
        else:
            changes = (_change_row(namespace, c) for c in graveler.spans.diff(span))
            yield from record_batches(changes, CHANGES, size=BATCH_ROWS)


def _object_row(namespace: str, key: bytes, value: Value) -> tuple[object, ...]:
    """A row of OBJECTS."""
    stat = from_value(key.decode(), value)
    return (
        stat.path,
        physical_address(namespace, stat.address),
        stat.size,
        stat.checksum,
        int(stat.mtime * 1_000_000),
        stat.content_type,
        list(stat.metadata.items()),
    )


def _change_row(namespace: str, change: SpanChange) -> tuple[object, ...]:
    """A row of CHANGES."""
    path = change.key.decode()
    old = from_value(path, change.old) if change.old is not None else None
    new = from_value(path, change.new) if change.new is not None else None
    kind = "added" if old is None else "removed" if new is None else "changed"
    return (
        path,
        kind,
        physical_address(namespace, old.address) if old else None,
        physical_address(namespace, new.address) if new else None,
        new.size if new is not None else old.size if old is not None else 0,
    )


def _project(schema: StructType, columns: str | None) -> StructType:
    """The read's schema narrowed to `columns` (comma-separated), in that order: tasks then
    read only those columns' bytes. Python data sources get no projection from Spark.

    Raises:
        InvalidInputError: a named column is not in the dataset.
    """
    if not columns:
        return schema
    names = [name.strip() for name in columns.split(",") if name.strip()]
    unknown = [name for name in names if name not in schema.fieldNames()]
    if unknown:
        raise InvalidInputError(
            f"option columns names {', '.join(map(repr, unknown))}, not in the dataset; its"
            f" columns are {', '.join(schema.fieldNames())}"
        )
    return StructType([schema[name] for name in names])
