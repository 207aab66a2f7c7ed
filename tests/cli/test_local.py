"""`kvlake local`: a real folder tracks a branch path through clone, status, commit and pull."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import Cli


def test_clone_change_commit_and_pull(cli: Cli, repository: str, tmp_path: Path) -> None:
    repo = f"lakefs://{repository}"
    seed = tmp_path / "seed"
    (seed / "d").mkdir(parents=True)
    (seed / "a.txt").write_bytes(b"a1")
    (seed / "d" / "b.txt").write_bytes(b"b1")
    cli("fs", "upload", f"{repo}/main/data/", "-s", str(seed), "-r").ok()
    cli("fs", "upload", f"{repo}/main/other.txt", "-s", str(seed / "a.txt")).ok()
    cli("commit", f"{repo}/main", "-m", "seed").ok()

    folder = tmp_path / "work"
    cloned = cli("local", "clone", f"{repo}/main/data/", str(folder), "--json").json()
    assert cloned["files"] == 2
    assert (folder / "a.txt").read_bytes() == b"a1"
    assert (folder / "d" / "b.txt").read_bytes() == b"b1"
    assert not (folder / "other.txt").exists()
    assert cli("local", "status", str(folder)).ok().stdout.endswith("matches the branch\n")

    (folder / "a.txt").write_bytes(b"a2")
    (folder / "d" / "b.txt").unlink()
    (folder / "c.txt").write_bytes(b"c1")
    status = cli("local", "status", str(folder), "--json").json()
    assert status == {
        "local": [
            {"type": "changed", "path": "a.txt"},
            {"type": "added", "path": "c.txt"},
            {"type": "removed", "path": "d/b.txt"},
        ],
        "remote": [],
    }
    cli("local", "commit", str(folder), "-m", "local work").ok()
    listed = cli("fs", "ls", f"{repo}/main/data/", "-r", "--json").json()
    assert [o["path"] for o in listed] == ["data/a.txt", "data/c.txt"]
    assert cli("fs", "cat", f"{repo}/main/data/a.txt").ok().stdout == "a2"
    assert cli("diff", f"{repo}/main", "--json").json() == []
    cli("local", "commit", str(folder), "-m", "again").error(2, "no local changes")

    # Someone else commits to the branch: status shows it, commit refuses, pull brings it.
    cli("fs", "upload", f"{repo}/main/data/e.txt", "-s", str(seed / "a.txt")).ok()
    cli("fs", "rm", f"{repo}/main/data/c.txt").ok()
    cli("commit", f"{repo}/main", "-m", "theirs").ok()
    remote = cli("local", "status", str(folder), "--json").json()["remote"]
    assert sorted((c["type"], c["path"]) for c in remote) == [
        ("added", "data/e.txt"),
        ("removed", "data/c.txt"),
    ]
    (folder / "a.txt").write_bytes(b"a3")
    cli("local", "commit", str(folder), "-m", "stale").error(5, "kvlake local pull")
    cli("local", "pull", str(folder)).error(5, "local changes")
    (folder / "a.txt").write_bytes(b"a2")
    assert cli("local", "pull", str(folder), "--json").json()["changes"] == 2
    assert (folder / "e.txt").read_bytes() == b"a1"
    assert not (folder / "c.txt").exists()
    assert cli("local", "status", str(folder)).ok().stdout.endswith("matches the branch\n")


def test_local_commands_need_a_cloned_folder(cli: Cli, tmp_path: Path) -> None:
    cli("local", "status", str(tmp_path)).error(2, "not a kvlake local folder", "local clone")
    (tmp_path / "x").write_text("x")
    cli("local", "clone", "lakefs://r/main/", str(tmp_path)).error(2, "is not empty")
