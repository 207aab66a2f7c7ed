"""`kvlake config`: show the effective settings, in a form that loads back unchanged.

The output is a valid KVLAKE_CONFIG file with every password hidden, so it can
be pasted into a bug report or used as a starting point without leaking one.
"""

from __future__ import annotations

import click
import msgspec
import yaml

from kvlake.config import CONFIG_ENV, load_settings


@click.group()
def config() -> None:
    """Inspect kvlake's settings."""


@config.command("show")
def config_show() -> None:
    """Print the effective settings as YAML, passwords hidden.

    The output is a valid file for KVLAKE_CONFIG. Precedence: built-in
    defaults, then that file, then KVLAKE_* variables.
    """
    settings = load_settings()
    click.echo(f"# kvlake settings: defaults < {CONFIG_ENV} file < KVLAKE_* variables")
    click.echo(yaml.safe_dump(msgspec.to_builtins(settings.redacted()), sort_keys=False), nl=False)
