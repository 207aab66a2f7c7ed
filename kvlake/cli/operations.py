"""`kvlake delete` and `kvlake operations`: bulk deletes (`kvlake lock` is in locks.py).

`delete` and `operations run` run on the lake directly, as `kvlake repo`
does: `delete` records the operation, which any running server or worker picks
up; with `--wait` this process runs it too (leases decide who works on it) and
draws a progress bar until it ends. They act with the store's own rights. The
other `kvlake operations` commands (list, status, watch, cancel, failures) go
over the HTTP API as the lakectl user: kvlake/cli/operations_api.py.
"""

from __future__ import annotations

import datetime
import getpass
import sys
import threading

import click

from kvlake.cli.operations_api import COMMANDS
from kvlake.config import load_settings
from kvlake.errors import InvalidInputError
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


def _pairs(values: tuple[str, ...]) -> dict[str, str]:
    """`--metadata KEY=VALUE` options as a mapping. Raises InvalidInputError."""
    pairs: dict[str, str] = {}
    for value in values:
        key, equals, wanted = value.partition("=")
        if not equals or not key:
            raise InvalidInputError(f"--metadata {value!r} is not KEY=VALUE")
        pairs[key] = wanted
    return pairs


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
@click.option(
    "--metadata",
    multiple=True,
    help="KEY=VALUE: only objects whose user metadata holds it (repeat: all must match).",
)
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
    metadata: tuple[str, ...],
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
            metadata=_pairs(metadata),
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
    deleted = "would delete" if operation.options.dry_run else "deleted"
    return (
        f"{head} {deleted} {counters.deleted:,} failed {counters.failed:,}"
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
    """Long-running operations of every kind: list, status, failures, cancel, watch (over
    the API, as your lakectl user), and run (here, on the lake)."""


for _command in COMMANDS:
    operations.add_command(_command)


@operations.command("run")
def operations_run() -> None:
    """Run every unfinished operation in this process until none is left to lease."""
    with Lake.open(load_settings()) as lake:
        for operation in lake.operations.run_once():
            click.echo(_summary(operation))
