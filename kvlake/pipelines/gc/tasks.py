"""What garbage collection's Spark tasks do, as `mapInArrow` functions over Arrow batches.

Each factory returns a picklable function of an iterator of batches; the
function opens the lake from the job's settings (`task_lake`) in the task's
process. Inputs are ids (tokens, metarange ids, range ids, folders, part
keys); outputs are addresses or per-task counts, never anything the driver
would have to hold per address.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from kvlake.catalog import (
    HOUR_END,
    HOUR_FORMAT,
    HOUR_KEY_PATTERN,
    HOUR_START,
    blob_key_in,
    entry_ref,
)
from kvlake.deletion import ReferenceChecker, SubtractedMarks, gc_records
from kvlake.errors import BlobNotFoundError, KvlakeError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.arrow import record_batches
from kvlake.pipelines.executors import task_lake
from kvlake.pipelines.runs import read_parts, write_part

TaskFunction = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

ADDRESSES: Final = pa.schema([("address", pa.string())])
RANGE_IDS: Final = pa.schema([("range_id", pa.string())])
LISTED: Final = pa.schema([("address", pa.string()), ("size", pa.int64())])
"""Listed blobs: the size is null where the listing does not give it (the sweep asks)."""
HOUR: Final = 3600
SWEEP_CHUNK: Final = 5_000
"""Candidates checked and deleted together: one in-use check reads live staging per chunk."""

SWEEP_SCHEMA: Final = pa.schema(
    [
        ("deleted", pa.int64()),
        ("kept", pa.int64()),
        ("failed", pa.int64()),
        ("bytes_freed", pa.int64()),
        ("first_failure", pa.string()),
    ]
)
PARTS: Final = pa.schema([("rows", pa.int64())])
"""A written table part: its rows."""


def _values(batches: Iterator[pa.RecordBatch], column: str) -> Iterator[str]:
    for batch in batches:
        yield from batch.column(column).to_pylist()


def _addresses(addresses: Iterable[str]) -> Iterator[pa.RecordBatch]:
    return record_batches(((address,) for address in addresses), ADDRESSES)


def staged_addresses(settings: str, namespace: str) -> TaskFunction:
    """Tokens in, the keys in `namespace` their staged entries reference out (tombstones
    skipped; an imported address counts where it lies inside the namespace, `blob_key_in`)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        references = task_lake(settings).graveler.references

        def addresses() -> Iterator[str]:
            for token in _values(batches, "token"):
                for page in references.staged_pages(token, batch_size=10_000):
                    for _, value in page:
                        address = blob_key_in(namespace, value) if value is not None else ""
                        if address:
                            yield address

        yield from _addresses(addresses())

    return run


def range_ids(settings: str, namespace: str) -> TaskFunction:
    """Metarange ids in, the ids of their ranges out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        committed = task_lake(settings).graveler.committed
        for metarange_id in _values(batches, "metarange_id"):
            found = [info.id for info in committed.ranges(namespace, metarange_id)]
            yield pa.record_batch([pa.array(found, pa.string())], schema=RANGE_IDS)

    return run


def range_addresses(settings: str, namespace: str) -> TaskFunction:
    """Range ids in, the addresses of every entry in those range files out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        committed = task_lake(settings).graveler.committed

        def addresses() -> Iterator[str]:
            for range_id in _values(batches, "range_id"):
                for _, value in committed.scan_range(namespace, range_id):
                    address = blob_key_in(namespace, value)
                    if address:
                        yield address

        yield from _addresses(addresses())

    return run


def folder_addresses(settings: str, namespace: str) -> TaskFunction:
    """Hour folders in, every blob under them out, with its size (S3 lists it for free)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        blockstore = task_lake(settings).blockstore
        folders = list(_values(batches, "folder"))  # this task's few hour folders
        blobs = blockstore.list_blobs(namespace, folders)
        yield from record_batches(((blob.key, blob.size) for blob in blobs), LISTED)

    return run


def inventory_addresses(cutoff: float, *, young: bool = False) -> TaskFunction:
    """Inventory rows (`key`) in, the keys in hour folders that ended by `cutoff` out
    (with `young`, the keys in hour folders that end after it: what the mark leaves alone).

    For an inventory file (S3 Inventory, or any listing made beforehand) in
    place of listing the namespace: keys are relative to the storage namespace,
    e.g. `data/20250101T00/<uid>`; anything else is left alone, as a listing
    would leave it.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = batch.column("key")
            in_data = pc.match_substring_regex(keys, HOUR_KEY_PATTERN)
            hours = pc.utf8_slice_codeunits(keys, HOUR_START, HOUR_END)
            ended = pc.add(
                pc.cast(
                    pc.strptime(hours, format=HOUR_FORMAT, unit="s", error_is_null=True), pa.int64()
                ),
                HOUR,
            )
            by_age = pc.greater(ended, cutoff) if young else pc.less_equal(ended, cutoff)
            old = pc.fill_null(pc.and_kleene(in_data, by_age), False)
            sizes = (
                batch.column("size").cast(pa.int64())
                if "size" in batch.schema.names
                else pa.nulls(len(batch), pa.int64())
            )
            chosen = [keys.filter(old).cast(pa.string()), sizes.filter(old)]
            yield pa.record_batch(chosen, schema=LISTED)

    return run


def write_parts(settings: str, namespace: str, prefix: str) -> TaskFunction:
    """Any batches in, one Parquet part per partition written under `prefix`; its rows out.

    The part is named by the task's partition, so a retried attempt replaces what
    a failed one wrote instead of leaving a second copy beside it.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        key = f"{prefix}part-{partition:05d}.parquet"
        rows = write_part(task_lake(settings).blockstore, namespace, key, batches)
        yield pa.record_batch([pa.array([rows], pa.int64())], schema=PARTS)

    return run


def read_table_parts(settings: str, namespace: str) -> TaskFunction:
    """Part keys in, their rows out."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        blockstore = task_lake(settings).blockstore
        yield from read_parts(blockstore, namespace, _values(batches, "key"))

    return run


def sweep(
    settings: str, repository: str, run_id: str, started: float, *, dry_run: bool, again: bool
) -> TaskFunction:
    """Candidates in, checked afresh and deleted in chunks; one row of counts per chunk out.

    The check is the deletion workers' own (ReferenceChecker), on
    `garbage_collection` records of this run: the repository instance still
    owns the namespace, no live staging entry holds the address, and no copy
    shared it since the run started. The marks were subtracted before any
    candidate existed (SubtractedMarks). A dry run checks and deletes nothing.
    A sweep run `again` asks each blob's size instead of trusting the listing's, so
    the blobs an earlier attempt deleted count as gone, not as deleted twice.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        lake = task_lake(settings)
        record = lake.graveler.references.repository_record(repository)
        if record is None:
            return
        checker = ReferenceChecker(
            lake.graveler, lake.blockstore, lake.purges, entry_ref, gc_marks=SubtractedMarks()
        )
        chunk: dict[str, int | None] = {}
        for batch in batches:
            for address, size in zip(
                batch.column("address").to_pylist(), batch.column("size").to_pylist(), strict=True
            ):
                chunk[address] = None if again else size
                if len(chunk) == SWEEP_CHUNK:
                    yield _sweep_chunk(lake, checker, record, run_id, started, chunk, dry_run)
                    chunk = {}
        if chunk:
            yield _sweep_chunk(lake, checker, record, run_id, started, chunk, dry_run)

    return run


def _sweep_chunk(
    lake: Lake,
    checker: ReferenceChecker,
    repository: Repository,
    run_id: str,
    started: float,
    listed: dict[str, int | None],
    dry_run: bool,
) -> pa.RecordBatch:
    """Check and delete one chunk; sizes the listing did not give are asked for first."""
    namespace = repository.storage_namespace
    records = list(gc_records(lake.deletion_log, repository, run_id, started, listed))
    doomed: list[str] = []
    kept = failed = 0
    first_failure = ""
    for record, verdict in zip(records, checker.check(records), strict=True):
        if verdict.action == "delete":
            doomed.append(record.address)
        elif verdict.action in ("kept", "in_use", "wait"):
            kept += 1
        else:
            failed += 1
            first_failure = first_failure or f"{record.address}: {verdict.reason}"
    sizes: dict[str, int] = {}
    for address in doomed:
        known = listed[address]
        if known is not None:
            sizes[address] = known
            continue
        try:
            sizes[address] = lake.blockstore.size(namespace, address)
        except BlobNotFoundError:
            continue  # gone already (a sweep run again): nothing to free, nothing failed
        except KvlakeError as exc:
            sizes[address] = 0
            first_failure = first_failure or f"{address}: {exc}"
    failures = {} if dry_run else lake.blockstore.delete_many(namespace, list(sizes))
    # The deletes are done: links of these addresses may go ahead again (see DeletionLog.claim).
    lake.deletion_log.release_claims((repository.instance_uid, a) for a in listed)
    failed += len(failures)
    for address, error in failures.items():
        first_failure = first_failure or f"{address}: {error}"
    deleted = [address for address in sizes if address not in failures]
    return pa.record_batch(
        [
            pa.array([len(deleted)], pa.int64()),
            pa.array([kept], pa.int64()),
            pa.array([failed], pa.int64()),
            pa.array([sum(sizes[a] for a in deleted)], pa.int64()),
            pa.array([first_failure], pa.string()),
        ],
        schema=SWEEP_SCHEMA,
    )
