"""`kvlake deletion dlq`: the records deletion workers gave up on, listed, requeued or dropped.

Requeue and drop take explicit ids or `--all`, never both and never neither,
so an empty command line cannot act on every dead letter by accident.
"""

from __future__ import annotations

import click

from kvlake.config import load_settings
from kvlake.deletion import DeadLetters
from kvlake.errors import InvalidInputError
from kvlake.lake import Lake


@click.group()
def dlq() -> None:
    """Records workers gave up on: list, requeue or drop them."""


@dlq.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
def dlq_list(limit: int) -> None:
    """List dead letters: id, origin, repository, address, attempts and reason."""
    with Lake.open(load_settings()) as lake:
        shown = -1
        for shown, letter in enumerate(DeadLetters(lake.deletion_log).scan()):
            if shown >= limit:
                click.echo(f"(more dead letters; raise --limit above {limit})")
                break
            record = letter.record
            if record is None:
                click.echo(f"{letter.id} (undecodable record): {letter.reason}")
                continue
            click.echo(
                f"{letter.id} {record.origin} {record.repository}/{record.instance_uid}"
                f" {record.storage_namespace} {record.address} attempts={record.attempts}:"
                f" {letter.reason}"
            )
        if shown < 0:
            click.echo("no dead letters")


def _chosen(ids: tuple[str, ...], every: bool) -> list[str] | None:
    if every == bool(ids):
        raise InvalidInputError("name dead letter ids, or pass --all (not both)")
    return None if every else list(ids)


@dlq.command("requeue")
@click.argument("ids", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Requeue every dead letter.")
def dlq_requeue(ids: tuple[str, ...], every: bool) -> None:
    """Put dead letters back in the log, due now; workers check them afresh."""
    with Lake.open(load_settings()) as lake:
        count = DeadLetters(lake.deletion_log).requeue(_chosen(ids, every))
    click.echo(f"requeued {count} dead letters")


@dlq.command("drop")
@click.argument("ids", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Drop every dead letter.")
def dlq_drop(ids: tuple[str, ...], every: bool) -> None:
    """Forget dead letters; their blobs stay where they are."""
    with Lake.open(load_settings()) as lake:
        count = DeadLetters(lake.deletion_log).drop(_chosen(ids, every))
    click.echo(f"dropped {count} dead letters")
