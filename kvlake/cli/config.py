"""`kvlake config`: write the user's lakectl configuration; `config show`: the server's settings.

`kvlake config` writes ~/.lakectl.yaml (or LAKECTL_CONFIG_FILE), the file lakectl and
lakeFS's clients read, asking for what the options do not give; it never prints the
secret. `config show` is an operator's command: the server's effective KVLAKE_* settings
as a valid KVLAKE_CONFIG file with every password hidden.
"""

from __future__ import annotations

import click
import msgspec
import yaml

from kvlake.cli.lakectl import (
    DEFAULT_ENDPOINT,
    LakectlConfig,
    config_path,
    load_lakectl_config,
    save_lakectl_config,
)
from kvlake.cli.output import emit_json, json_option
from kvlake.config import CONFIG_ENV, load_settings


@click.group(invoke_without_command=True)
@click.option("--endpoint-url", default=None, help="The server, e.g. http://127.0.0.1:8000.")
@click.option("--access-key-id", default=None, help="Your access key id.")
@click.option("--secret-access-key", default=None, help="Your secret access key.")
@json_option
@click.pass_context
def config(
    ctx: click.Context,
    endpoint_url: str | None,
    access_key_id: str | None,
    secret_access_key: str | None,
    as_json: bool,
) -> None:
    """Write ~/.lakectl.yaml: the server's URL and your key (asks for what is not given).

    LAKECTL_SERVER_ENDPOINT_URL, LAKECTL_CREDENTIALS_ACCESS_KEY_ID and
    LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY override the file; LAKECTL_CONFIG_FILE
    names another file. `kvlake config show` prints the server's own settings.
    """
    if ctx.invoked_subcommand is not None:
        return
    path = config_path()
    current = load_lakectl_config({"HOME": str(path.parent), "LAKECTL_CONFIG_FILE": str(path)})
    written = LakectlConfig(
        endpoint_url=endpoint_url
        or click.prompt("Server endpoint URL", default=current.endpoint_url or DEFAULT_ENDPOINT),
        access_key_id=access_key_id
        or click.prompt("Access key ID", default=current.access_key_id or None),
        secret_access_key=secret_access_key or click.prompt("Secret access key", hide_input=True),
    )
    save_lakectl_config(path, written)
    # Read it back through the loader: a bad endpoint fails now, not at the next command.
    load_lakectl_config({"LAKECTL_CONFIG_FILE": str(path)})
    if as_json:
        emit_json(
            {
                "path": str(path),
                "endpoint_url": written.endpoint_url,
                "access_key_id": written.access_key_id,
            }
        )
        return
    click.echo(f"wrote {path}: {written.endpoint_url} as {written.access_key_id}")


@config.command("show")
def config_show() -> None:
    """Print the server's effective settings as YAML, passwords hidden (operators).

    The output is a valid file for KVLAKE_CONFIG. Precedence: built-in
    defaults, then that file, then KVLAKE_* variables.
    """
    settings = load_settings()
    click.echo(f"# kvlake settings: defaults < {CONFIG_ENV} file < KVLAKE_* variables")
    click.echo(yaml.safe_dump(msgspec.to_builtins(settings.redacted()), sort_keys=False), nl=False)
