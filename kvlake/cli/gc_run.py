"""`kvlake gc run`: garbage collection of one repository on Spark (KVLAKE_SPARK_*).

The same command is the Spark job's entry point: `spark-submit
kvlake/pipelines/gc.py <repo> ...` and `python -m kvlake.pipelines.gc <repo> ...`
run it, so a laptop and a cluster run one code path. Progress goes to stderr,
one bar step per phase with its counts; `--json` prints the run's summary as
JSON on stdout.
"""

from __future__ import annotations

import datetime

import click
import msgspec
from tqdm import tqdm

from kvlake.config import Settings, load_settings
from kvlake.errors import InvalidInputError
from kvlake.lake import Lake

MARK_PHASES = ("staged", "retained", "committed", "listed", "candidates")
SWEEP_PHASES = ("late_commits", "sweep")


@click.command("run")
@click.argument("repository")
@click.option("--mark-only", is_flag=True, help="Find candidates; delete nothing yet.")
@click.option("--sweep", "sweep_run", metavar="RUN_ID", help="Sweep a finished mark's candidates.")
@click.option("--dry-run", is_flag=True, help="Check candidates afresh but delete nothing.")
@click.option(
    "--grace-period",
    type=float,
    default=None,
    metavar="SECONDS",
    help="Leave blobs younger than this alone (default 86400).",
)
@click.option(
    "--inventory",
    metavar="PATH",
    help="Parquet inventory (a `key` column, keys relative to the namespace) to read"
    " instead of listing the namespace.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
def gc_run(
    repository: str,
    mark_only: bool,
    sweep_run: str | None,
    dry_run: bool,
    grace_period: float | None,
    inventory: str | None,
    as_json: bool,
) -> None:
    """Delete REPOSITORY's blobs that no retained commit or staged entry references.

    Only blobs in hour folders (`data/<YYYYmmddTHH>/`, the hour an upload began)
    whose hour ended at least --grace-period seconds before the run are candidates:
    with `--grace-period 0` a blob written this hour waits for the hour to end. The
    summary says how many blobs it left alone for that reason.

    Retention follows the repository's GC rules (`kvlake gc rules`). A run
    marks (writes its candidates under _lakefs/retention/gc/<run id>/ in the
    storage namespace), then sweeps; `--mark-only` stops after the mark and
    `--sweep RUN_ID` sweeps it later. A sweep that was killed can be run again.
    """
    from kvlake.pipelines import open_spark
    from kvlake.pipelines.gc import DEFAULT_GRACE_PERIOD, GarbageCollector, check_grace_period

    if mark_only and sweep_run:
        raise InvalidInputError("--mark-only and --sweep exclude each other; pass one")
    if sweep_run and (grace_period is not None or inventory is not None):
        raise InvalidInputError(
            "--grace-period and --inventory belong to the mark; a sweep uses its mark's"
        )
    grace = check_grace_period(DEFAULT_GRACE_PERIOD if grace_period is None else grace_period)
    phases = MARK_PHASES * (not sweep_run) + SWEEP_PHASES * (not mark_only)
    settings = load_settings()
    with Lake.open(settings) as lake:
        # Before Spark (tens of seconds to start): an unknown repository or one without
        # rules is refused at once.
        repo = lake.graveler.get_repository(repository)
        if not sweep_run:
            lake.graveler.retention.get_rules(repo)
    with Lake.open(settings) as lake, tqdm(total=len(phases), desc="gc", unit="phase") as bar:

        def progress(phase: str, summary: object) -> None:
            counts = getattr(summary, "counts", None)
            shown = {k: v for k, v in msgspec.to_builtins(counts).items() if v} if counts else {}
            bar.set_postfix_str(f"{phase} " + " ".join(f"{k}={v}" for k, v in shown.items()))
            bar.update(1)

        spark = open_spark(settings.spark, app_name=f"kvlake-gc-{repository}")
        collector = GarbageCollector(spark, lake, progress=progress)
        if sweep_run:
            summary = collector.sweep(repository, sweep_run, dry_run=dry_run)
        elif mark_only:
            summary = collector.mark(
                repository, grace_period=grace, dry_run=dry_run, inventory=inventory
            )
        else:
            summary = collector.run(
                repository, grace_period=grace, dry_run=dry_run, inventory=inventory
            )
    if as_json:
        click.echo(msgspec.json.encode(summary).decode())
    else:
        counts = summary.counts
        click.echo(
            f"run {summary.run_id}: {summary.state}; listed {counts.listed}, candidates"
            f" {counts.candidates}, deleted {counts.deleted} ({counts.bytes_freed} bytes),"
            f" kept {counts.kept}, failed {counts.failed}"
        )
        if summary.first_failure:
            click.echo(f"first failure: {summary.first_failure}", err=True)
        if not sweep_run:
            _echo_left_alone(settings, summary.storage_namespace, summary.cutoff)


def _echo_left_alone(settings: Settings, namespace: str, cutoff: float) -> None:
    """Say what the mark did not consider, and why: blobs in hour folders too young."""
    from kvlake.pipelines.gc import hour_folder_end

    with Lake.open(settings) as lake:
        blocks = lake.blockstore
        young = [
            folder
            for folder in blocks.list_folders(namespace, "data/")
            if (end := hour_folder_end(folder)) is not None and end > cutoff
        ]
        blobs = sum(1 for folder in young for _ in blocks.list_keys(namespace, folder))
    when = datetime.datetime.fromtimestamp(cutoff, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    click.echo(
        f"left alone: {blobs} blobs in {len(young)} hour folders that end after the cutoff"
        f" {when} (run time minus the grace period); they are candidates once their hour"
        " has ended and the grace period has passed"
    )
