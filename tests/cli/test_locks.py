"""`kvlake lock` over the API: the caller holds the lock, others' uploads are refused, and
releasing a path that holds no lock says so."""

from __future__ import annotations

import uuid
from pathlib import Path

import lakefs_sdk

from tests.api.server import Server
from tests.cli.conftest import Cli


def as_new_user(cli_server: Server, home: Path, group: str) -> Cli:
    admin = cli_server.sdk()
    name = f"{group.lower()}-{uuid.uuid4().hex[:8]}"
    admin.auth_api.create_user(lakefs_sdk.UserCreation(id=name))
    admin.auth_api.add_group_membership(group, name)
    key = admin.auth_api.create_credentials(name)
    return Cli(
        home,
        {
            "LAKECTL_SERVER_ENDPOINT_URL": cli_server.url,
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": key.access_key_id,
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": key.secret_access_key,
        },
    )


def test_acquire_list_and_release(
    cli: Cli, cli_server: Server, repository: str, tmp_path: Path
) -> None:
    assert cli("lock", "list", repository).ok().stdout == f"no live locks in {repository}\n"
    taken = cli("lock", "acquire", repository, "a/b.txt", "--ttl", "600", "--json").json()
    assert taken["path"] == "a/b.txt" and taken["owner"] == "admin"
    listed = cli("lock", "list", f"lakefs://{repository}", "--json").json()
    assert [(lock["path"], lock["owner"]) for lock in listed] == [("a/b.txt", "admin")]
    table = cli("lock", "list", repository).ok().stdout.splitlines()
    assert table[0].split() == ["PATH", "OWNER", "EXPIRES"]

    developer = as_new_user(cli_server, tmp_path, "Developers")
    source = tmp_path / "x"
    source.write_bytes(b"x")
    developer("fs", "upload", f"lakefs://{repository}/main/a/b.txt", "-s", str(source)).error(5)
    developer("lock", "release", repository, "a/b.txt").error(5)

    released = cli("lock", "release", repository, "a/b.txt").ok().stdout
    assert released == "released a/b.txt (held by admin)\n"
    cli("lock", "release", repository, "a/b.txt").error(4, "no live lock on 'a/b.txt'")
    developer("fs", "upload", f"lakefs://{repository}/main/a/b.txt", "-s", str(source)).ok()


def test_a_viewer_cannot_lock(cli_server: Server, repository: str, tmp_path: Path) -> None:
    viewer = as_new_user(cli_server, tmp_path, "Viewers")
    viewer("lock", "acquire", repository, "a").error(3, "ask an admin")
