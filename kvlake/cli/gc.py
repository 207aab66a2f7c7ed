"""`kvlake gc`: garbage collection; `kvlake gc rules` reads and edits retention rules.

The rules are lakeFS's (see kvlake/graveler/lifecycle/gcrules.py), in lakeFS's JSON shape,
so a file written for `lakectl gc set-config` works here unchanged:

    {"default_retention_days": 21, "branches": [{"branch_id": "main", "retention_days": 28}]}

The rules commands go through the API as the user (lakectl's `gc set-config`,
`get-config`, `delete-config`, and kvlake's older `gc rules get|set|delete` spelling of
the same calls), as do `gc run` and `gc status`, which start and follow a run on the
server's Spark (kvlake/cli/gc_run.py).
"""

from __future__ import annotations

import json
from typing import BinaryIO

import click
import msgspec

from kvlake.api.wire import retention as wire
from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, emit_table, json_option
from kvlake.cli.repo import repository_name
from kvlake.errors import InvalidInputError
from kvlake.graveler import GarbageCollectionRules, make_rules

MAX_RULES_FILE = 4 * 1024 * 1024
"""Bytes a rules file may have: 10,000 branch rules fit with room to spare."""


@click.group()
def gc() -> None:
    """Garbage collection of committed data no retained commit references."""


@gc.group()
def rules() -> None:
    """Retention rules: how many days each branch's history is kept."""


def _rules_path(repository: str) -> str:
    return f"/repositories/{repository_name(repository)}/settings/gc_rules"


@rules.command("get")
@click.argument("repository")
def rules_get(repository: str) -> None:
    """Print REPOSITORY's rules as JSON (an error if it has none)."""
    with ApiClient.open() as client:
        found = client.get(_rules_path(repository))
    click.echo(json.dumps(found, indent=2))


@gc.command("get-config")
@click.argument("uri")
@json_option
def get_config(uri: str, as_json: bool) -> None:
    """Repository URI's retention rules (lakefs://REPO): a table, or lakeFS's JSON."""
    with ApiClient.open() as client:
        found = client.get(_rules_path(uri))
    if as_json:
        emit_json(found)
        return
    click.echo(f"default retention days: {found['default_retention_days']}")
    emit_table(
        ((b["branch_id"], b["retention_days"]) for b in found.get("branches", [])),
        ["branch", "retention days"],
        empty="no branch rules",
    )


@gc.command("set-config")
@click.argument("uri")
@click.option(
    "-f",
    "--filename",
    "file",
    type=click.File("rb"),
    required=True,
    help="Rules JSON file, `-` for stdin.",
)
@json_option
def set_config(uri: str, file: BinaryIO, as_json: bool) -> None:
    """Replace repository URI's retention rules with lakeFS's JSON from --filename."""
    wanted = _read_rules(file)
    _put(uri, wanted)
    _said(as_json, uri, wanted)


@gc.command("delete-config")
@click.argument("uri")
@json_option
def delete_config(uri: str, as_json: bool) -> None:
    """Delete repository URI's rules (garbage collection then refuses to run on it)."""
    with ApiClient.open() as client:
        client.request("DELETE", _rules_path(uri))
    name = repository_name(uri)
    if as_json:
        emit_json({"repository": name, "deleted": True})
    else:
        click.echo(f"deleted garbage collection rules of {name}")


def _put(repository: str, rules: GarbageCollectionRules) -> None:
    body = {
        "default_retention_days": rules.default_retention_days,
        "branches": [
            {"branch_id": branch, "retention_days": days}
            for branch, days in sorted(rules.branch_retention_days.items())
        ],
    }
    with ApiClient.open() as client:
        client.request("PUT", _rules_path(repository), json=body)


def _said(as_json: bool, repository: str, wanted: GarbageCollectionRules) -> None:
    name = repository_name(repository)
    if as_json:
        emit_json({"repository": name, "default_retention_days": wanted.default_retention_days})
        return
    click.echo(
        f"set garbage collection rules of {name}: {wanted.default_retention_days} days by"
        f" default, {len(wanted.branch_retention_days)} branch rules"
    )


@rules.command("set")
@click.argument("repository")
@click.argument("file", type=click.File("rb"), required=False)
@click.option("--default-days", type=int, help="Days retained on branches without a rule.")
@click.option(
    "--branch",
    "branches",
    multiple=True,
    metavar="NAME=DAYS",
    help="Days retained on one branch; repeat for more branches.",
)
def rules_set(
    repository: str, file: BinaryIO | None, default_days: int | None, branches: tuple[str, ...]
) -> None:
    """Replace REPOSITORY's rules with those in FILE (JSON, `-` for stdin) or the options.

    0 days keeps only branch heads; negative days are refused.
    """
    if file is not None:
        if default_days is not None or branches:
            raise InvalidInputError(
                "gc rules set: give a rules FILE or --default-days/--branch, not both"
            )
        wanted = _read_rules(file)
    elif default_days is None:
        raise InvalidInputError(
            "gc rules set: give a rules FILE, or --default-days N (with any --branch NAME=DAYS)"
        )
    else:
        wanted = make_rules(default_days, [_branch_rule(text) for text in branches])
    _put(repository, wanted)
    _said(False, repository, wanted)


@rules.command("delete")
@click.argument("repository")
def rules_delete(repository: str) -> None:
    """Delete REPOSITORY's rules (garbage collection then refuses to run on it)."""
    with ApiClient.open() as client:
        client.request("DELETE", _rules_path(repository))
    click.echo(f"deleted garbage collection rules of {repository}")


def _read_rules(file: BinaryIO) -> GarbageCollectionRules:
    name = getattr(file, "name", "-")
    raw = file.read(MAX_RULES_FILE + 1)
    if len(raw) > MAX_RULES_FILE:
        raise InvalidInputError(f"rules file {name} is over {MAX_RULES_FILE} bytes")
    try:
        parsed = msgspec.json.decode(raw, type=wire.GarbageCollectionRules, strict=True)
    except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
        raise InvalidInputError(
            f"rules file {name} is not valid rules JSON: {exc}; write it as"
            ' {"default_retention_days": N, "branches": [{"branch_id": ..., "retention_days": N}]}'
        ) from None
    return make_rules(
        parsed.default_retention_days, [(b.branch_id, b.retention_days) for b in parsed.branches]
    )


def _branch_rule(text: str) -> tuple[str, int]:
    name, equals, days = text.rpartition("=")
    if equals and name and days.lstrip("-").isdigit():
        return name, int(days)
    raise InvalidInputError(f"--branch {text!r} is not NAME=DAYS; write e.g. --branch main=30")


def _attach_runs() -> None:
    # Runs are their own module (they follow a Spark job); attached here so `kvlake gc` has them.
    from kvlake.cli.gc_run import gc_run, gc_status

    gc.add_command(gc_run)
    gc.add_command(gc_status)


_attach_runs()
