"""`kvlake lock acquire|release|list`: object locks over the API, held by the calling user.

A lock is a lease on an object path: other users' uploads to it fail and bulk deletes
skip it until it expires or is released. Over the API the owner is the user whose key
the CLI uses (an admin may `--force` another's release). Releasing a path that holds no
live lock is an error (exit 4) rather than a silent success, so a typo is noticed.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

import click

from kvlake.cli.client import EXIT_NOT_FOUND, ApiClient, ApiError
from kvlake.cli.output import emit_json, emit_listing, json_option
from kvlake.cli.repo import repository_name


def _path(repository: str) -> str:
    return f"/repositories/{repository_name(repository)}/locks"


@click.group()
def lock() -> None:
    """Object locks: leases on object paths that uploads and bulk deletes respect."""


@lock.command("acquire")
@click.argument("repository")
@click.argument("path")
@click.option(
    "--ttl", type=click.IntRange(1, 7 * 24 * 3600), default=300, show_default=True,
    help="Seconds it lasts (taking it again renews it).",
)  # fmt: skip
@json_option
def lock_acquire(repository: str, path: str, ttl: int, as_json: bool) -> None:
    """Take or renew a write lock on PATH in REPOSITORY (a name or lakefs://NAME)."""
    with ApiClient.open() as client:
        taken = client.request("PUT", _path(repository), params={"path": path, "ttl": ttl}).json()
    if as_json:
        emit_json(taken)
        return
    click.echo(f"locked {path} for {taken['owner']} until {_iso(taken['expires_at'])}")


@lock.command("release")
@click.argument("repository")
@click.argument("path")
@click.option("--force", is_flag=True, help="Release it whoever holds it (admins).")
@json_option
def lock_release(repository: str, path: str, force: bool, as_json: bool) -> None:
    """Release the write lock on PATH; an error if no live lock is there."""
    with ApiClient.open() as client:
        held = [
            found for found in client.pages(_path(repository), prefix=path) if found["path"] == path
        ]
        if not held:
            raise ApiError(
                f"no live lock on {path!r} in {repository_name(repository)}: nothing released;"
                f" `kvlake lock list {repository_name(repository)}` shows the live ones",
                EXIT_NOT_FOUND,
            )
        client.request("DELETE", _path(repository), params={"path": path, "force": force or None})
    if as_json:
        emit_json({"path": path, "released": True, "owner": held[0]["owner"]})
        return
    click.echo(f"released {path} (held by {held[0]['owner']})")


@lock.command("list")
@click.argument("repository")
@click.option("--prefix", default="", help="Only paths starting with this.")
@json_option
def lock_list(repository: str, prefix: str, as_json: bool) -> None:
    """Live write locks in REPOSITORY."""
    with ApiClient.open() as client:
        emit_listing(
            client.pages(_path(repository), prefix=prefix or None),
            [
                ("path", lambda found: found["path"]),
                ("owner", lambda found: found["owner"]),
                ("expires", lambda found: _left(found)),
            ],
            as_json=as_json,
            empty=f"no live locks in {repository_name(repository)}",
        )


def _left(found: dict[str, Any]) -> str:
    return f"{_iso(found['expires_at'])} ({found['expires_at'] - time.time():,.0f}s left)"


def _iso(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
