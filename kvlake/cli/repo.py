"""`kvlake repo`: repositories over the API (lakectl's `repo create|list|delete`).

Create, list and delete go through the server with the user's credentials, so its
policies apply. `untangle-hidden-ranges` is an operator's repair and opens the stores.
"""

from __future__ import annotations

import datetime
from typing import Any

import click

from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, emit_listing, json_option
from kvlake.cli.uri import parse_uri


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
@click.option("-y", "--yes", is_flag=True, help="Accepted for lakectl scripts; never asks.")
@json_option
def repo_delete(uri: str, purge: bool, yes: bool, as_json: bool) -> None:
    """Delete repository URI (lakefs://NAME); with --purge, its storage namespace's data too.

    The repository disappears at once. With --purge the server records the intent,
    its cleaner removes the metadata and logs every blob of the namespace, and its
    deletion workers delete them once KVLAKE_DELETION_SEND_DELAY has passed
    (`kvlake deletion status` shows the progress on the server's side).
    """
    name = repository_name(uri)
    with ApiClient.open() as client:
        client.request("DELETE", f"/repositories/{name}", params={"purge": purge or None})
    if as_json:
        emit_json({"repository": name, "deleted": True, "purge": purge})
        return
    click.echo(f"deleted repository {name}")
    if purge:
        click.echo(
            "purge: the server's cleaner logs the namespace's blobs and its deletion workers "
            "delete them after KVLAKE_DELETION_SEND_DELAY; watch with `kvlake deletion status`"
        )


@repo.command("untangle-hidden-ranges")
@click.argument("name")
@click.argument("branch")
def repo_untangle_hidden_ranges(name: str, branch: str) -> None:
    """Repair BRANCH of repository NAME wedged by overlapping hidden ranges.

    Two bulk deletes that ran at once on an older kvlake could leave overlapping
    hidden-range records, after which every commit and reset of the branch fails.
    This rewrites the overlapping ones as tombstones: the branch shows exactly
    what it showed, nobody's staged writes are touched, and it is safe to run
    again (or on a healthy branch). Then commit the branch again.
    """
    from kvlake.config import load_settings
    from kvlake.lake import Lake

    with Lake.open(load_settings()) as lake:
        repository = lake.graveler.get_repository(name)
        rewritten = lake.graveler.untangle_hidden_ranges(repository, branch)
        click.echo(f"{name}/{branch}: {rewritten} overlapping hidden-range records rewritten")
