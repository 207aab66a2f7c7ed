"""A garbage-collection run's files, kept in the repository's storage namespace.

Everything a run decides is written under `_lakefs/retention/gc/<run id>/`, so
a later sweep, a dry run's reader or an operator can see it, whatever machine
ran the mark:

- `retained.parquet`: the retained commits (commit id, metarange id);
- `staged/`, `ranges/`, `candidates/`: tables written by Spark tasks, one
  Parquet part per partition (named by it, so a retried attempt replaces a
  failed one's part), and a manifest `<table>.json` with the parts and rows;
- `mark.json`: the mark's summary, written last: a run without it never
  finished its mark, and nothing may be swept from it;
- `sweep.json`: written when a sweep starts deleting (a later sweep of the same
  run knows it is a run again and checks each blob's size);
- `summary.json`: the whole run's summary, once the sweep is done.

Tables live in the blockstore, not on a Spark filesystem: executors write and
read them through kvlake's adapters, so an s3:// namespace needs no s3a.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Iterable, Iterator
from typing import Final

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.errors import BlobNotFoundError, InvalidInputError, NotFoundError

RUNS_PREFIX: Final = "_lakefs/retention/gc/"


class TableManifest(msgspec.Struct, frozen=True, kw_only=True):
    """The parts of one table a run wrote, and how many rows they hold."""

    parts: list[str]
    rows: int


class PhaseCounts(msgspec.Struct, kw_only=True):
    """How many addresses each phase saw; bytes are the sizes of the blobs deleted."""

    retained_commits: int = 0
    uncommitted: int = 0
    committed: int = 0
    listed: int = 0
    too_young: int = 0
    """Blobs left alone because their hour folder ends after the cutoff."""
    candidates: int = 0
    late_marked: int = 0
    deleted: int = 0
    kept: int = 0
    failed: int = 0
    bytes_freed: int = 0


class GcSummary(msgspec.Struct, kw_only=True):
    """What a run did: printed by `kvlake gc run --json`, stored as mark.json and summary.json."""

    run_id: str
    repository: str
    instance_uid: str
    storage_namespace: str
    started: float
    """When the mark began (seconds): retention thresholds and the grace period count from it."""
    cutoff: float
    """Blobs in hour folders that ended after this are too young to collect."""
    grace_period: float
    dry_run: bool
    state: str = "marked"
    """`marked` (mark.json), then `swept` or `dry_run` (summary.json)."""
    counts: PhaseCounts = msgspec.field(default_factory=PhaseCounts)
    seconds: dict[str, float] = msgspec.field(default_factory=dict)
    """Duration of each phase."""
    first_failure: str = ""


class RunFiles:
    """Reads and writes one run's folder through the blockstore."""

    def __init__(self, blockstore: BlockStore, namespace: str, run_id: str) -> None:
        check_run_id(run_id)
        self.blockstore = blockstore
        self.namespace = namespace
        self.run_id = run_id
        self.prefix = f"{RUNS_PREFIX}{run_id}/"

    def key(self, name: str) -> str:
        return self.prefix + name

    def exists(self, name: str) -> bool:
        return self.blockstore.exists(self.namespace, self.key(name))

    def write_json(self, name: str, value: msgspec.Struct) -> None:
        self.blockstore.put(self.namespace, self.key(name), msgspec.json.encode(value))

    def read_summary(self, name: str) -> GcSummary:
        """Raises NotFoundError when the file was never written."""
        try:
            raw = self.blockstore.get(self.namespace, self.key(name))
        except BlobNotFoundError:
            raise NotFoundError(f"GC run {self.run_id!r} has no {name}") from None
        return msgspec.json.decode(raw, type=GcSummary)

    def write_manifest(self, table: str, manifest: TableManifest) -> None:
        self.write_json(f"{table}.json", manifest)

    def read_manifest(self, table: str) -> TableManifest:
        raw = self.blockstore.get(self.namespace, self.key(f"{table}.json"))
        return msgspec.json.decode(raw, type=TableManifest)

    def rows(self, table: str) -> Iterator[pa.RecordBatch]:
        """Every row of a table the manifest names, a part at a time (a dry run's candidates)."""
        yield from read_parts(self.blockstore, self.namespace, self.read_manifest(table).parts)

    def write_table(self, name: str, table: pa.Table) -> None:
        """A small table written whole by the driver (the retained commits)."""
        sink = io.BytesIO()
        pq.write_table(table, sink)
        self.blockstore.put(self.namespace, self.key(name), sink.getvalue())

    def read_table(self, name: str) -> pa.Table:
        return read_parquet(self.blockstore, self.namespace, self.key(name))


def check_run_id(run_id: str) -> None:
    if not ids.is_uid(run_id):
        raise InvalidInputError(
            f"GC run id {run_id!r} is not a run id; use the id `kvlake gc run` printed"
        )


def write_part(
    blockstore: BlockStore, namespace: str, key: str, batches: Iterable[pa.RecordBatch]
) -> int:
    """Write a task's batches as one Parquet file at `key`; return its row count.

    The file is spooled to local disk and streamed to the blockstore, so a task
    holds one batch in memory, however many rows it writes.
    """
    rows = 0
    with tempfile.TemporaryFile() as spool:
        writer: pq.ParquetWriter | None = None
        for batch in batches:
            if writer is None:
                writer = pq.ParquetWriter(spool, batch.schema)
            writer.write_batch(batch)
            rows += batch.num_rows
        if writer is None:
            return 0
        writer.close()
        spool.seek(0)
        blockstore.put(namespace, key, spool)
    return rows


def read_parquet(blockstore: BlockStore, namespace: str, key: str) -> pa.Table:
    return pq.read_table(io.BytesIO(blockstore.get(namespace, key)))


def read_parts(
    blockstore: BlockStore, namespace: str, keys: Iterable[str]
) -> Iterator[pa.RecordBatch]:
    for key in keys:
        yield from read_parquet(blockstore, namespace, key).to_batches()
