"""`kvlake delete` and `kvlake operations`: bulk deletes (`kvlake lock` is in locks.py).

They run on the lake directly, as `kvlake repo` does: `delete` records the
operation, which any running server picks up; with `--wait` this process
runs it too (leases decide who works on it) and draws a progress bar until
it ends. The CLI acts with the store's own rights, so it sees every
operation, as an admin does over HTTP.
"""

from __future__ import annotations

import datetime
import getpass
import sys
import threading

import click

from kvlake.config import load_settings
from kvlake.lake import Lake
from kvlake.operations import (
    BulkDeleteOptions,
    Filters,
    Operation,
    open_engine,
    parse_branch_path,
    progress_of,
)

REFRESH = 0.5
"""Seconds between two redraws of the progress bar."""
BAR_WIDTH = 30


def _user() -> str:
    return f"cli:{getpass.getuser()}"


def _when(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return datetime.datetime.fromisoformat(value).timestamp()
    except ValueError:
        return float(value)


@click.command("delete")
@click.argument("uri")
@click.option("--wait", is_flag=True, help="Run it here and show progress until it ends.")
@click.option("--dry-run", is_flag=True, help="Count what would be deleted; change nothing.")
@click.option(
    "--commit", "commit_message", default=None, help="Commit when done, with this message."
)
@click.option("--no-purge", is_flag=True, help="Leave uncommitted objects' blobs to GC.")
@click.option("--glob", default="", help="Only names (last path segment) matching this glob.")
@click.option(
    "--min-size", type=int, default=None, help="Only objects of at least this many bytes."
)
@click.option("--max-size", type=int, default=None, help="Only objects of at most this many bytes.")
@click.option("--modified-before", default=None, help="ISO time or epoch seconds.")
@click.option("--modified-after", default=None, help="ISO time or epoch seconds.")
@click.option("--engine", default="", help="local, spark or auto (default: the server's).")
def delete(
    uri: str,
    wait: bool,
    dry_run: bool,
    commit_message: str | None,
    no_purge: bool,
    glob: str,
    min_size: int | None,
    max_size: int | None,
    modified_before: str | None,
    modified_after: str | None,
    engine: str,
) -> None:
    """Delete every object under URI (lakefs://repo/branch/prefix/), asynchronously."""
    options = BulkDeleteOptions(
        filters=Filters(
            modified_before=_when(modified_before),
            modified_after=_when(modified_after),
            min_size=min_size,
            max_size=max_size,
            glob=glob,
        ),
        dry_run=dry_run,
        commit=commit_message is not None,
        commit_message=commit_message or "",
        purge=not no_purge,
        engine=engine,
    )
    with Lake.open(load_settings()) as lake:
        operation = lake.bulk_deletes.create(parse_branch_path(uri), options, created_by=_user())
        click.echo(f"operation {operation.id}: bulk delete of {uri}")
        if not wait:
            click.echo(f"follow it with `kvlake operations status {operation.id}`")
            return
        final = _run_with_progress(lake, operation)
        click.echo(_summary(final))
        if final.status in ("failed", "completed_with_errors"):
            sys.exit(1)


def _run_with_progress(lake: Lake, operation: Operation) -> Operation:
    stop = threading.Event()
    engine = open_engine(operation.options.engine, lake.engine_context())
    errors: list[BaseException] = []

    def work() -> None:
        try:
            while not lake.ledger.load(operation.id)[0].finished and not stop.is_set():
                engine.run(operation.id, stop)
                stop.wait(REFRESH)  # another process holds it: its lease ends or it finishes
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)

    worker = threading.Thread(target=work, name="kvlake-delete", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(REFRESH)
            current = lake.ledger.load(operation.id)[0]
            click.echo("\r" + _bar(current, lake.clock()), nl=False, err=True)
    except KeyboardInterrupt:
        stop.set()
        worker.join()
        click.echo("", err=True)
        raise click.ClickException(
            f"interrupted; operation {operation.id} resumes in a server, or cancel it with"
            f" `kvlake operations cancel {operation.id}`"
        ) from None
    click.echo("", err=True)
    if errors:
        raise errors[0]
    return lake.ledger.load(operation.id)[0]


def _bar(operation: Operation, now: float) -> str:
    progress = progress_of(operation, now)
    counters = operation.counters
    total = progress.total_count
    done = operation.processed
    if total:
        filled = int(BAR_WIDTH * done / total)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        head = f"[{bar}] {done:,}/{total:,}"
    else:
        head = f"[{'?' * BAR_WIDTH}] {done:,}/{counters.enumerated:,}+ (listing)"
    eta = "" if progress.eta_seconds is None else f" ETA {progress.eta_seconds:,.0f}s"
    return (
        f"{head} deleted {counters.deleted:,} failed {counters.failed:,}"
        f" skipped {counters.skipped:,} {progress.rate_per_second:,.0f}/s{eta}   "
    )


def _summary(operation: Operation) -> str:
    c = operation.counters
    # A dry run deletes nothing: its count is what a real run would delete.
    deleted = (
        f"would delete {c.deleted:,}" if operation.options.dry_run else f"{c.deleted:,} deleted"
    )
    line = (
        f"{operation.id} {operation.status}: {deleted}, {c.failed:,} failed,"
        f" {c.skipped:,} skipped of {c.enumerated:,}"
    )
    if operation.commit_id:
        line += f"; commit {operation.commit_id}"
    if operation.error:
        line += f"; {operation.error}"
    return line


@click.group()
def operations() -> None:
    """Long-running operations: list, status, failures, cancel, run."""


@operations.command("list")
@click.option("--status", default="", help="Only operations in this status.")
@click.option("--kind", default="", help="Only operations of this kind (bulk-delete).")
def operations_list(status: str, kind: str) -> None:
    """Every operation, oldest first."""
    with Lake.open(load_settings()) as lake:
        for operation in lake.bulk_deletes.list(user="", admin=True, status=status, kind=kind):
            path = f"lakefs://{operation.repository}/{operation.branch}/{operation.prefix}"
            click.echo(f"{operation.id}  {operation.status:<22} {path}  by {operation.created_by}")


@operations.command("status")
@click.argument("operation_id")
def operations_status(operation_id: str) -> None:
    """An operation's status and counters."""
    with Lake.open(load_settings()) as lake:
        operation = lake.bulk_deletes.get(operation_id, user="", admin=True)
        click.echo(_summary(operation))
        if not operation.finished:
            click.echo(_bar(operation, lake.clock()))


@operations.command("failures")
@click.argument("operation_id")
@click.option("--after", default="", help="Paths after this one.")
@click.option("--amount", default=100, show_default=True, help="How many.")
def operations_failures(operation_id: str, after: str, amount: int) -> None:
    """The paths an operation failed or skipped, and why."""
    with Lake.open(load_settings()) as lake:
        page = lake.bulk_deletes.failures(
            operation_id, user="", admin=True, after=after, amount=amount
        )
        for path, failure in page.failures:
            click.echo(f"{failure.outcome}\t{path}\t{failure.reason}")
        if page.next:
            click.echo(f"more: --after {page.next}", err=True)


@operations.command("cancel")
@click.argument("operation_id")
def operations_cancel(operation_id: str) -> None:
    """Cancel at the next batch boundary; what is done stays done."""
    with Lake.open(load_settings()) as lake:
        operation = lake.bulk_deletes.cancel(operation_id, user="", admin=True)
        click.echo(f"{operation.id}: cancel requested ({operation.status})")


@operations.command("run")
def operations_run() -> None:
    """Run every unfinished operation in this process until none is left to lease."""
    with Lake.open(load_settings()) as lake:
        for operation in lake.operations.run_once():
            click.echo(_summary(operation))
