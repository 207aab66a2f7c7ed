"""`kvlake branch`, `tag` and `branch-protect`: lakectl's ref commands over the API.

Every command takes lakectl's `lakefs://repository/ref` URIs and prints a table, or
with `--json` the server's objects; errors are the client's one-line messages.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import click

from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, emit_listing, json_option
from kvlake.errors import InvalidInputError
from kvlake.uri import LakeUri, parse_uri


def ref_path(uri: LakeUri, kind: str = "branches") -> str:
    """The API path of a branch, tag or ref named by `uri`."""
    return f"/repositories/{quote(uri.repository, safe='')}/{kind}/{quote(uri.ref, safe='')}"


def repository_path(uri: LakeUri) -> str:
    return f"/repositories/{quote(uri.repository, safe='')}"


@click.group()
def branch() -> None:
    """Create, list, show, reset, revert and delete branches."""


@branch.command("create")
@click.argument("uri")
@click.option("-s", "--source", required=True, help="The ref it starts from: lakefs://REPO/REF.")
@json_option
def branch_create(uri: str, source: str, as_json: bool) -> None:
    """Create branch URI (lakefs://REPO/BRANCH) at --source."""
    target = parse_uri(uri)
    origin = parse_uri(source)
    if origin.repository != target.repository:
        raise InvalidInputError(
            f"--source {source} is in another repository than {uri}; branch within one"
        )
    with ApiClient.open() as client:
        commit_id = client.request(
            "POST",
            f"{repository_path(target)}/branches",
            json={"name": target.ref, "source": origin.ref},
        ).text.strip('"\n')
    if as_json:
        emit_json({"id": target.ref, "commit_id": commit_id})
        return
    click.echo(f"created branch '{target.ref}' {commit_id}")


@branch.command("list")
@click.argument("uri")
@click.option("--amount", type=click.IntRange(min=1), default=None, help="At most this many.")
@click.option("--after", default="", help="Names after this one.")
@click.option("--prefix", default="", help="Only names starting with this.")
@json_option
def branch_list(uri: str, amount: int | None, after: str, prefix: str, as_json: bool) -> None:
    """Branches of repository URI (lakefs://REPO) and their head commits."""
    target = parse_uri(uri, need="repository")
    with ApiClient.open() as client:
        emit_listing(
            client.pages(
                f"{repository_path(target)}/branches", after=after, limit=amount, prefix=prefix
            ),
            [("branch", lambda b: b["id"]), ("commit id", lambda b: b["commit_id"])],
            as_json=as_json,
            empty=f"no branches in {target.repository}",
        )


@branch.command("show")
@click.argument("uri")
@json_option
def branch_show(uri: str, as_json: bool) -> None:
    """A branch's head commit."""
    target = parse_uri(uri)
    with ApiClient.open() as client:
        found = client.get(ref_path(target))
    if as_json:
        emit_json(found)
        return
    click.echo(f"Commit ID: {found['commit_id']}")


@branch.command("delete")
@click.argument("uri")
@click.option("-y", "--yes", is_flag=True, help="Accepted for lakectl scripts; never asks.")
@json_option
def branch_delete(uri: str, yes: bool, as_json: bool) -> None:
    """Delete branch URI; its commits stay reachable by id until GC expires them."""
    target = parse_uri(uri)
    with ApiClient.open() as client:
        client.request("DELETE", ref_path(target))
    _done(as_json, {"branch": target.ref, "deleted": True}, f"deleted branch '{target.ref}'")


@branch.command("reset")
@click.argument("uri")
@click.option("--prefix", default=None, help="Only the uncommitted changes below this prefix.")
@click.option("--object", "object_path", default=None, help="Only this object's change.")
@click.option("-y", "--yes", is_flag=True, help="Accepted for lakectl scripts; never asks.")
@json_option
def branch_reset(
    uri: str, prefix: str | None, object_path: str | None, yes: bool, as_json: bool
) -> None:
    """Drop uncommitted changes of branch URI (all, below --prefix, or one --object)."""
    target = parse_uri(uri)
    if prefix is not None and object_path is not None:
        raise InvalidInputError("branch reset: pass --prefix or --object, not both")
    body: dict[str, Any] = {"type": "reset"}
    if prefix is not None:
        body = {"type": "common_prefix", "path": prefix}
    elif object_path is not None:
        body = {"type": "object", "path": object_path}
    with ApiClient.open() as client:
        client.request("PUT", ref_path(target), json=body)
    what = body.get("path", "all uncommitted changes")
    _done(as_json, {"branch": target.ref, "reset": body}, f"reset {what} on '{target.ref}'")


@branch.command("revert")
@click.argument("uri")
@click.argument("commits", nargs=-1, required=True)
@click.option("-m", "--parent-number", type=click.IntRange(min=1), default=None)
@click.option("-y", "--yes", is_flag=True, help="Accepted for lakectl scripts; never asks.")
@json_option
def branch_revert(
    uri: str, commits: tuple[str, ...], parent_number: int | None, yes: bool, as_json: bool
) -> None:
    """Commit, on branch URI, the reversal of each of COMMITS (newest first)."""
    target = parse_uri(uri)
    with ApiClient.open() as client:
        for commit in commits:
            client.request(
                "POST",
                f"{ref_path(target)}/revert",
                json={"ref": commit, "parent_number": parent_number or 0},
            )
            if not as_json:
                click.echo(f"reverted {commit} on '{target.ref}'")
        if as_json:
            emit_json(client.get(ref_path(target)))


@click.group()
def tag() -> None:
    """Create, list and delete tags."""


@tag.command("create")
@click.argument("uri")
@click.argument("commit_uri")
@json_option
def tag_create(uri: str, commit_uri: str, as_json: bool) -> None:
    """Tag URI (lakefs://REPO/TAG) at COMMIT_URI (lakefs://REPO/REF, or a commit id)."""
    target = parse_uri(uri)
    ref = parse_uri(commit_uri).ref if "://" in commit_uri else commit_uri
    with ApiClient.open() as client:
        made = client.request(
            "POST", f"{repository_path(target)}/tags", json={"id": target.ref, "ref": ref}
        ).json()
    if as_json:
        emit_json(made)
        return
    click.echo(f"created tag '{made['id']}' ({made['commit_id']})")


@tag.command("list")
@click.argument("uri")
@click.option("--amount", type=click.IntRange(min=1), default=None, help="At most this many.")
@click.option("--after", default="", help="Names after this one.")
@json_option
def tag_list(uri: str, amount: int | None, after: str, as_json: bool) -> None:
    """Tags of repository URI (lakefs://REPO) and their commits."""
    target = parse_uri(uri, need="repository")
    with ApiClient.open() as client:
        emit_listing(
            client.pages(f"{repository_path(target)}/tags", after=after, limit=amount),
            [("tag", lambda t: t["id"]), ("commit id", lambda t: t["commit_id"])],
            as_json=as_json,
            empty=f"no tags in {target.repository}",
        )


@tag.command("delete")
@click.argument("uri")
@click.option("-y", "--yes", is_flag=True, help="Accepted for lakectl scripts; never asks.")
@json_option
def tag_delete(uri: str, yes: bool, as_json: bool) -> None:
    """Delete tag URI (lakefs://REPO/TAG)."""
    target = parse_uri(uri)
    with ApiClient.open() as client:
        client.request("DELETE", ref_path(target, "tags"))
    _done(as_json, {"tag": target.ref, "deleted": True}, f"deleted tag '{target.ref}'")


@click.group("branch-protect")
def branch_protect() -> None:
    """Branch protection rules: branches that take changes only by merge."""


def _rules_path(target: LakeUri) -> str:
    return f"{repository_path(target)}/settings/branch_protection"


@branch_protect.command("list")
@click.argument("uri")
@json_option
def protect_list(uri: str, as_json: bool) -> None:
    """The branch name patterns of repository URI that are protected."""
    target = parse_uri(uri, need="repository")
    with ApiClient.open() as client:
        rules = client.get(_rules_path(target))
    emit_listing(
        rules,
        [("branch name pattern", lambda r: r["pattern"])],
        as_json=as_json,
        empty=f"no protected branches in {target.repository}",
    )


@branch_protect.command("add")
@click.argument("uri")
@click.argument("pattern")
@json_option
def protect_add(uri: str, pattern: str, as_json: bool) -> None:
    """Protect the branches of repository URI whose names match PATTERN (e.g. `main`)."""
    _change_rules(uri, pattern, add=True, as_json=as_json)


@branch_protect.command("delete")
@click.argument("uri")
@click.argument("pattern")
@json_option
def protect_delete(uri: str, pattern: str, as_json: bool) -> None:
    """Stop protecting the branches that PATTERN matched."""
    _change_rules(uri, pattern, add=False, as_json=as_json)


def _change_rules(uri: str, pattern: str, *, add: bool, as_json: bool) -> None:
    target = parse_uri(uri, need="repository")
    with ApiClient.open() as client:
        response = client.request("GET", _rules_path(target))
        rules: list[dict[str, Any]] = response.json()
        patterns = [rule["pattern"] for rule in rules]
        if add == (pattern in patterns):
            state = "already protected" if add else "not a protection rule"
            raise InvalidInputError(
                f"{pattern!r} is {state} of {target.repository}; see "
                f"`kvlake branch-protect list lakefs://{target.repository}`"
            )
        changed = (
            [*rules, {"pattern": pattern}]
            if add
            else [rule for rule in rules if rule["pattern"] != pattern]
        )
        etag = response.headers.get("ETag")
        client.request(
            "PUT", _rules_path(target), json=changed, headers={"If-Match": etag} if etag else None
        )
    verb = "protected" if add else "unprotected"
    _done(as_json, changed, f"{verb} branches matching {pattern!r} in {target.repository}")


def _done(as_json: bool, value: Any, text: str) -> None:
    if as_json:
        emit_json(value)
    else:
        click.echo(text)
