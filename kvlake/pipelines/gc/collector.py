"""Garbage collection of a repository's blobs, as a Spark job: mark, then sweep.

Committed blobs are deleted only here (invariant 4a), and only blobs that no
retained commit and no live staging entry references and that are older than
the grace period. The driver holds ids and counters; addresses only ever live
in Spark tasks and in the run's Parquet tables (kvlake/pipelines/runs.py).

**Mark** (one run id, its start `started`, `cutoff = started - grace period`):
1. Live staging first: every branch's staging and sealed tokens, read by tasks
   and written to the `staged` table before anything else is read, so an entry
   a commit takes meanwhile is in that commit, which step 2 reads.
2. Retained commits under the repository's GC rules at `started` (graveler's
   retention walk, on the driver over commit records), written as
   `retained.parquet`; their metaranges' range ids, de-duplicated, as the
   `ranges` table; every address in those range files (one task per range).
3. The namespace listed one `data/<hour>/` folder per task, only folders whose
   hour ended by `cutoff` (a blob's folder is the hour its upload began).
4. Candidates = listed − staged − committed, a distributed anti-join, written
   as the `candidates` table; then `mark.json`.

**Sweep** (right after the mark, or later from its run id):
1. Commits retained now but not at the mark (published during the run) are
   read like step 2, only their range files the mark did not read; their
   addresses leave the candidates.
2. Each task checks its candidates afresh with the deletion workers' in-use
   check (live staging, copies made since `started`, the instance still owning
   the namespace) and deletes what passes, in chunks; then `summary.json`.

A sweep killed midway is run again from the same run id: blobs it deleted are
gone (counted neither deleted nor failed), the rest are checked and deleted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, TypedDict

import pyarrow as pa

from kvlake import ids
from kvlake.catalog import DATA_FOLDER, hour_folder_end
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.pipelines.arrow import spark_schema
from kvlake.pipelines.executors import encode_settings
from kvlake.pipelines.gc import tasks
from kvlake.pipelines.gc.lease import GcLeases, HeldGcLease
from kvlake.pipelines.runs import GcSummary, RunFiles, TableManifest

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from typing_extensions import Unpack  # typing's from Python 3.12

MAX_TASKS: Final = 512
SWEEP_STARTED: Final = "sweep.json"
"""Written when a sweep starts deleting: a sweep that finds it is a run again."""
RANGES_PER_TASK: Final = 16
"""Range files one task reads (~65k entries): fewer tasks on a laptop, enough on a cluster."""

_TABLES: Final = {"ranges": tasks.RANGE_IDS, "candidates": tasks.LISTED}
"""The schemas of the run's tables by name, but for `staged`'s (addresses)."""


class MarkOptions(TypedDict, total=False):
    """The options of `mark`, which `run` takes too."""

    grace_period: float | None
    dry_run: bool
    run_id: str | None
    inventory: str | None
    lease: HeldGcLease | None


Progress = Callable[[str, GcSummary], None]
"""Called after each phase with its name and the summary so far."""


def check_grace_period(seconds: float) -> float:
    if not math.isfinite(seconds) or seconds < 0:
        raise InvalidInputError(
            f"grace period {seconds!r} s would collect blobs uploaded in the future;"
            " use 0 or more seconds (default KVLAKE_GC_GRACE_PERIOD, 86400: one day)"
        )
    return float(seconds)


class GarbageCollector:
    """Runs GC on one lake through one Spark session. One run per repository at a time, in
    any process: each holds the repository's lease in the KV (kvlake/pipelines/gc/lease.py)."""

    def __init__(
        self,
        spark: SparkSession,
        lake: Lake,
        *,
        clock: Callable[[], float] = time.time,
        progress: Progress | None = None,
    ) -> None:
        self._spark = spark
        self._lake = lake
        self._settings = encode_settings(lake.settings, store_id=lake.store_id)
        self._clock = clock
        self._progress = progress or (lambda phase, summary: None)
        self._leases = GcLeases(lake.store, clock=clock)

    # -- the modes -----------------------------------------------------------------

    def run(self, repository: str, **options: Unpack[MarkOptions]) -> GcSummary:
        """Mark, then sweep what the mark found, under one lease (the options are `mark`'s)."""
        run_id = options["run_id"] = options.get("run_id") or ids.new_uid()
        with self._leased(repository, run_id, options.get("lease")) as held:
            options["lease"] = held
            marked = self.mark(repository, **options)
            dry_run = options.get("dry_run", False)
            return self.sweep(repository, marked.run_id, dry_run=dry_run, lease=held)

    def mark(
        self,
        repository: str,
        *,
        grace_period: float | None = None,
        dry_run: bool = False,
        run_id: str | None = None,
        inventory: str | None = None,
        lease: HeldGcLease | None = None,
    ) -> GcSummary:
        """Find the candidates and write them, and mark.json, under the run's folder.

        `grace_period` defaults to the lake's setting (`gc.grace_period`,
        KVLAKE_GC_GRACE_PERIOD). `run_id` (default: a new one) lets a caller name the run
        before it starts.
        `inventory` is a Parquet file or folder Spark can read, with a `key` column
        of keys relative to the namespace, read instead of listing the namespace
        (as S3 Inventory or Delta's `VACUUM ... USING INVENTORY` do): at tens of
        millions of blobs a listing costs more than the rest of the mark.
        `lease` is the repository's GC lease when the caller holds it already;
        otherwise the mark takes it (kvlake/pipelines/gc/lease.py).

        Raises:
            ConflictError: another run holds the repository's lease, or this run lost it.
        """
        grace = check_grace_period(
            self._lake.settings.gc.grace_period if grace_period is None else grace_period
        )
        run_id = run_id or ids.new_uid()
        with self._leased(repository, run_id, lease) as held:
            return self._mark(repository, grace, dry_run, run_id, inventory, held)

    def _mark(
        self,
        repository: str,
        grace: float,
        dry_run: bool,
        run_id: str,
        inventory: str | None,
        held: HeldGcLease,
    ) -> GcSummary:
        repo = self._repository(repository)
        started = self._clock()
        summary = GcSummary(
            run_id=run_id,
            repository=repo.name,
            instance_uid=repo.instance_uid,
            storage_namespace=repo.storage_namespace,
            started=started,
            cutoff=started - grace,
            grace_period=grace,
            dry_run=dry_run,
        )
        files = self._files(repo, summary.run_id)
        counts = summary.counts

        with self._phase("staged", summary, held):
            tokens = self._lake.graveler.references.live_tokens(repo).all
            staged = self._frame([(t,) for t in tokens], "token string").mapInArrow(
                tasks.staged_addresses(self._settings, repo.storage_namespace),
                spark_schema(tasks.ADDRESSES),
            )
            counts.uncommitted = self._write(files, "staged", staged.distinct()).rows

        with self._phase("retained", summary, held):
            retained = list(self._lake.graveler.retention.retained_commits(repo, started))
            files.write_table(
                "retained.parquet",
                pa.table(
                    {
                        "commit_id": [c.commit_id for c in retained],
                        "metarange_id": [c.metarange_id for c in retained],
                    }
                ),
            )
            counts.retained_commits = len(retained)
            metaranges = sorted({c.metarange_id for c in retained})
            self._write(files, "ranges", self._ranges_of(repo, metaranges))

        with self._phase("committed", summary, held):
            ranges = self._table(files, "ranges")
            ranges = ranges.repartition(_tasks(files.read_manifest("ranges").rows, RANGES_PER_TASK))
            committed = self._addresses_of_ranges(repo, ranges).distinct()
            committed = committed.persist()
            counts.committed = committed.count()

        with self._phase("listed", summary, held):
            listed = self._listed(repo, summary.cutoff, inventory).persist()
            counts.listed = listed.count()
            counts.too_young = self._listed(repo, summary.cutoff, inventory, young=True).count()

        with self._phase("candidates", summary, held):
            marked = self._table(files, "staged").unionByName(committed)
            candidates = listed.join(marked, "address", "left_anti")
            counts.candidates = self._write(files, "candidates", candidates).rows
            listed.unpersist()
            committed.unpersist()

        files.write_json("mark.json", summary)
        return summary

    def sweep(
        self,
        repository: str,
        run_id: str,
        *,
        dry_run: bool = False,
        lease: HeldGcLease | None = None,
    ) -> GcSummary:
        """Check and delete a finished mark's candidates (a dry run only checks), holding
        the repository's GC lease as `mark` does.

        Raises:
            ConflictError: another run holds the repository's lease, or this run lost it.
            NotFoundError: no finished mark with that run id.
        """
        with self._leased(repository, run_id, lease) as held:
            return self._sweep(repository, run_id, dry_run, held)

    def _sweep(self, repository: str, run_id: str, dry_run: bool, held: HeldGcLease) -> GcSummary:
        repo = self._repository(repository)
        files = self._files(repo, run_id)
        try:
            summary = files.read_summary("mark.json")
        except NotFoundError:
            raise NotFoundError(
                f"GC run {run_id!r} of repository {repository!r} has no finished mark;"
                " run `kvlake gc run` (or --mark-only) to make one"
            ) from None
        if summary.instance_uid != repo.instance_uid:
            raise NotFoundError(
                f"GC run {run_id!r} marked an earlier repository named {repository!r};"
                " run garbage collection again"
            )
        summary.dry_run = dry_run
        counts = summary.counts
        again = files.exists(SWEEP_STARTED)
        if not dry_run:
            files.write_json(SWEEP_STARTED, summary)

        with self._phase("late_commits", summary, held):
            candidates = self._table(files, "candidates")
            late = self._late_ranges(repo, files, summary.started)
            late_addresses: DataFrame | None = None
            if late is not None:
                late_addresses = self._addresses_of_ranges(repo, late).distinct().persist()
                counts.late_marked = late_addresses.count()
                candidates = candidates.join(late_addresses, "address", "left_anti")

        with self._phase("sweep", summary, held):
            tasks_wanted = _tasks(files.read_manifest("candidates").rows, tasks.SWEEP_CHUNK)
            swept = candidates.repartition(tasks_wanted).mapInArrow(
                tasks.sweep(
                    self._settings,
                    repo.name,
                    run_id,
                    summary.started,
                    dry_run=dry_run,
                    again=again,
                ),
                spark_schema(tasks.SWEEP_SCHEMA),
            )
            from pyspark.sql import functions as F

            totals = swept.agg(  # one row, whatever the number of candidates
                F.sum("deleted").alias("deleted"),
                F.sum("kept").alias("kept"),
                F.sum("failed").alias("failed"),
                F.sum("bytes_freed").alias("bytes_freed"),
                F.max("first_failure").alias("first_failure"),
            ).first()
            assert totals is not None  # a global aggregate always has its one row
            counts.deleted = int(totals["deleted"] or 0)
            counts.kept = int(totals["kept"] or 0)
            counts.failed = int(totals["failed"] or 0)
            counts.bytes_freed = int(totals["bytes_freed"] or 0)
            summary.first_failure = totals["first_failure"] or ""
            if late_addresses is not None:
                late_addresses.unpersist()

        summary.state = "dry_run" if dry_run else "swept"
        files.write_json("summary.json", summary)
        return summary

    # -- steps -----------------------------------------------------------------------

    def _repository(self, name: str) -> Repository:
        """The repository, refused (changing nothing) if its namespace is not served here."""
        repo = self._lake.graveler.get_repository(name)
        try:
            self._lake.blockstore.check_namespace(repo.storage_namespace)
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"repository {name!r} has storage namespace {repo.storage_namespace!r}, which"
                f" this lake's blockstore does not serve ({exc}); run GC with the settings of"
                " the server that owns it"
            ) from exc
        return repo

    def _files(self, repo: Repository, run_id: str) -> RunFiles:
        return RunFiles(self._lake.blockstore, repo.storage_namespace, run_id)

    def _listed(
        self, repo: Repository, cutoff: float, inventory: str | None, *, young: bool = False
    ) -> DataFrame:
        """Blob keys in hour folders that ended by `cutoff` (with `young`: that end after it,
        the blobs a mark leaves alone), listed or read from an inventory."""
        if inventory is not None:
            rows = self._spark.read.parquet(inventory)
            columns = ["key", "size"] if "size" in rows.columns else ["key"]
            return rows.select(*columns).mapInArrow(
                tasks.inventory_addresses(cutoff, young=young), spark_schema(tasks.LISTED)
            )
        folders = [
            (folder,)
            for folder in self._lake.blockstore.list_folders(repo.storage_namespace, DATA_FOLDER)
            if (end := hour_folder_end(folder)) is not None and (end > cutoff) == young
        ]
        return self._frame(folders, "folder string").mapInArrow(
            tasks.folder_addresses(self._settings, repo.storage_namespace),
            spark_schema(tasks.LISTED),
        )

    def _frame(self, rows: list[tuple[str]], schema: str) -> DataFrame:
        """A small DataFrame of ids, spread one task per row (up to MAX_TASKS)."""
        frame = self._spark.createDataFrame(rows, schema)
        return frame.repartition(max(1, min(len(rows), MAX_TASKS)))

    def _ranges_of(self, repo: Repository, metaranges: list[str]) -> DataFrame:
        range_ids = self._frame([(m,) for m in metaranges], "metarange_id string").mapInArrow(
            tasks.range_ids(self._settings, repo.storage_namespace), spark_schema(tasks.RANGE_IDS)
        )
        return range_ids.distinct()

    def _addresses_of_ranges(self, repo: Repository, ranges: DataFrame) -> DataFrame:
        return ranges.mapInArrow(
            tasks.range_addresses(self._settings, repo.storage_namespace),
            spark_schema(tasks.ADDRESSES),
        )

    def _late_ranges(self, repo: Repository, files: RunFiles, started: float) -> DataFrame | None:
        """Range ids of commits retained now and not at the mark, minus those it read."""
        marked = set(files.read_table("retained.parquet").column("commit_id").to_pylist())
        late = {
            c.metarange_id
            for c in self._lake.graveler.retention.retained_commits(repo, started)
            if c.commit_id not in marked
        }
        if not late:
            return None
        return self._ranges_of(repo, sorted(late)).join(
            self._table(files, "ranges"), "range_id", "left_anti"
        )

    def _write(self, files: RunFiles, table: str, frame: DataFrame) -> TableManifest:
        """Write a table as parts, one per partition (an action), then its manifest.

        The driver gets the row count as one aggregated row, and the parts by
        listing the table's folder: as many keys as partitions, whatever the rows.
        """
        from pyspark.sql import functions as F

        folder = f"{files.prefix}{table}/"
        writer = tasks.write_parts(self._settings, files.namespace, folder)
        written = frame.mapInArrow(writer, spark_schema(tasks.PARTS)).agg(
            F.sum("rows").alias("rows")
        )
        total = written.first()  # a global aggregate: one row
        rows = int(total["rows"] or 0) if total is not None else 0
        parts = list(files.blockstore.list_keys(files.namespace, folder))
        manifest = TableManifest(parts=parts, rows=rows)
        files.write_manifest(table, manifest)
        return manifest

    def _table(self, files: RunFiles, table: str) -> DataFrame:
        manifest = files.read_manifest(table)
        schema = spark_schema(_TABLES.get(table, tasks.ADDRESSES))
        if not manifest.parts:
            return self._spark.createDataFrame([], schema)
        keys = self._frame([(key,) for key in manifest.parts], "key string")
        return keys.mapInArrow(tasks.read_table_parts(self._settings, files.namespace), schema)

    def _phase(self, name: str, summary: GcSummary, held: HeldGcLease) -> _Phase:
        held.check()  # a run that lost its lease starts no phase: another run has it now
        return _Phase(name, summary, self._progress)

    @contextmanager
    def _leased(
        self, repository: str, run_id: str, lease: HeldGcLease | None
    ) -> Iterator[HeldGcLease]:
        """The caller's lease, or the repository's lease taken (and renewed) for the run."""
        if lease is not None:
            yield lease
            return
        with self._leases.acquire(repository, run_id) as held:
            yield held


def _tasks(rows: int, per_task: int) -> int:
    """How many tasks share `rows` items, `per_task` each, within [1, MAX_TASKS]."""
    return max(1, min(MAX_TASKS, -(-rows // per_task)))


class _Phase:
    """Times a phase into the summary and reports it when done."""

    def __init__(self, name: str, summary: GcSummary, progress: Progress) -> None:
        self._name, self._summary, self._progress = name, summary, progress

    def __enter__(self) -> None:
        self._begun = time.monotonic()

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self._summary.seconds[self._name] = round(time.monotonic() - self._begun, 3)
        if kind is None:
            self._progress(self._name, self._summary)
