"""`kvlake kv`: check the configured KV store, and copy a whole store into another.

Both commands work below the lake, on a store named by URL, so they run while
no server does (migrate needs every writer stopped). An error names which of
the two stores it is about, and URLs are printed only redacted.
"""

from __future__ import annotations

import contextlib
import sys

import click
from tqdm import tqdm

from kvlake.cli.smoke import smoke
from kvlake.config import load_settings, redact_url
from kvlake.errors import InvalidInputError, KvlakeError
from kvlake.kv import Store, open_store
from kvlake.kv.migrate import Phase, migrate


@click.group()
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
        smoke(store, entries)
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


def _open_named(role: str, url: str) -> Store:
    """`open_store`, with errors saying which of the two URLs they are about."""
    try:
        return open_store(url)
    except KvlakeError as exc:
        raise type(exc)(f"{role} store: {exc}") from exc
