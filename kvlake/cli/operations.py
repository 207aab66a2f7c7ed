"""`kvlake operations`: the commands of every kind of long-running work.

`list`, `status`, `failures`, `cancel` and `watch` go over the HTTP API as the
lakectl user (kvlake/cli/operations_api.py, where `kvlake delete` lives too).
`run` is an operator's command: it runs every unfinished operation in this
process, on the lake directly with the store's own rights, as a worker would.
"""

from __future__ import annotations

import click

from kvlake.cli.operations_api import COMMANDS
from kvlake.config import load_settings
from kvlake.lake import Lake
from kvlake.operations import Operation


def _summary(operation: Operation) -> str:
    c = operation.counters
    # A dry run deletes nothing: its count is what a real run would delete.
    deleted = (
        f"would delete {c.deleted:,}" if operation.options.dry_run else f"{c.deleted:,} deleted"
    )
    line = (
        f"{operation.id} {operation.status}: {deleted}, {c.failed:,} failed,"
        f" {c.skipped:,} skipped of {c.enumerated:,}"
    )
    if operation.commit_id:
        line += f"; commit {operation.commit_id}"
    if operation.error:
        line += f"; {operation.error}"
    return line


@click.group()
def operations() -> None:
    """Long-running operations of every kind: list, status, failures, cancel, watch (over
    the API, as your lakectl user), and run (here, on the lake)."""


for _command in COMMANDS:
    operations.add_command(_command)


@operations.command("run")
def operations_run() -> None:
    """Run every unfinished operation in this process until none is left to lease."""
    with Lake.open(load_settings()) as lake:
        for operation in lake.operations.run_once():
            click.echo(_summary(operation))
