"""The root `kvlake` group: help, version, and the one-line error contract of every command.

Users see one line per failure, never a traceback for a problem they can fix:
every `KvlakeError` leaving a command is printed as `kvlake: error: <message>`
on stderr with exit status 2 (click's own usage errors use 2 as well). Other
exceptions are bugs and keep their traceback. URLs are printed only redacted.
Each command group lives in a module of its own and is attached here, so the
contract holds for every group without any of them repeating it.
"""

from __future__ import annotations

from typing import Any

import click

from kvlake import __version__
from kvlake.cli.config import config
from kvlake.cli.deletion import deletion
from kvlake.cli.gc import gc
from kvlake.cli.gc_run import gc_run
from kvlake.cli.kv import kv
from kvlake.cli.operations import delete, lock, operations
from kvlake.cli.repo import repo
from kvlake.cli.serve import serve
from kvlake.cli.worker import worker
from kvlake.errors import KvlakeError


class _KvlakeGroup(click.Group):
    """Turns a `KvlakeError` from any subcommand into one line and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KvlakeError as exc:
            click.echo(f"kvlake: error: {' '.join(str(exc).split())}", err=True)
            ctx.exit(2)


@click.group(cls=_KvlakeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kvlake")
def main() -> None:
    """kvlake: a versioned data lake whose metadata lives behind a narrow KV interface.

    Settings come from KVLAKE_* variables and an optional YAML file named by
    KVLAKE_CONFIG; `kvlake config show` prints the result.
    """


for _command in (config, deletion, delete, gc, kv, lock, operations, repo, serve, worker):
    main.add_command(_command)
gc.add_command(gc_run)
