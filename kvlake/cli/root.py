"""The root `kvlake` group: help, version, and the one-line error contract of every command.

Users see one line per failure, never a traceback for a problem they can fix:
every `KvlakeError` leaving a command is printed as `kvlake: error: <message>`
on stderr with exit status 2 (click's own usage errors use 2 as well), or, for a
command that went through the API, the status of the documented table
(`kvlake.cli.client`, docs/cli.md). Other
exceptions are bugs and keep their traceback. URLs are printed only redacted.
Each command group lives in a module of its own and is attached here, so the
contract holds for every group without any of them repeating it.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

import click

from kvlake import __version__
from kvlake.cli.client import ApiError
from kvlake.errors import KvlakeError

_COMMANDS: Final = {
    "actions": "kvlake.cli.actions:actions",
    "branch": "kvlake.cli.refs:branch",
    "branch-protect": "kvlake.cli.refs:branch_protect",
    "cherry-pick": "kvlake.cli.history:cherry_pick",
    "commit": "kvlake.cli.history:commit",
    "config": "kvlake.cli.config:config",
    "delete": "kvlake.cli.operations_api:delete",
    "deletion": "kvlake.cli.deletion:deletion",
    "diff": "kvlake.cli.history:diff",
    "fs": "kvlake.cli.fs:fs",
    "gc": "kvlake.cli.gc:gc",
    "import": "kvlake.cli.imports:import_",
    "kv": "kvlake.cli.kv:kv",
    "local": "kvlake.cli.local:local",
    "lock": "kvlake.cli.locks:lock",
    "log": "kvlake.cli.history:log",
    "merge": "kvlake.cli.history:merge",
    "operations": "kvlake.cli.operations:operations",
    "repo": "kvlake.cli.repo:repo",
    "serve": "kvlake.cli.serve:serve",
    "superuser": "kvlake.cli.superuser:superuser",
    "tag": "kvlake.cli.refs:tag",
    "worker": "kvlake.cli.worker:worker",
}
"""Command name -> where it lives, imported on first use: a user command over the API
starts without loading the lake, the server or Spark (seconds on a busy machine)."""


class _KvlakeGroup(click.Group):
    """Loads commands on first use; turns a `KvlakeError` from any subcommand into one line
    and its exit status."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*_COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in _COMMANDS:
            return found
        module, _, name = _COMMANDS[cmd_name].partition(":")
        command = getattr(importlib.import_module(module), name)
        assert isinstance(command, click.Command), _COMMANDS[cmd_name]
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KvlakeError as exc:
            click.echo(f"kvlake: error: {' '.join(str(exc).split())}", err=True)
            ctx.exit(exc.exit_code if isinstance(exc, ApiError) else 2)
        except OSError as exc:
            if exc.filename is None:
                raise  # not about a file the user named: a bug, keep the traceback
            # A local file a transfer reads or writes (missing, a folder, no permission).
            click.echo(
                f"kvlake: error: {exc.filename}: {exc.strerror}; check the path and its"
                " permissions",
                err=True,
            )
            ctx.exit(2)


@click.group(cls=_KvlakeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kvlake")
def main() -> None:
    """kvlake: a versioned data lake whose metadata lives behind a narrow KV interface.

    Settings come from KVLAKE_* variables and an optional YAML file named by
    KVLAKE_CONFIG; `kvlake config show` prints the result.
    """
