"""Spark tasks writing a dataset's Parquet files straight into a repository's namespace.

A task splits its rows by the `partition_by` columns, writes one Parquet file
per partition value (spooled to local disk past a few MiB, so memory stays
flat), and for each file first appends an `unlinked_upload` record to the
deletion log, then puts the blob (invariant 4: the intent is durable before
the blob can exist). Nothing is staged by a task: the job's commit on the
driver (kvlake/pipelines/dataset_commit.py) makes the files visible in one
step, and marks their addresses shared so the records never delete them. A
task or job that fails leaves only blobs whose records the deletion worker
collects when due.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, BinaryIO, Final, cast
from urllib.parse import quote

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kvlake import ids
from kvlake.catalog import new_address
from kvlake.errors import InvalidInputError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.dataset_commit import (
    WriteTarget,
    WrittenFile,
    commit_job,
    plan_write,
    unlinked_record,
)
from kvlake.pipelines.executors import task_lake
from kvlake.pipelines.formats import SPARK_SCHEMA_KEY, nullable
from kvlake.pipelines.partitions import NULL_VALUE

log = logging.getLogger(__name__)

SPOOL_BYTES: Final = 8 << 20
"""A file being written stays in memory up to this size, then moves to local disk."""
ROW_GROUP_BYTES: Final = 16 << 20
"""Arrow bytes of rows buffered per file before they are written as one row group."""


@dataclass
class WrittenFiles(WriterCommitMessage):
    """A task's files, sent back to the driver's commit (small: a record per file)."""

    files: bytes


def plan_target(options: Mapping[str, str], schema: StructType, settings: str) -> WriteTarget:
    """Where a batch or streaming write of rows of `schema` goes: `plan_write` on the columns
    left once the `partition_by` columns (which become folder names) are taken out.

    Raises:
        InvalidInputError: see `plan_write`; or a `partition_by` column not in the rows.
    """
    spelled = options.get("partition_by", options.get("partitionby", ""))
    partition_by = [name.strip() for name in spelled.split(",") if name.strip()]
    unknown = [name for name in partition_by if name not in schema.fieldNames()]
    if unknown:
        raise InvalidInputError(
            f"partition_by names {', '.join(map(repr, unknown))}, not a column of the rows;"
            f" their columns are {', '.join(schema.fieldNames())}"
        )
    data = StructType([field for field in schema.fields if field.name not in partition_by])
    return plan_write(
        task_lake(settings),
        options.get("path", ""),
        options,
        data_schema_json=nullable(data).json(),
    )


def open_writer(
    options: Mapping[str, str], schema: StructType, *, overwrite: bool, settings: str
) -> DatasetWriter:
    """The job's writer, after every check that can fail before a task starts.

    Raises:
        InvalidInputError: see `plan_target`.
    """
    target = plan_target(options, schema, settings)
    skip = _exists_check(task_lake(settings), target, options.get("save_mode", ""), overwrite)
    job = {"kvlake.job_id": ids.new_uid()}
    for option in ("kvlake.app_id", "kvlake.app_name"):
        if options.get(option):
            job[option.replace("kvlake.", "spark.")] = options[option]
    return DatasetWriter(target, settings, overwrite=overwrite, job=job, skip=skip)


SAVE_MODES: Final = ("append", "error", "errorifexists", "ignore", "overwrite")


def _exists_check(lake: Lake, target: WriteTarget, save_mode: str, overwrite: bool) -> bool:
    """Spark's `error` and `ignore` modes, which Spark refuses to pass a Python data source:
    `option("save_mode", ...)` with Spark's append mode. True: skip the write (ignore).

    Raises:
        InvalidInputError: an unknown mode, or `error` and the path holds objects.
    """
    mode = save_mode.lower() or ("overwrite" if overwrite else "append")
    if mode not in SAVE_MODES:
        raise InvalidInputError(f"save_mode {save_mode!r} is not one of {', '.join(SAVE_MODES)}")
    if mode in ("append", "overwrite"):
        return False
    if not target.holds_objects(lake):
        return False
    if mode == "ignore":
        return True
    raise InvalidInputError(
        f"{target.branch}/{target.root} in repository {target.repository!r} already holds"
        " objects and save_mode is 'error'; write with mode('overwrite') to replace them,"
        " mode('append') to add to them, or to another path"
    )


class DatasetWriter(DataSourceArrowWriter):
    """Writes each task's rows as Parquet files; `commit` and `abort` run on the driver."""

    def __init__(
        self,
        target: WriteTarget,
        settings: str,
        *,
        overwrite: bool,
        job: Mapping[str, str],
        skip: bool = False,
    ) -> None:
        self._skip = skip
        self._target = target
        self._settings = settings
        self._overwrite = overwrite
        self._job = dict(job)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Publish every task's files in one step (a commit, or one staging swap)."""
        if self._skip:
            return
        commit_job(
            task_lake(self._settings),
            self._target,
            decode_files(messages),
            overwrite=self._overwrite,
            job_metadata=self._job,
        )

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing was published; every blob written has its deletion record, due later."""
        log.warning(
            "Spark job %s writing %s/%s failed: its files are left to the deletion log",
            self._job.get("kvlake.job_id", "?"),
            self._target.branch,
            self._target.root,
        )

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenFiles:
        if self._skip:  # save_mode ignore, and the path holds objects: write nothing
            return WrittenFiles(msgspec.msgpack.encode([]))
        return write_files(task_lake(self._settings), self._target, iterator)


def write_files(lake: Lake, target: WriteTarget, batches: Iterator[pa.RecordBatch]) -> WrittenFiles:
    """A task's rows as Parquet blobs in the namespace, one per partition value; nothing staged."""
    repository = lake.graveler.get_repository(target.repository)
    files: dict[tuple[str, ...], _OpenFile] = {}
    written: list[WrittenFile] = []
    try:
        for batch in batches:
            for values, rows in _split(pa.Table.from_batches([batch]), target):
                if values not in files:
                    files[values] = _OpenFile(rows.schema, target.schema_json)
                files[values].write(rows)
        for values, file in files.items():
            written.append(_store(lake, repository, target, values, file))
    finally:
        for file in files.values():
            file.close()
    return WrittenFiles(msgspec.msgpack.encode(written))


class _OpenFile:
    """A Parquet file being written to a spooled temporary file.

    Spark hands a task its rows in Arrow batches of 10,000 rows (fewer per
    partition value); each written alone would be a row group of its own, and
    thousands of tiny row groups make both the write and every later read slow.
    Rows are buffered up to ROW_GROUP_BYTES and written as one row group.
    """

    def __init__(self, schema: pa.Schema, spark_schema: str) -> None:
        self.spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
        metadata = {SPARK_SCHEMA_KEY: spark_schema.encode()}
        self._writer = pq.ParquetWriter(
            self.spool, schema.with_metadata(metadata), compression="snappy"
        )
        self._open = True
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0

    def write(self, rows: pa.Table) -> None:
        self._pending.append(rows)
        self._pending_bytes += rows.nbytes
        if self._pending_bytes >= ROW_GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            table = pa.concat_tables(self._pending)
            self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
        self._pending, self._pending_bytes = [], 0

    def finish(self) -> IO[bytes]:
        if self._open:
            self._flush()
            self._writer.close()
            self._open = False
        self.spool.seek(0)
        return self.spool

    def close(self) -> None:
        if self._open:
            self._writer.close()
            self._open = False
        self.spool.close()


def _store(
    lake: Lake,
    repository: Repository,
    target: WriteTarget,
    values: tuple[str, ...],
    file: _OpenFile,
) -> WrittenFile:
    """Log the blob's intent, then put it: a failure after the log leaves a collectable blob."""
    data = file.finish()
    md5 = hashlib.md5()
    for chunk in iter(lambda: data.read(1 << 20), b""):
        md5.update(chunk)
    data.seek(0)
    now = lake.clock()
    address = new_address(now)
    folders = "".join(
        f"{quote(name, safe='')}={value}/"
        for name, value in zip(target.partition_by, values, strict=True)
    )
    path = f"{target.root}{folders}part-{address.rsplit('/', 1)[-1]}.snappy.parquet"
    # Invariant 4: the intent is durable before the blob exists; a committing job marks
    # the address shared, a staging job's token and path keep it while staged, and a
    # job that never publishes leaves the record to delete it.
    record = unlinked_record(
        lake.deletion_log, repository, address, now, token=target.token, path=path
    )
    lake.deletion_log.append([record])
    size = lake.blockstore.put(repository.storage_namespace, address, cast(BinaryIO, data))
    return WrittenFile(path, address, size, md5.hexdigest(), now)


def _split(table: pa.Table, target: WriteTarget) -> Iterator[tuple[tuple[str, ...], pa.Table]]:
    """The batch's rows by partition value (folder spellings), partition columns dropped."""
    names = list(target.partition_by)
    if not names:
        yield (), table
        return
    data = table.drop_columns(names)
    keys = table.select(names).group_by(names).aggregate([])
    for combo in keys.to_pylist():
        mask = None
        for name in names:
            value = combo[name]
            column = table.column(name)
            match = pc.is_null(column) if value is None else pc.equal(column, value)
            mask = match if mask is None else pc.and_(mask, match)
        yield tuple(_folder_value(combo[name]) for name in names), data.filter(mask)


def _folder_value(value: object) -> str:
    """A partition value as Spark spells it in a folder name."""
    if value is None:
        return NULL_VALUE
    if isinstance(value, bool):
        return "true" if value else "false"
    return quote(str(value), safe="")


def decode_files(messages: Sequence[WriterCommitMessage | None]) -> Iterator[WrittenFile]:
    """The files of the tasks' commit messages (None: a task that wrote nothing)."""
    for message in messages:
        if isinstance(message, WrittenFiles):
            yield from msgspec.msgpack.decode(message.files, type=list[WrittenFile])
