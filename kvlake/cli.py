"""The `kvlake` command line: start the service, inspect settings, move metadata between stores.

Users see one line per failure, never a traceback for a problem they can fix:
every `KvlakeError` leaving a command is printed as `kvlake: error: <message>`
on stderr with exit status 2 (click's own usage errors use 2 as well). Other
exceptions are bugs and keep their traceback. URLs are printed only redacted.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click
import msgspec
import yaml
from tqdm import tqdm

from kvlake import __version__
from kvlake.config import CONFIG_ENV, ENV_PREFIX, load_settings, redact_url
from kvlake.deletion import (
    DeadLetters,
    Purges,
    WorkerReport,
    deletion_status,
    metrics_text,
)
from kvlake.errors import InvalidInputError, KvlakeError, UnavailableError
from kvlake.kv import Store, open_store
from kvlake.kv.migrate import Phase, migrate
from kvlake.lake import Lake

_T = TypeVar("_T")


class _KvlakeGroup(click.Group):
    """Turns a `KvlakeError` from any subcommand into one line and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KvlakeError as exc:
            click.echo(f"kvlake: error: {' '.join(str(exc).split())}", err=True)
            ctx.exit(2)


@click.group(cls=_KvlakeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kvlake")
def main() -> None:
    """kvlake: a versioned data lake whose metadata lives behind a narrow KV interface.

    Settings come from KVLAKE_* variables and an optional YAML file named by
    KVLAKE_CONFIG; `kvlake config show` prints the result.
    """


@main.command()
@click.option("--host", help="Address to listen on (KVLAKE_HOST).")
@click.option("--port", help="Port to listen on (KVLAKE_PORT).")
@click.option("--data-dir", help="Where embedded metadata and blobs live (KVLAKE_DATA_DIR).")
@click.option("--kv", "kv_url", help="Metadata store URL, e.g. postgres://... (KVLAKE_KV_URL).")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Server processes; they share the KV store and behave as one system.",
)
def serve(
    host: str | None, port: str | None, data_dir: str | None, kv_url: str | None, workers: int
) -> None:
    """Run the lakeFS-compatible server (/api/v1) until interrupted.

    With no settings at all it keeps metadata in an embedded SQLite file and
    blobs in a local folder under ~/.kvlake. On first start it creates an admin
    user and prints its access key once (or takes it from
    KVLAKE_INSTALLATION_ACCESS_KEY_ID / KVLAKE_INSTALLATION_SECRET_ACCESS_KEY).
    """
    from kvlake.api.server import serve as run_server

    overrides = {
        f"{ENV_PREFIX}{name}": value
        for name, value in (
            ("HOST", host),
            ("PORT", port),
            ("DATA_DIR", data_dir),
            ("KV_URL", kv_url),
        )
        if value is not None
    }
    run_server(load_settings({**os.environ, **overrides}), workers=workers)


@main.group()
def kv() -> None:
    """Work with KV stores directly, by URL (sqlite:///path/kv.db, postgres://...)."""


@kv.command("check")
@click.option(
    "--entries",
    type=click.IntRange(min=1),
    default=5000,
    show_default=True,
    help="How many keys each step writes or reads.",
)
def kv_check(entries: int) -> None:
    """Check the configured KV store with a smoke run, then exit.

    Opens the store named by KVLAKE_KV_URL, writes,
    reads, compare-and-swaps, scans and deletes ENTRIES keys in a partition
    of its own, prints each step's throughput, checks every result and
    leaves nothing behind. It exits 0 only if the store behaved correctly.
    """
    settings = load_settings()
    click.echo(f"store: {redact_url(settings.kv_url)}")
    with open_store(settings.kv_url) as store:
        _smoke(store, entries)
    click.echo("ok: every call answered correctly and the smoke partition was removed")


@kv.command("migrate")
@click.argument("src_url")
@click.argument("dst_url")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def kv_migrate(src_url: str, dst_url: str, quiet: bool) -> None:
    """Copy every entry from SRC_URL to DST_URL, then verify the copy.

    The destination should be empty or hold an earlier run of the same
    migration: re-running is safe. Stop every writer to both stores first.
    Afterwards both are re-read: partition counts and a SHA-256 over every
    entry must match, or the command fails saying what differs.
    """
    if src_url == dst_url and not src_url.startswith("mem://"):
        raise InvalidInputError(
            f"kv migrate: source and destination are the same store ({redact_url(src_url)}); "
            "name two different stores"
        )
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(_open_named("source", src_url))
        destination = stack.enter_context(_open_named("destination", dst_url))
        bar = stack.enter_context(
            tqdm(
                desc="kv migrate",
                unit=" entries",
                unit_scale=True,
                file=sys.stderr,
                disable=quiet or not sys.stderr.isatty(),
            )
        )
        verified = 0

        def progress(phase: Phase, count: int) -> None:
            nonlocal verified
            if phase == "copy":
                bar.update(count)
            else:
                verified += count
                bar.set_postfix_str(f"verified {verified:,}", refresh=False)

        report = migrate(source, destination, progress=progress)
    click.echo(
        f"migrated {report.partitions} partitions, {report.entries} entries "
        f"({report.bytes} bytes) from {redact_url(src_url)} to {redact_url(dst_url)}"
    )
    click.echo(f"verified: destination matches the source, sha256 {report.checksum}")


@main.group()
def config() -> None:
    """Inspect kvlake's settings."""


@config.command("show")
def config_show() -> None:
    """Print the effective settings as YAML, passwords hidden.

    The output is a valid file for KVLAKE_CONFIG. Precedence: built-in
    defaults, then that file, then KVLAKE_* variables.
    """
    settings = load_settings()
    click.echo(f"# kvlake settings: defaults < {CONFIG_ENV} file < KVLAKE_* variables")
    click.echo(yaml.safe_dump(msgspec.to_builtins(settings.redacted()), sort_keys=False), nl=False)


@contextlib.contextmanager
def _open_lake() -> Iterator[Lake]:
    with Lake.open(load_settings()) as lake:
        yield lake


@main.group()
def repo() -> None:
    """Manage repositories."""


@repo.command("delete")
@click.argument("name")
@click.option("--purge", is_flag=True, help="Also delete every blob of its storage namespace.")
@click.option("--wait", is_flag=True, help="With --purge: run deletion workers until purged.")
def repo_delete(name: str, purge: bool, wait: bool) -> None:
    """Delete repository NAME; with --purge, delete its storage namespace's data as well.

    The repository disappears at once. With --purge the intent is recorded
    first, then a cleaner pass removes the metadata and logs every blob of the
    namespace for deletion; deletion workers (`kvlake deletion run`, or --wait)
    delete them once KVLAKE_DELETION_SEND_DELAY has passed.
    """
    if wait and not purge:
        raise InvalidInputError("repo delete: --wait only applies with --purge; add --purge")
    with _open_lake() as lake:
        purges = lake.purges
        request = purges.delete_repository(name, purge=purge)
        click.echo(f"deleted repository {name}")
        if request is None:
            return
        for failure in lake.cleaner().clean_once().failures:
            click.echo(f"cleaner: {failure}", err=True)
        report = purges.report(name, request.instance_uid)
        if report is None or report.request.state != "logged":
            click.echo("purge: metadata not yet removed; the next cleaner pass logs the blobs")
            return
        namespace, logged = report.request.storage_namespace, report.request.logged
        click.echo(f"purge of {namespace}: {logged} blobs logged for deletion")
        if not wait:
            click.echo("run `kvlake deletion run` to delete them once the send delay has passed")
            return
        worker = lake.deletion_worker()
        while report is not None and (
            report.counts.deleted + report.counts.dead_lettered < report.request.logged
        ):
            if worker.run_once().batches == 0:
                time.sleep(1.0)
            report = purges.report(name, request.instance_uid)
        if report is not None:
            click.echo(
                f"purged {namespace}: {report.counts.deleted} blobs deleted,"
                f" {report.counts.dead_lettered} dead-lettered"
            )


@main.group()
def deletion() -> None:
    """Operate the two-phase deletion log: status, workers, dead letters, purges."""


@deletion.command("status")
def deletion_status_command() -> None:
    """Show pending, due and leased records per partition, and the dead letters."""
    with _open_lake() as lake:
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


@deletion.command("metrics")
def deletion_metrics() -> None:
    """Print the deletion metrics in the Prometheus text format."""
    with _open_lake() as lake:
        click.echo(metrics_text(lake.deletion_log), nl=False)


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
    with _open_lake() as lake:
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
    with _open_lake() as lake:
        for report in Purges(lake.deletion_log, lake.graveler, lake.blockstore).reports():
            request, counts = report.request, report.counts
            click.echo(
                f"{request.repository}/{request.instance_uid} {request.storage_namespace}"
                f" {request.state}: logged {request.logged}, deleted {counts.deleted},"
                f" dead-lettered {counts.dead_lettered}"
            )


@deletion.group()
def dlq() -> None:
    """Records workers gave up on: list, requeue or drop them."""


@dlq.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
def dlq_list(limit: int) -> None:
    """List dead letters: id, origin, repository, address, attempts and reason."""
    with _open_lake() as lake:
        for shown, letter in enumerate(DeadLetters(lake.deletion_log).scan()):
            if shown >= limit:
                click.echo(f"(more dead letters; raise --limit above {limit})")
                break
            record = letter.record
            if record is None:
                click.echo(f"{letter.id} (undecodable record): {letter.reason}")
                continue
            click.echo(
                f"{letter.id} {record.origin} {record.repository}/{record.instance_uid}"
                f" {record.storage_namespace} {record.address} attempts={record.attempts}:"
                f" {letter.reason}"
            )


def _chosen(ids: tuple[str, ...], every: bool) -> list[str] | None:
    if every == bool(ids):
        raise InvalidInputError("name dead letter ids, or pass --all (not both)")
    return None if every else list(ids)


@dlq.command("requeue")
@click.argument("ids", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Requeue every dead letter.")
def dlq_requeue(ids: tuple[str, ...], every: bool) -> None:
    """Put dead letters back in the log, due now; workers check them afresh."""
    with _open_lake() as lake:
        count = DeadLetters(lake.deletion_log).requeue(_chosen(ids, every))
    click.echo(f"requeued {count} dead letters")


@dlq.command("drop")
@click.argument("ids", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Drop every dead letter.")
def dlq_drop(ids: tuple[str, ...], every: bool) -> None:
    """Forget dead letters; their blobs stay where they are."""
    with _open_lake() as lake:
        count = DeadLetters(lake.deletion_log).drop(_chosen(ids, every))
    click.echo(f"dropped {count} dead letters")


def _open_named(role: str, url: str) -> Store:
    """`open_store`, with errors saying which of the two URLs they are about."""
    try:
        return open_store(url)
    except KvlakeError as exc:
        raise type(exc)(f"{role} store: {exc}") from exc


def _timed(label: str, count: int, step: Callable[[], _T]) -> _T:
    started = time.perf_counter()
    result = step()
    seconds = max(time.perf_counter() - started, 1e-9)
    click.echo(f"  {label:<15}{count:>9} entries {seconds:8.3f} s {count / seconds:>12,.0f}/s")
    return result


def _smoke(store: Store, entries: int) -> None:
    partition = f"kvlake-smoke/{uuid.uuid4().hex}".encode()
    keys = [b"key/%09d" % i for i in range(entries)]
    items = [(k, b"v3:" + k) for k in keys]

    def set_each() -> None:
        for key in keys:
            store.set(partition, key, b"v1:" + key)

    def swap_each() -> None:
        for key, (_, predicate) in zip(keys, got, strict=True):
            store.set_if(partition, key, b"v2:" + key, predicate)

    def delete_half() -> None:
        for key in keys[::2]:
            store.delete(partition, key)

    try:
        _timed("set", entries, set_each)
        got = _timed("get", entries, lambda: [store.get(partition, k) for k in keys])
        _expect(all(v == b"v1:" + k for k, (v, _) in zip(keys, got, strict=True)), "get", "set")
        _timed("set_if", entries, swap_each)
        _timed("set_many", entries, lambda: store.set_many(partition, items))
        scanned = _timed("scan", entries, lambda: list(store.scan(partition)))
        _expect(scanned == items, "scan", "set_many, in ascending key order")
        _timed("delete", len(keys[::2]), delete_half)
        _timed("drop_partition", len(keys[1::2]), lambda: store.drop_partition(partition))
        _expect(not list(store.scan(partition)), "scan after drop_partition", "no entries")
    except BaseException:
        # Best effort only: the first error is the one worth reporting.
        with contextlib.suppress(KvlakeError):
            store.drop_partition(partition)
        raise


def _expect(ok: bool, step: str, wanted: str) -> None:
    if not ok:
        raise UnavailableError(
            f"KV smoke run: {step} did not return what {wanted} should give; the store "
            "behaves incorrectly: check its driver and database"
        )
