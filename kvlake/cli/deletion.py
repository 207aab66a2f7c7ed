"""`kvlake deletion`: watch and drive the two-phase deletion log from outside the server.

Every command opens the lake itself, so it works whether or not servers run:
the log's records are leased per partition, and a CLI worker takes its turn
with the servers' own. Dead letters have their own group (`dlq.py`).
"""

from __future__ import annotations

import threading

import click

from kvlake.cli.dlq import dlq
from kvlake.config import load_settings
from kvlake.deletion import WorkerReport, deletion_status
from kvlake.lake import Lake


@click.group()
def deletion() -> None:
    """Operate the two-phase deletion log: status, workers, dead letters, purges."""


deletion.add_command(dlq)


@deletion.command("status")
def deletion_status_command() -> None:
    """Show pending, due and leased records per partition, and the dead letters."""
    with Lake.open(load_settings()) as lake:
        status = deletion_status(lake.deletion_log)
    click.echo(
        f"{'partition':>9} {'pending':>9} {'due':>9} {'leased':>7}"
        f" {'deleted':>9} {'retried':>8} {'dead':>6} {'kept':>7}"
    )
    for p in status.partitions:
        leased = "yes" if p.leased(status.now) else "no"
        click.echo(
            f"{p.number:>9} {p.pending:>9} {p.due:>9} {leased:>7}"
            f" {p.deleted:>9} {p.retried:>8} {p.dead_lettered:>6} {p.kept:>7}"
        )
    click.echo(f"pending: {status.pending}, oldest waiting {status.oldest_pending_age:.1f} s")
    click.echo(f"dead letters: {status.dead_letters}")


@deletion.command("run")
@click.option("--forever", is_flag=True, help="Keep running (Ctrl-C stops); default: until idle.")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds between passes that found nothing due (with --forever).",
)
def deletion_run(forever: bool, interval: float) -> None:
    """Run a deletion worker until no record is due (or forever), then print what it did."""
    with Lake.open(load_settings()) as lake:
        stop = threading.Event()
        try:
            report = lake.deletion_worker().run(stop, interval=interval, until_idle=not forever)
        except KeyboardInterrupt:
            stop.set()
            return
    _echo_report(report)


def _echo_report(report: WorkerReport) -> None:
    click.echo(
        f"deleted {report.deleted}, retried {report.retried}, kept {report.kept},"
        f" dead-lettered {report.dead_lettered} in {report.batches} batches"
    )
    for failure in report.failures:
        click.echo(f"failure: {failure}", err=True)


@deletion.command("purges")
def deletion_purges() -> None:
    """Report every purge: blobs logged, deleted and dead-lettered."""
    with Lake.open(load_settings()) as lake:
        shown = False
        for report in lake.purges.reports():
            shown = True
            request, counts = report.request, report.counts
            click.echo(
                f"{request.repository}/{request.instance_uid} {request.storage_namespace}"
                f" {request.state}: logged {request.logged}, deleted {counts.deleted},"
                f" dead-lettered {counts.dead_lettered}"
            )
        if not shown:
            click.echo("no purges")
