"""`kvlake fs`: ls, stat, cat, upload, download and rm over the API, single and recursive,
on the two servers of the API suite (SQLite over a local folder, PostgreSQL over S3)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.conftest import SERVERS, served
from tests.api.server import Server
from tests.cli.conftest import Cli


@pytest.fixture(scope="module", params=SERVERS)
def cli_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The module's server, once per (KV driver, blockstore) pair: transfers store blobs."""
    with served(request, tmp_path_factory, "cli_fs") as server:
        server.storage.prepare()
        yield server


def test_upload_ls_stat_cat_download_rm(cli: Cli, repository: str, tmp_path: Path) -> None:
    repo = f"lakefs://{repository}/main"
    folder = tmp_path / "data"
    (folder / "sub").mkdir(parents=True)
    files = {"a.txt": b"alpha", "sub/b.bin": bytes(range(256)) * 5000, "sub/c.txt": b""}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    cli("fs", "upload", f"{repo}/in/x.txt", "--source", str(folder)).error(2, "--recursive")
    sent = cli("fs", "upload", f"{repo}/in/", "-s", str(folder), "--recursive", "--json").json()
    assert sorted(s["path"] for s in sent) == ["in/a.txt", "in/sub/b.bin", "in/sub/c.txt"]
    top = cli("fs", "ls", f"{repo}/in", "--json").json()
    assert [(o["path_type"], o["path"]) for o in top] == [
        ("object", "in/a.txt"),
        ("common_prefix", "in/sub/"),
    ]
    table = cli("fs", "ls", f"{repo}/in/").ok().stdout.splitlines()
    assert table[0].split() == ["TYPE", "SIZE", "PATH"]
    assert table[1].split() == ["object", "5", "in/a.txt"]
    assert table[2].split() == ["prefix", "in/sub/"]
    assert len(cli("fs", "ls", f"{repo}/in/", "--recursive", "--json").json()) == 3
    stat = cli("fs", "stat", f"{repo}/in/sub/b.bin", "--json").json()
    assert stat["size_bytes"] == 256 * 5000
    assert "Size: 1280000" in cli("fs", "stat", f"{repo}/in/sub/b.bin").ok().stdout
    assert cli("fs", "cat", f"{repo}/in/a.txt").ok().stdout == "alpha"
    back = tmp_path / "back"
    cli("fs", "download", f"{repo}/in", str(back), "--recursive").ok()
    for name, data in files.items():
        assert (back / name).read_bytes() == data
    one = tmp_path / "one.txt"
    cli("fs", "download", f"{repo}/in/a.txt", str(one)).ok()
    assert one.read_bytes() == b"alpha"
    assert cli("fs", "rm", f"{repo}/in/a.txt").ok().stdout.startswith("removed 1 objects")
    removed = cli("fs", "rm", f"{repo}/in/", "--recursive", "--json").json()
    assert sorted(removed) == ["in/sub/b.bin", "in/sub/c.txt"]
    assert cli("fs", "ls", f"{repo}/in/").ok().stdout == f"no objects below {repo}/in/\n"
    assert cli("fs", "ls", f"{repo}/in/", "--json").json() == []


def test_missing_objects_and_paths(cli: Cli, repository: str, tmp_path: Path) -> None:
    repo = f"lakefs://{repository}/main"
    cli("fs", "cat", f"{repo}/nothing").error(4)
    cli("fs", "stat", f"{repo}/nothing").error(4)
    cli("fs", "stat", repo).error(2, "names no object")
    cli("fs", "rm", repo).error(2, "--recursive")
    cli("fs", "download", f"{repo}/nothing", str(tmp_path / "x")).error(4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
    source = tmp_path / "src.txt"
    source.write_bytes(b"s")
    cli("fs", "upload", f"{repo}/s.txt", "-s", str(source)).ok()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a folder should be")
    cli("fs", "download", f"{repo}/s.txt", str(blocked / "s.txt")).error(
        2, str(blocked), "check the path"
    )


def test_an_object_whose_blob_gc_deleted_is_gone(
    cli: Cli, cli_server: Server, repository: str, tmp_path: Path
) -> None:
    repo = f"lakefs://{repository}/main"
    source = tmp_path / "old.txt"
    source.write_bytes(b"old")
    cli("fs", "upload", f"{repo}/old.txt", "-s", str(source)).ok()
    cli("commit", repo, "-m", "old").ok()
    namespace = cli_server.storage.namespace(repository)
    # What a sweep does to a blob no retained commit references (the test plays GC).
    for key in cli_server.storage.keys(namespace, "data/"):
        cli_server.storage.blocks.delete(namespace, key)
    cli("fs", "stat", f"{repo}/old.txt").ok()
    cli("fs", "cat", f"{repo}/old.txt").error(4, "garbage collection deleted its blob")
    with cli_server.http() as http:
        answer = http.get(
            f"/repositories/{repository}/refs/main/objects", params={"path": "old.txt"}
        )
    assert answer.status_code == 410, answer.text
