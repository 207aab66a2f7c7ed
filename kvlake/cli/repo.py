"""`kvlake repo`: repositories over the API (lakectl's `repo create|list|delete`).

Create, list, delete and a purge's progress go through the server with the user's
credentials, so its policies apply. `untangle-range-tombstones` is an operator's repair
and opens the stores.
"""

from __future__ import annotations

import datetime
import math
import sys
import time
from typing import Any, Final

import click
from tqdm import tqdm

from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, emit_listing, json_option
from kvlake.errors import InvalidInputError
from kvlake.uri import parse_uri

REFRESH: Final = 1.0
"""Seconds between two reads of a purge's progress while `--wait` follows it."""


@click.group()
def repo() -> None:
    """Manage repositories."""


def repository_name(text: str) -> str:
    """A repository named bare (`example`, kvlake's older form) or as `lakefs://example`."""
    return parse_uri(text, need="repository").repository if "://" in text else text


def created(item: dict[str, Any]) -> str:
    """A record's creation time as UTC ISO text (the API gives seconds)."""
    seconds = item.get("creation_date")
    if not isinstance(seconds, int | float):
        return ""
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")


@repo.command("create")
@click.argument("uri")
@click.argument("storage_namespace")
@click.option("-d", "--default-branch", default="main", show_default=True)
@click.option("--sample-data", is_flag=True, help="Fill it with the quickstart sample.")
@json_option
def repo_create(
    uri: str, storage_namespace: str, default_branch: str, sample_data: bool, as_json: bool
) -> None:
    """Create repository URI (lakefs://NAME) over STORAGE_NAMESPACE (local://..., s3://...)."""
    name = repository_name(uri)
    body = {
        "name": name,
        "storage_namespace": storage_namespace,
        "default_branch": default_branch,
        "sample_data": sample_data,
    }
    with ApiClient.open() as client:
        made = client.request("POST", "/repositories", json=body).json()
    stored = made["storage_namespace"]
    if storage_namespace.startswith("local:///") and stored != storage_namespace:
        # A local namespace is a path below the server's blockstore root, never an
        # absolute folder of the machine: say where the data goes instead of hiding it.
        click.echo(
            f"note: {storage_namespace} is a folder below the server's blockstore root"
            f" (KVLAKE_BLOCKSTORE_URL), stored as {stored}; it is not the absolute folder"
            f" {storage_namespace.removeprefix('local://')}",
            err=True,
        )
    if as_json:
        emit_json(made)
        return
    click.echo(
        f"Repository: lakefs://{made['id']}\nStorage namespace: {made['storage_namespace']}\n"
        f"Default branch: {made['default_branch']}"
    )


@repo.command("list")
@click.option("--amount", type=click.IntRange(min=1), default=None, help="At most this many.")
@click.option("--after", default="", help="Names after this one.")
@json_option
def repo_list(amount: int | None, after: str, as_json: bool) -> None:
    """Repositories you may see, by name."""
    with ApiClient.open() as client:
        items = client.pages("/repositories", after=after, limit=amount)
        emit_listing(
            items,
            [
                ("repository", lambda r: r["id"]),
                ("creation date", created),
                ("default ref", lambda r: r["default_branch"]),
                ("storage namespace", lambda r: r["storage_namespace"]),
            ],
            as_json=as_json,
            empty="no repositories",
        )


@repo.command("delete")
@click.argument("uri")
@click.option("--purge", is_flag=True, help="Also delete every blob of its storage namespace.")
@click.option(
    "--wait", is_flag=True, help="With --purge: count down the send delay, show the deletion."
)
@click.option("-y", "--yes", is_flag=True, help="Accepted for lakectl scripts; never asks.")
@json_option
def repo_delete(uri: str, purge: bool, wait: bool, yes: bool, as_json: bool) -> None:
    """Delete repository URI (lakefs://NAME); with --purge, its storage namespace's data too.

    The repository disappears at once. With --purge the server records the intent,
    its cleaner removes the metadata and logs every blob of the namespace, and its
    deletion workers delete them once the server's send delay
    (KVLAKE_DELETION_SEND_DELAY, for readers to finish) has passed. `--wait` counts
    that delay down and then shows the blobs deleted, until none is left; exit 1 if
    some could not be deleted (dead-lettered).
    """
    if wait and not purge:
        raise InvalidInputError("--wait follows a purge; add --purge, or drop --wait")
    name = repository_name(uri)
    with ApiClient.open() as client:
        client.request("DELETE", f"/repositories/{name}", params={"purge": purge or None})
        status = follow_purge(client, name) if wait else None
    if as_json:
        emit_json(
            {"repository": name, "deleted": True, "purge": purge}
            | ({"status": status} if status else {})
        )
    else:
        click.echo(f"deleted repository {name}")
        if status is not None:
            click.echo(
                f"purged {status['storage_namespace']}: {status['deleted']} blobs deleted,"
                f" {status['dead_lettered']} could not be (`kvlake deletion dlq list`"
                " on the server lists them)"
            )
        elif purge:
            click.echo(
                "purge: the server's cleaner logs the namespace's blobs and its deletion"
                " workers delete them after the send delay; follow it with"
                f" `kvlake repo purge-status {name}`"
            )
    if status is not None and status["dead_lettered"]:
        raise SystemExit(1)


@repo.command("purge-status")
@click.argument("uri")
@json_option
def repo_purge_status(uri: str, as_json: bool) -> None:
    """How the purge of deleted repository URI (lakefs://NAME) is going."""
    name = repository_name(uri)
    with ApiClient.open() as client:
        status = client.get(f"/repositories/{name}/purge")
    if as_json:
        emit_json(status)
        return
    click.echo(describe_purge(status))


def describe_purge(status: dict[str, Any]) -> str:
    """One line: the state, and the countdown or the counts."""
    line = f"purge of {status['storage_namespace']}: {status['state']}"
    if status["state"] == "requested":
        return line + "; the server's cleaner has not listed the namespace yet"
    line += f"; {status['logged']} blobs logged, {status['deleted']} deleted"
    line += f", {status['dead_lettered']} dead-lettered"
    if status["state"] == "logged" and status["seconds_until_due"] > 0:
        line += f"; deletion starts in {status['seconds_until_due']:.0f} s (send delay)"
    return line


def follow_purge(client: ApiClient, name: str) -> dict[str, Any]:
    """Count the send delay down, then show the deletion, until the purge is done."""
    path = f"/repositories/{name}/purge"
    status: dict[str, Any] = client.get(path)
    if status["seconds_until_due"] > 0:
        total = math.ceil(status["seconds_until_due"])
        with tqdm(total=total, desc="send delay", unit="s", file=sys.stderr) as bar:
            while status["seconds_until_due"] > 0 and status["state"] != "done":
                bar.n = total - math.ceil(status["seconds_until_due"])
                bar.set_postfix_str("readers finish before blobs go", refresh=False)
                bar.refresh()
                time.sleep(min(REFRESH, status["seconds_until_due"]))
                status = client.get(path)
            bar.n = total
            bar.refresh()
    with tqdm(desc="purge", unit=" blob", file=sys.stderr) as bar:
        while status["state"] != "done":
            bar.total = status["logged"] if status["state"] == "logged" else None
            bar.n = status["deleted"] + status["dead_lettered"]
            bar.refresh()
            time.sleep(REFRESH)
            status = client.get(path)
        bar.total = bar.n = status["deleted"] + status["dead_lettered"]
        bar.refresh()
    return status


@repo.command("untangle-range-tombstones")
@click.argument("name")
@click.argument("branch")
def repo_untangle_range_tombstones(name: str, branch: str) -> None:
    """Repair BRANCH of repository NAME wedged by overlapping range tombstones.

    Two bulk deletes that ran at once on an older kvlake could leave overlapping
    range tombstones, after which every commit and reset of the branch fails.
    This rewrites the overlapping ones as tombstones: the branch shows exactly
    what it showed, nobody's staged writes are touched, and it is safe to run
    again (or on a healthy branch). Then commit the branch again.
    """
    from kvlake.config import load_settings
    from kvlake.lake import Lake

    with Lake.open(load_settings()) as lake:
        repository = lake.graveler.get_repository(name)
        rewritten = lake.graveler.untangle_range_tombstones(repository, branch)
        click.echo(f"{name}/{branch}: {rewritten} overlapping range tombstones rewritten")
