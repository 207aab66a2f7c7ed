"""lakectl's configuration (~/.lakectl.yaml, LAKECTL_* variables, `kvlake config`) and the
client's one-line errors with the documented exit codes, as a shell sees them."""

from __future__ import annotations

import stat
import uuid
from pathlib import Path

import lakefs_sdk
import yaml

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server, free_port
from tests.cli.conftest import Cli


def test_config_writes_the_lakectl_file_that_later_commands_read(
    cli_server: Server, tmp_path: Path
) -> None:
    user = Cli(tmp_path)  # no LAKECTL_* variables: only the file
    written = user(
        "config",
        "--endpoint-url",
        cli_server.url,
        "--access-key-id",
        ACCESS_KEY_ID,
        "--secret-access-key",
        SECRET_ACCESS_KEY,
    ).ok()
    path = tmp_path / ".lakectl.yaml"
    assert written.stdout == f"wrote {path}: {cli_server.url} as {ACCESS_KEY_ID}\n"
    assert SECRET_ACCESS_KEY not in written.stdout
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert yaml.safe_load(path.read_text()) == {
        "credentials": {"access_key_id": ACCESS_KEY_ID, "secret_access_key": SECRET_ACCESS_KEY},
        "server": {"endpoint_url": cli_server.url},
    }
    assert isinstance(user.process("repo", "list", "--json").json(), list)
    # A variable overrides the file: a wrong key from the environment is refused.
    user.env["LAKECTL_CREDENTIALS_ACCESS_KEY_ID"] = "AKIAWRONGWRONGWRONG0"
    user.process("repo", "list").error(3, "AKIAWRONGWRONGWRONG0", "kvlake config")


def test_config_prompts_for_what_the_options_do_not_give(
    cli_server: Server, tmp_path: Path
) -> None:
    user = Cli(tmp_path)
    answers = f"{cli_server.url}\n{ACCESS_KEY_ID}\n{SECRET_ACCESS_KEY}\n"
    asked = user("config", stdin=answers).ok()
    assert "Server endpoint URL" in asked.stdout and "Secret access key" in asked.stdout
    assert SECRET_ACCESS_KEY not in asked.stdout
    saved = yaml.safe_load((tmp_path / ".lakectl.yaml").read_text())
    assert saved["credentials"]["secret_access_key"] == SECRET_ACCESS_KEY
    assert user("repo", "list", "--json").code == 0


def test_bad_configuration_files_are_one_line_errors(tmp_path: Path) -> None:
    user = Cli(tmp_path)
    path = tmp_path / ".lakectl.yaml"
    path.write_text("server: [unclosed\n")
    user.process("repo", "list").error(2, str(path), "not valid YAML", "kvlake config")
    path.write_text("- a list\n")
    user.process("repo", "list").error(2, "must be a YAML mapping")
    path.write_text("server:\n  endpoint_url: ftp://x\n")
    user.process("repo", "list").error(2, "not an http(s) URL", "LAKECTL_SERVER_ENDPOINT_URL")


def test_missing_credentials_and_a_server_that_is_down(tmp_path: Path) -> None:
    user = Cli(tmp_path)
    user.process("repo", "list").error(3, "no credentials configured", "kvlake config")
    user.env |= {
        "LAKECTL_SERVER_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
    }
    user.process("repo", "list").error(6, "is not reachable", "kvlake serve")


def test_a_user_without_the_policy_is_refused(cli: Cli, cli_server: Server, tmp_path: Path) -> None:
    admin = cli_server.sdk()
    name = f"viewer-{uuid.uuid4().hex[:8]}"
    admin.auth_api.create_user(lakefs_sdk.UserCreation(id=name))
    admin.auth_api.add_group_membership("Viewers", name)
    key = admin.auth_api.create_credentials(name)
    viewer = Cli(
        tmp_path,
        {
            "LAKECTL_SERVER_ENDPOINT_URL": cli_server.url,
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": key.access_key_id,
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": key.secret_access_key,
        },
    )
    repo = f"cli-{uuid.uuid4().hex[:8]}"
    viewer.process("repo", "create", f"lakefs://{repo}", cli_server.storage.namespace(repo)).error(
        3, "needs fs:CreateRepository", "ask an admin"
    )
    cli("repo", "create", f"lakefs://{repo}", cli_server.storage.namespace(repo)).ok()
    assert [b["id"] for b in viewer("branch", "list", f"lakefs://{repo}", "--json").json()] == [
        "main"
    ]
    viewer("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main").error(3)


def test_the_first_start_banner_prints_the_lakectl_lines(cli_server: Server) -> None:
    output = cli_server.output()
    assert f"export LAKECTL_SERVER_ENDPOINT_URL=http://127.0.0.1:{cli_server.port}" in output
    assert f"export LAKECTL_CREDENTIALS_ACCESS_KEY_ID={ACCESS_KEY_ID}" in output
    # The secret came from the environment: the banner never echoes it.
    assert SECRET_ACCESS_KEY not in output
