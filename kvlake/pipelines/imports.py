"""Zero-copy imports on Spark: parts listed in parallel, ranges written by the tasks.

The importer (kvlake/catalog/imports.py) splits the sources into parts and asks
`SparkImport.pieces` for the import's committed pieces. Tasks list one part
each and emit entries (path, identity, data) as Arrow; Spark range-partitions
them by path and sorts each partition, so each partition is a disjoint key
interval; a task writes its interval's ranges into the repository's namespace
(`CommittedManager.write_piece`) and returns the piece: its range infos and the
entries before its first and after its last range boundary, which the driver
joins into the metarange a single writer would make. The driver reads one
piece at a time (`toLocalIterator`, in range order): it holds counters and
one piece, never the lake's entries.

Every PROGRESS_EVERY entries a task reads the import's operation record and
stops once it is canceled (the engine's heartbeat keeps the record's lease
while the job runs); the driver saves the count and checks for a cancel at
every piece, and commits nothing then. Pieces of a canceled or failed import leave range files
that no commit references, as an interrupted local import does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final

import msgspec
import pyarrow as pa

from kvlake.catalog import ImportJob, ImportUnit, unit_entries
from kvlake.catalog.imports import PROGRESS_EVERY
from kvlake.config import Settings
from kvlake.graveler import Piece, Value
from kvlake.lake import Lake
from kvlake.pipelines.arrow import record_batches, spark_schema
from kvlake.pipelines.executors import encode_settings, task_lake
from kvlake.pipelines.session import open_spark

ENTRIES: Final = pa.schema([("key", pa.binary()), ("identity", pa.binary()), ("data", pa.binary())])
PIECES: Final = pa.schema([("first_key", pa.binary()), ("piece", pa.binary())])


class SparkImport:
    """Writes an import's pieces with Spark tasks (`PieceWriter` of the catalog)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def pieces(self, job: ImportJob, units: Sequence[ImportUnit]) -> Iterator[Piece]:
        """The pieces of the parts' entries, ascending by first key; see the module."""
        if not units:
            return
        spark = open_spark(self._settings.spark, app_name="kvlake-import")
        settings = encode_settings(self._settings)
        rows = [(msgspec.json.encode(unit).decode(),) for unit in units]
        parts = spark.createDataFrame(rows, "unit string").repartition(len(rows))
        # Kept: range partitioning samples its input first, which would list everything twice.
        entries = parts.mapInArrow(list_parts(settings, job), spark_schema(ENTRIES)).persist()
        try:
            partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or "200")
            intervals = entries.repartitionByRange(partitions, "key").sortWithinPartitions("key")
            written = intervals.mapInArrow(
                write_pieces(settings, job), spark_schema(PIECES)
            ).persist()
            try:
                written.count()  # every interval's ranges written at once; the pieces are kept
                # Partitions come in range order, so pieces arrive ascending; joining them
                # refuses any that do not rather than write a wrong metarange.
                for row in written.toLocalIterator():
                    yield msgspec.msgpack.decode(row["piece"], type=Piece)
            finally:
                written.unpersist()
        finally:
            entries.unpersist()


def list_parts(
    settings: str, job: ImportJob
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Parts in (JSON), their entries out; stops listing once the import is canceled."""
    raw_job = msgspec.msgpack.encode(job)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        lake = task_lake(settings)
        watch = _Watch(lake, msgspec.msgpack.decode(raw_job, type=ImportJob))

        def rows() -> Iterator[tuple[bytes, bytes, bytes]]:
            for batch in batches:
                for raw in batch.column("unit").to_pylist():
                    unit = msgspec.json.decode(raw, type=ImportUnit)
                    for key, value in unit_entries(lake.blockstore, unit):
                        yield key, value.identity, value.data
                        if not watch.running():
                            return

        yield from record_batches(rows(), ENTRIES)

    return run


def write_pieces(
    settings: str, job: ImportJob
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A sorted key interval in, its ranges written and its piece out (none if empty)."""
    raw_job = msgspec.msgpack.encode(job)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        lake = task_lake(settings)
        held = msgspec.msgpack.decode(raw_job, type=ImportJob)
        watch = _Watch(lake, held)

        def entries() -> Iterator[tuple[bytes, Value]]:
            for batch in batches:
                keys, identities, datas = (batch.column(n).to_pylist() for n in range(3))
                for key, identity, data in zip(keys, identities, datas, strict=True):
                    yield key, Value(identity=identity, data=data)
                    if not watch.running():
                        return  # canceled: the driver commits nothing, so a partial piece is fine

        namespace = held.repository.storage_namespace
        piece = lake.graveler.committed.write_piece(namespace, entries())
        if piece.count:
            yield pa.record_batch(
                [[piece.first_key], [msgspec.msgpack.encode(piece)]], schema=PIECES
            )

    return run


class _Watch:
    """Every PROGRESS_EVERY entries of a task: see a cancel (the driver reads one only when
    pieces come back, which may be hours away)."""

    def __init__(self, lake: Lake, job: ImportJob) -> None:
        self._lake = lake
        self._job = job
        self._seen = 0

    def running(self) -> bool:
        self._seen += 1
        if self._seen % PROGRESS_EVERY:
            return True
        return self._lake.catalog.imports.running(self._job.import_id)
