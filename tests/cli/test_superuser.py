"""`kvlake superuser`: a lost admin key is recoverable from the stores, as lakeFS's."""

from __future__ import annotations

from pathlib import Path

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server
from tests.cli.conftest import Cli


def as_user(cli_server: Server, home: Path, key: str, secret: str) -> Cli:
    return Cli(
        home,
        {
            "LAKECTL_SERVER_ENDPOINT_URL": cli_server.url,
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": key,
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": secret,
        },
    )


def test_superuser_creates_an_admin_and_rekeys_one(cli_server: Server, tmp_path: Path) -> None:
    operator = Cli(tmp_path, {"KVLAKE_DATA_DIR": str(cli_server.data_dir)})
    made = operator.process("superuser", "--user-name", "rescuer", "--json").json()
    assert made["user_name"] == "rescuer" and len(made["secret_access_key"]) >= 32
    rescuer = as_user(cli_server, tmp_path, made["access_key_id"], made["secret_access_key"])
    rescuer("repo", "create", "lakefs://rescued", cli_server.storage.namespace("rescued")).ok()
    text = operator("superuser", "--user-name", "admin").ok().stdout
    assert "shown only this once" in text
    assert "export LAKECTL_SERVER_ENDPOINT_URL=" in text
    key = text.split("access key id:")[1].split()[0]
    secret = text.split("secret access key:")[1].split()[0]
    assert key != ACCESS_KEY_ID
    as_user(cli_server, tmp_path, key, secret)("repo", "list", "--json").ok()
    as_user(cli_server, tmp_path, ACCESS_KEY_ID, SECRET_ACCESS_KEY)("repo", "list").ok()


def test_superuser_with_another_server_key_refuses(cli_server: Server, tmp_path: Path) -> None:
    operator = Cli(
        tmp_path,
        {
            "KVLAKE_DATA_DIR": str(tmp_path / "elsewhere"),
            "KVLAKE_KV_URL": f"sqlite:///{cli_server.data_dir}/kv.db",
        },
    )
    operator("superuser", "--user-name", "intruder").error(2, "server key")
    operator.env = {"KVLAKE_DATA_DIR": str(cli_server.data_dir)}
    operator("superuser", "--user-name", "x", "--access-key-id", "bad id!").error(2, "bad id!")
