"""`kvlake delete` and `kvlake operations list|status|failures|cancel|watch`: long-running
work of every kind, over the HTTP API with the user's own credentials (the server's
policies decide what they may do and see: their own operations, or all for an admin).

Where the server is and who the user is come from lakectl's settings, read by the
CLI's one client (kvlake/cli/client.py), whose errors carry the documented exit codes.

Every command prints text, or the API's JSON with `--json`; `watch` draws a
tqdm progress bar on stderr until the operation ends, and exits 1 if it failed
or completed with errors (as `kvlake delete --wait` does, which follows the bulk delete
it created the same way).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from typing import Any, Final

import click
from tqdm import tqdm

from kvlake.cli.client import ApiClient
from kvlake.cli.pairs import parse_pairs
from kvlake.cli.times import FORMS, parse_time

FINISHED: Final = frozenset({"completed", "completed_with_errors", "failed", "cancelled"})
BULK_DELETE: Final = "/operations/bulk-delete"
REFRESH: Final = 0.5
"""Seconds between two status reads of `watch`."""


def describe(status: Mapping[str, Any]) -> str:
    """One line: id, kind, status, path and counters; a dry run says "would delete"."""
    deleted = "would delete" if status.get("dry_run") else "deleted"
    total = status.get("total_count")
    line = (
        f"{status['operation_id']}  {status['kind']:<11} {status['status']:<22}"
        f" {status['path']}  {deleted} {status['deleted_count']}"
        f" failed {status['failed_count']} skipped {status['skipped_count']}"
        f" of {'?' if total is None else total}  by {status['created_by']}"
    )
    if status.get("commit_id"):
        line += f"  commit {status['commit_id']}"
    if status.get("error"):
        line += f"  error: {status['error']}"
    return line


def _echo(value: Any, as_json: bool, text: str) -> None:
    click.echo(json.dumps(value, indent=2) if as_json else text)


_JSON = click.option("--json", "as_json", is_flag=True, help="Print the API's JSON.")


@click.command("list")
@click.option("--status", default="", help="Only operations in this status.")
@click.option(
    "--kind",
    default="",
    help="Only operations of this kind (bulk-delete, gc-run, import, dump, restore).",
)
@click.option("--repository", default="", help="Only operations on this repository.")
@click.option("--creator", default="", help="Only operations this user (id) created.")
@_JSON
def list_operations(status: str, kind: str, repository: str, creator: str, as_json: bool) -> None:
    """Your operations of every kind (an admin's: everyone's), oldest first."""
    results: list[Any] = []
    after = ""
    with ApiClient.open() as api:
        while True:
            page = api.request(
                "GET",
                "/operations",
                params={
                    "status": status or None,
                    "kind": kind or None,
                    "repository": repository or None,
                    "creator": creator or None,
                    "after": after or None,
                    "amount": 1000,
                },
            ).json()
            results += page["results"]
            if not page["pagination"]["has_more"]:
                break
            after = page["pagination"]["next_offset"]
    _echo(results, as_json, "\n".join(describe(status) for status in results))


@click.command("status")
@click.argument("operation_id")
@_JSON
def operation_status(operation_id: str, as_json: bool) -> None:
    """An operation's status, counters, rate and ETA, whatever its kind."""
    with ApiClient.open() as api:
        status = api.request("GET", f"/operations/{operation_id}").json()
    _echo(status, as_json, describe(status))


@click.command("failures")
@click.argument("operation_id")
@click.option("--after", default="", help="Paths after this one.")
@click.option("--amount", default=100, show_default=True, help="How many.")
@_JSON
def operation_failures(operation_id: str, after: str, amount: int, as_json: bool) -> None:
    """The paths a bulk delete failed or skipped, and why."""
    with ApiClient.open() as api:
        page = api.request(
            "GET",
            f"/operations/bulk-delete/status/{operation_id}/failures",
            params={"after": after or None, "amount": amount},
        ).json()
    rows = page["results"]
    _echo(page, as_json, "\n".join(f"{r['outcome']}\t{r['path']}\t{r['reason']}" for r in rows))
    if page["pagination"]["has_more"] and not as_json:
        click.echo(f"more: --after {page['pagination']['next_offset']}", err=True)


@click.command("cancel")
@click.argument("operation_id")
@_JSON
def cancel_operation(operation_id: str, as_json: bool) -> None:
    """Cancel at the next batch boundary; what is done stays done. A finished operation
    cannot be cancelled: the error names its final status."""
    with ApiClient.open() as api:
        status = api.request("DELETE", f"/operations/{operation_id}").json()
    _echo(status, as_json, f"{operation_id}: cancel requested ({status['status']})")


@click.command("watch")
@click.argument("operation_id")
@_JSON
def watch_operation(operation_id: str, as_json: bool) -> None:
    """Draw the operation's progress until it ends; exit 1 if it failed or had errors."""
    with ApiClient.open() as api:
        status = _follow(api, operation_id)
    _echo(status, as_json, describe(status))
    _exit_for(status)


def _follow(api: ApiClient, operation_id: str) -> Any:
    """Draw the operation's progress bar on stderr until it ends; its final status."""
    status = api.get(f"/operations/{operation_id}")
    with tqdm(desc=str(status["kind"]), unit=" obj", file=sys.stderr) as bar:
        while True:
            _draw(bar, status)
            if status["status"] in FINISHED:
                return status
            time.sleep(REFRESH)
            status = api.get(f"/operations/{operation_id}")


def _exit_for(status: Mapping[str, Any]) -> None:
    if status["status"] in ("failed", "completed_with_errors"):
        raise SystemExit(1)


@click.command("delete")
@click.argument("uri")
@click.option("--wait", is_flag=True, help="Show its progress until it ends.")
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
@click.option("--modified-before", default=None, help=f"Only objects older: {FORMS}.")
@click.option("--modified-after", default=None, help=f"Only objects newer: {FORMS}.")
@click.option(
    "--metadata",
    multiple=True,
    help="KEY=VALUE: only objects whose user metadata holds it (repeat: all must match).",
)
@click.option("--engine", default="", help="local, spark or auto (default: the server's).")
@_JSON
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
    as_json: bool,
) -> None:
    """Delete every object under URI (lakefs://repo/branch/prefix/), asynchronously: the
    server (or a `kvlake worker`) runs it; --wait follows it to the end."""
    filters: dict[str, Any] = {"glob": glob, "metadata": parse_pairs(metadata, option="--metadata")}
    filters |= {"min_size": min_size, "max_size": max_size}
    for name, value in (("modified_before", modified_before), ("modified_after", modified_after)):
        if value is not None:
            filters[name] = parse_time(value, option=f"--{name.replace('_', '-')}").timestamp()
    body: dict[str, Any] = {
        "filters": {k: v for k, v in filters.items() if v is not None},
        "dry_run": dry_run,
        "purge": not no_purge,
        "engine": engine,
    }
    if commit_message is not None:
        body["commit"] = {"message": commit_message}
    with ApiClient.open() as api:
        created = api.request("PUT", BULK_DELETE, params={"path": uri}, json=body).json()
        operation_id = created["operation_id"]
        if not wait:
            _echo(
                created,
                as_json,
                f"operation {operation_id}: bulk delete of {uri}\n"
                f"follow it with `kvlake operations watch {operation_id}`",
            )
            return
        click.echo(f"operation {operation_id}: bulk delete of {uri}", err=True)
        status = _follow(api, operation_id)
    _echo(status, as_json, _summary(status))
    _exit_for(status)


def _summary(status: Mapping[str, Any]) -> str:
    """The final line of `delete --wait`: id, status and the server's summary of it."""
    line = f"{status['operation_id']} {status['status']}: {status['summary']}"
    if status.get("commit_id"):
        line += f"; commit {status['commit_id']}"
    if status.get("error"):
        line += f"; {status['error']}"
    return line


def _draw(bar: tqdm[Any], status: Mapping[str, Any]) -> None:
    """Move the bar to the processed count (never back) and show the counters."""
    processed = status["deleted_count"] + status["failed_count"] + status["skipped_count"]
    bar.total = status["total_count"]
    bar.n = max(bar.n, processed)
    word = "would delete" if status["dry_run"] else "deleted"
    bar.set_postfix_str(
        f"{status['status']}; {word} {status['deleted_count']}, failed"
        f" {status['failed_count']}, skipped {status['skipped_count']}",
        refresh=False,
    )
    bar.refresh()


COMMANDS: Final = (
    list_operations,
    operation_status,
    operation_failures,
    cancel_operation,
    watch_operation,
)
"""The `kvlake operations` commands that go over the API (`run` works on the lake)."""
