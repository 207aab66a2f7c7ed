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
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import click
import msgspec
import yaml
from tqdm import tqdm

from kvlake import __version__
from kvlake.config import CONFIG_ENV, ENV_PREFIX, load_settings, redact_url
from kvlake.errors import InvalidInputError, KvlakeError, UnavailableError
from kvlake.kv import Store, open_store
from kvlake.kv.migrate import Phase, migrate

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
