"""`kvlake superuser`: create an admin, or give one a new key, directly on the stores.

An operator's command (as lakeFS's `lakefs superuser`): it opens the KV store the
server's settings name, with the server's key, so it works when every admin key is
lost and no API call can authenticate. It prints the new secret once.
"""

from __future__ import annotations

import click

from kvlake.auth import AuthStore, ServerKey, grant_admin, load_master_key
from kvlake.cli.lakectl import ACCESS_KEY_ENV, ENDPOINT_ENV, SECRET_KEY_ENV
from kvlake.cli.output import emit_json, json_option
from kvlake.config import load_settings
from kvlake.kv import open_store


@click.command()
@click.option("--user-name", required=True, help="The admin to create or re-key.")
@click.option("--access-key-id", default="", help="Choose the new key's id (default: random).")
@click.option(
    "--secret-access-key",
    default="",
    help="Choose the new secret (default: random; prefer LAKECTL-style variables to flags).",
)
@json_option
def superuser(user_name: str, access_key_id: str, secret_access_key: str, as_json: bool) -> None:
    """Create admin USER_NAME, or give it a new access key, on the stores (operators).

    Reads the server's settings (KVLAKE_*); run it where the server runs, with the
    same KVLAKE_KV_URL and server key. The user joins Admins; its other keys stay valid.
    """
    settings = load_settings()
    master = load_master_key(settings.auth.encrypt_secret_key, settings.data_dir)
    with open_store(settings.kv_url) as store:
        auth = AuthStore(store, ServerKey(master))
        auth.check_server_key()  # a wrong key would store a secret no server can read
        made = grant_admin(
            auth,
            user_name=user_name,
            access_key_id=access_key_id,
            secret=secret_access_key,
        )
    if as_json:
        emit_json(
            {
                "user_name": made.user_name,
                "access_key_id": made.access_key_id,
                "secret_access_key": made.secret,
            }
        )
        return
    click.echo(f"admin user {made.user_name!r} has a new access key (shown only this once):")
    click.echo(f"  access key id:     {made.access_key_id}")
    click.echo(f"  secret access key: {made.secret}")
    click.echo("for the CLI and lakeFS clients:")
    click.echo(f"  export {ENDPOINT_ENV}=http://{settings.host}:{settings.port}")
    click.echo(f"  export {ACCESS_KEY_ENV}={made.access_key_id}")
    click.echo(f"  export {SECRET_KEY_ENV}={made.secret}")
