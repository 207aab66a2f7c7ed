"""`kvlake gc`: garbage collection; `kvlake gc rules` reads and edits retention rules.

The rules are lakeFS's (see kvlake/graveler/gcrules.py), in lakeFS's JSON shape,
so a file written for `lakectl gc set-config` works here unchanged:

    {"default_retention_days": 21, "branches": [{"branch_id": "main", "retention_days": 28}]}

Commands run on the lake directly, with or without a server.
"""

from __future__ import annotations

from typing import BinaryIO

import click
import msgspec

from kvlake.api.wire import retention as wire
from kvlake.config import load_settings
from kvlake.errors import InvalidInputError
from kvlake.graveler import GarbageCollectionRules, make_rules
from kvlake.lake import Lake

MAX_RULES_FILE = 4 * 1024 * 1024
"""Bytes a rules file may have: 10,000 branch rules fit with room to spare."""


@click.group()
def gc() -> None:
    """Garbage collection of committed data no retained commit references."""


@gc.group()
def rules() -> None:
    """Retention rules: how many days each branch's history is kept."""


@rules.command("get")
@click.argument("repository")
def rules_get(repository: str) -> None:
    """Print REPOSITORY's rules as JSON (an error if it has none)."""
    with Lake.open(load_settings()) as lake:
        graveler = lake.graveler
        found = graveler.retention.get_rules(graveler.get_repository(repository))
    shown = wire.GarbageCollectionRules(
        default_retention_days=found.default_retention_days,
        branches=[
            wire.GarbageCollectionRule(branch_id=branch, retention_days=days)
            for branch, days in sorted(found.branch_retention_days.items())
        ],
    )
    click.echo(msgspec.json.format(msgspec.json.encode(shown), indent=2))


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
    with Lake.open(load_settings()) as lake:
        graveler = lake.graveler
        graveler.retention.set_rules(graveler.get_repository(repository), wanted)
    click.echo(
        f"set garbage collection rules of {repository}: {wanted.default_retention_days} days by"
        f" default, {len(wanted.branch_retention_days)} branch rules"
    )


@rules.command("delete")
@click.argument("repository")
def rules_delete(repository: str) -> None:
    """Delete REPOSITORY's rules (garbage collection then refuses to run on it)."""
    with Lake.open(load_settings()) as lake:
        graveler = lake.graveler
        graveler.retention.delete_rules(graveler.get_repository(repository))
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


def _attach_run() -> None:
    # gc_run is its own module (it drives Spark); attached here so `kvlake gc` has it.
    from kvlake.cli.gc_run import gc_run

    gc.add_command(gc_run)


_attach_run()
