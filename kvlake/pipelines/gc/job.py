"""Garbage collection of one repository as a Spark job: the operator's form (KVLAKE_SPARK_*).

Users start runs over the API (`kvlake gc run`, POST /repositories/{repo}/gc/runs), which
the server's runner or a `kvlake worker` runs on its Spark master. An operator who
schedules GC outside any server runs the same `GarbageCollector` with this entry point,
on the stores directly as `kvlake serve` does: `python -m kvlake.pipelines.gc.job <repo>`
on a laptop, `spark-submit kvlake/pipelines/gc/job.py <repo>` on a cluster. Progress goes
to stderr, one bar step per phase with its counts; `--json` prints the run's summary as
JSON on stdout. A problem the operator can fix is one `gc: error: ...` line, exit 2.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable
from typing import Any

import click
import msgspec
from tqdm import tqdm

from kvlake.config import load_settings
from kvlake.errors import InvalidInputError, KvlakeError
from kvlake.lake import Lake
from kvlake.pipelines.runs import GcSummary

MARK_PHASES = ("staged", "retained", "committed", "listed", "candidates")
SWEEP_PHASES = ("late_commits", "sweep")


def run_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of a run, the same for this job and `kvlake gc run` (the API's)."""
    options = (
        click.option("--mark-only", is_flag=True, help="Find candidates; delete nothing yet."),
        click.option(
            "--sweep", "sweep_run", metavar="RUN_ID", help="Sweep a finished mark's candidates."
        ),
        click.option("--dry-run", is_flag=True, help="Check candidates afresh but delete nothing."),
        click.option(
            "--grace-period",
            type=float,
            default=None,
            metavar="SECONDS",
            help="Leave blobs younger than this alone (default: KVLAKE_GC_GRACE_PERIOD, 86400).",
        ),
    )
    for option in reversed(options):
        command = option(command)
    return command


def _reported(command: Callable[..., None]) -> Callable[..., None]:
    """A problem the operator can fix (a KvlakeError) as one `gc: error: ...` line, exit 2."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except KvlakeError as exc:
            click.echo(f"gc: error: {exc}", err=True)
            raise SystemExit(2) from None

    return run


@click.command("gc_job")
@click.argument("repository")
@run_options
@click.option(
    "--inventory",
    metavar="PATH",
    help="Parquet inventory (a `key` column, keys relative to the namespace) to read"
    " instead of listing the namespace.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@_reported
def gc_job(
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
    from kvlake.pipelines.gc.collector import GarbageCollector, check_grace_period

    if mark_only and sweep_run:
        raise InvalidInputError("--mark-only and --sweep exclude each other; pass one")
    if sweep_run and (grace_period is not None or inventory is not None):
        raise InvalidInputError(
            "--grace-period and --inventory belong to the mark; a sweep uses its mark's"
        )
    settings = load_settings()
    grace = check_grace_period(settings.gc.grace_period if grace_period is None else grace_period)
    phases = MARK_PHASES * (not sweep_run) + SWEEP_PHASES * (not mark_only)
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
    click.echo(msgspec.json.encode(summary).decode() if as_json else describe(summary))


def describe(summary: GcSummary) -> str:
    """What a run did, in lines a user reads: counts, a failure, and what the mark left alone."""
    counts = summary.counts
    lines = [
        f"run {summary.run_id}: {summary.state}; listed {counts.listed}, candidates"
        f" {counts.candidates}, {'would delete' if summary.dry_run else 'deleted'}"
        f" {counts.deleted} ({counts.bytes_freed} bytes), kept {counts.kept},"
        f" failed {counts.failed}"
    ]
    if summary.first_failure:
        lines.append(f"first failure: {summary.first_failure}")
    when = datetime.datetime.fromtimestamp(summary.cutoff, datetime.UTC)
    lines.append(
        f"left alone: {counts.too_young} blobs in hour folders that end after the cutoff"
        f" {when:%Y-%m-%dT%H:%M:%SZ} (run time minus the grace period); they are candidates"
        " once their hour has ended and the grace period has passed"
    )
    return "\n".join(lines)


if __name__ == "__main__":  # spark-submit kvlake/pipelines/gc/job.py <repository> [options]
    gc_job(prog_name="python -m kvlake.pipelines.gc.job")
