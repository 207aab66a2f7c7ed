"""`kvlake commit`, `log`, `diff`, `merge`, `cherry-pick`: lakectl's history commands.

They change or read history through the API, as the user, so branch protection,
policies and actions apply exactly as for any other client.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import click

from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, json_option
from kvlake.cli.pairs import parse_pairs
from kvlake.cli.refs import ref_path
from kvlake.cli.repo import created
from kvlake.cli.times import parse_time
from kvlake.errors import InvalidInputError
from kvlake.uri import parse_uri


def _echo_commit(commit: dict[str, Any]) -> None:
    click.echo(f"ID: {commit['id']}")
    click.echo(f"Author: {commit['committer']}")
    click.echo(f"Date: {created(commit)} UTC")
    if len(commit.get("parents", [])) > 1:
        click.echo(f"Merge: {' '.join(p[:16] for p in commit['parents'])}")
    for key, value in sorted((commit.get("metadata") or {}).items()):
        click.echo(f"Metadata: {key} = {value}")
    click.echo("")
    for line in commit["message"].splitlines() or [""]:
        click.echo(f"    {line}")
    click.echo("")


@click.command()
@click.argument("uri")
@click.option("-m", "--message", required=True, help="The commit message.")
@click.option("--meta", multiple=True, help="Metadata KEY=VALUE (repeatable).")
@click.option("--allow-empty-commit", is_flag=True, help="Commit even with no changes.")
@json_option
def commit(
    uri: str, message: str, meta: tuple[str, ...], allow_empty_commit: bool, as_json: bool
) -> None:
    """Commit the staged changes of branch URI (lakefs://REPO/BRANCH)."""
    target = parse_uri(uri)
    body = {
        "message": message,
        "metadata": parse_pairs(meta, option="--meta"),
        "allow_empty": allow_empty_commit,
    }
    with ApiClient.open() as client:
        made = client.request("POST", f"{ref_path(target)}/commits", json=body).json()
    if as_json:
        emit_json(made)
        return
    click.echo(f"Branch: {target}\nCommit for branch '{target.ref}' completed.\n")
    _echo_commit(made)


@click.command()
@click.argument("uri")
@click.option("--amount", type=click.IntRange(min=1), default=None, help="At most this many.")
@click.option("--after", default="", help="Commits after this id (paging).")
@click.option("--first-parent", is_flag=True, help="Follow only the first parent of merges.")
@click.option("--since", default=None, help="Only commits since: 2026-11-01, an ISO time, 3d, 12h.")
@json_option
def log(
    uri: str,
    amount: int | None,
    after: str,
    first_parent: bool,
    since: str | None,
    as_json: bool,
) -> None:
    """Commits reachable from URI (lakefs://REPO/REF), newest first."""
    target = parse_uri(uri)
    since_time = None if since is None else parse_time(since, option="--since").isoformat()
    with ApiClient.open() as client:
        commits = client.pages(
            f"{ref_path(target, 'refs')}/commits",
            after=after,
            limit=amount,
            first_parent=first_parent or None,
            since=since_time,
        )
        if as_json:
            emit_json(list(commits))
            return
        shown = False
        for found in commits:
            _echo_commit(found)
            shown = True
        if not shown:
            click.echo(f"no commits at {target}")


@click.command()
@click.argument("left")
@click.argument("right", required=False)
@click.option("--prefix", default="", help="Only paths below this prefix.")
@json_option
def diff(left: str, right: str | None, prefix: str, as_json: bool) -> None:
    """Changes from LEFT to RIGHT, or a branch's uncommitted changes with LEFT only."""
    start = parse_uri(left)
    if right is None:
        path = f"{ref_path(start)}/diff"
        label = f"uncommitted changes on {start}"
    else:
        end = parse_uri(right)
        if end.repository != start.repository:
            raise InvalidInputError(f"{left} and {right} are in different repositories")
        path = f"{ref_path(start, 'refs')}/diff/{quote(end.ref, safe='')}"
        label = f"changes from {start} to {end}"
    with ApiClient.open() as client:
        changes = client.pages(path, prefix=prefix or None)
        if as_json:
            emit_json(list(changes))
            return
        shown = 0
        for change in changes:
            sign = {"added": "+", "removed": "-", "changed": "~", "conflict": "!"}.get(
                change["type"], "?"
            )
            click.echo(f"{sign} {change['type']} {change['path']}")
            shown += 1
        click.echo(f"{label}: {shown} changes" if shown else f"{label}: none")


@click.command()
@click.argument("source")
@click.argument("destination")
@click.option(
    "--strategy",
    type=click.Choice(["dest-wins", "source-wins"]),
    default=None,
    help="Which side a conflict takes (default: a conflict fails the merge).",
)
@click.option("-m", "--message", default="", help="The merge commit's message.")
@click.option("--meta", multiple=True, help="Metadata KEY=VALUE (repeatable).")
@json_option
def merge(
    source: str,
    destination: str,
    strategy: str | None,
    message: str,
    meta: tuple[str, ...],
    as_json: bool,
) -> None:
    """Merge SOURCE (lakefs://REPO/REF) into DESTINATION (lakefs://REPO/BRANCH)."""
    src, dst = parse_uri(source), parse_uri(destination)
    if src.repository != dst.repository:
        raise InvalidInputError(f"{source} and {destination} are in different repositories")
    body: dict[str, Any] = {"message": message, "metadata": parse_pairs(meta, option="--meta")}
    if strategy:
        body["strategy"] = strategy
    path = f"{ref_path(src, 'refs')}/merge/{quote(dst.ref, safe='')}"
    with ApiClient.open() as client:
        result = client.request("POST", path, json=body).json()
    if as_json:
        emit_json(result)
        return
    click.echo(
        f'Source: {src}\nDestination: {dst}\nMerged "{src.ref}" into "{dst.ref}" to '
        f'get "{result["reference"]}".'
    )


@click.command("cherry-pick")
@click.argument("commit_ref")
@click.argument("branch_uri")
@click.option("-m", "--parent-number", type=click.IntRange(min=1), default=None)
@json_option
def cherry_pick(commit_ref: str, branch_uri: str, parent_number: int | None, as_json: bool) -> None:
    """Apply the changes of COMMIT_REF (lakefs://REPO/COMMIT) onto BRANCH_URI as a commit."""
    picked, target = parse_uri(commit_ref), parse_uri(branch_uri)
    if picked.repository != target.repository:
        raise InvalidInputError(f"{commit_ref} and {branch_uri} are in different repositories")
    body = {"ref": picked.ref, "parent_number": parent_number or 0}
    with ApiClient.open() as client:
        made = client.request("POST", f"{ref_path(target)}/cherry-pick", json=body).json()
    if as_json:
        emit_json(made)
        return
    click.echo(f"Branch: {target}\n")
    _echo_commit(made)
