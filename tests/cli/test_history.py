"""Repositories, branches, tags, commits, log, diff, merge and cherry-pick through the CLI:
text for people, `--json` for scripts, one-line errors with the documented exit codes."""

from __future__ import annotations

from pathlib import Path

from tests.api.server import Server
from tests.cli.conftest import IMPORTS, Cli


def upload(cli: Cli, tmp_path: Path, uri: str, data: bytes) -> None:
    source = tmp_path / f"upload-{abs(hash(uri))}"
    source.write_bytes(data)
    cli("fs", "upload", uri, "--source", str(source)).ok()


def test_repo_create_list_delete(cli: Cli, cli_server: Server) -> None:
    name = "cli-repo-lifecycle"
    made = cli("repo", "create", f"lakefs://{name}", cli_server.storage.namespace(name), "--json")
    assert made.json()["id"] == name and made.json()["default_branch"] == "main"
    listed = cli("repo", "list", "--json").json()
    assert name in [r["id"] for r in listed]
    table = cli("repo", "list").ok().stdout.splitlines()
    assert table[0].split()[:2] == ["REPOSITORY", "CREATION"]
    assert any(line.startswith(name) for line in table[1:])
    cli("repo", "create", f"lakefs://{name}", cli_server.storage.namespace(name)).error(
        5, "already exists"
    )
    assert cli("repo", "delete", f"lakefs://{name}").ok().stdout == f"deleted repository {name}\n"
    assert name not in [r["id"] for r in cli("repo", "list", "--json").json()]
    cli("repo", "delete", f"lakefs://{name}").error(4, name)


def test_branches_and_tags(cli: Cli, repository: str) -> None:
    repo = f"lakefs://{repository}"
    made = cli("branch", "create", f"{repo}/dev", "--source", f"{repo}/main", "--json").json()
    assert made["id"] == "dev" and len(made["commit_id"]) == 64
    branches = cli("branch", "list", repo, "--json").json()
    assert [b["id"] for b in branches] == ["dev", "main"]
    assert cli("branch", "show", f"{repo}/dev", "--json").json()["commit_id"] == made["commit_id"]
    tag = cli("tag", "create", f"{repo}/v1", f"{repo}/main", "--json").json()
    assert tag["id"] == "v1"
    assert [t["id"] for t in cli("tag", "list", repo, "--json").json()] == ["v1"]
    assert cli("tag", "delete", f"{repo}/v1").ok().stdout == "deleted tag 'v1'\n"
    assert cli("tag", "list", repo).ok().stdout == f"no tags in {repository}\n"
    assert cli("tag", "list", repo, "--json").json() == []
    cli("branch", "delete", f"{repo}/dev").ok()
    cli("branch", "show", f"{repo}/dev").error(4, "dev")


def test_commit_log_diff_merge(cli: Cli, repository: str, tmp_path: Path) -> None:
    repo = f"lakefs://{repository}"
    cli("branch", "create", f"{repo}/dev", "-s", f"{repo}/main").ok()
    upload(cli, tmp_path, f"{repo}/dev/a.txt", b"alpha")
    uncommitted = cli("diff", f"{repo}/dev", "--json").json()
    assert [(c["type"], c["path"]) for c in uncommitted] == [("added", "a.txt")]
    assert "+ added a.txt" in cli("diff", f"{repo}/dev").ok().stdout
    made = cli("commit", f"{repo}/dev", "-m", "add a", "--meta", "team=x", "--json").json()
    assert made["message"] == "add a" and made["metadata"] == {"team": "x"}
    assert "none" in cli("diff", f"{repo}/dev").ok().stdout
    log = cli("log", f"{repo}/dev", "--amount", "1", "--json").json()
    assert [c["id"] for c in log] == [made["id"]]
    assert "    add a" in cli("log", f"{repo}/dev").ok().stdout
    assert [c["id"] for c in cli("log", f"{repo}/dev", "--since", "1h", "--json").json()][0] == (
        made["id"]
    )
    assert cli("log", f"{repo}/dev", "--since", "2999-01-01", "--json").json() == []
    assert cli("log", f"{repo}/dev", "--since", "2999-01-01T00:00:00Z").ok().stdout == (
        f"no commits at {repo}/dev\n"
    )
    cli("log", f"{repo}/dev", "--since", "yesterday").error(2, "--since 'yesterday'", "3d")
    changes = cli("diff", f"{repo}/main", f"{repo}/dev", "--json").json()
    assert [c["path"] for c in changes] == ["a.txt"]
    merged = cli("merge", f"{repo}/dev", f"{repo}/main", "--json").json()
    assert len(merged["reference"]) == 64
    assert cli("diff", f"{repo}/main", f"{repo}/dev").ok().stdout.endswith("none\n")
    cli("commit", f"{repo}/main", "-m", "nothing").error(2)
    cli("commit", f"{repo}/main", "-m", "m", "--meta", "novalue").error(2, "KEY=VALUE")


def test_cherry_pick_and_revert(cli: Cli, repository: str, tmp_path: Path) -> None:
    repo = f"lakefs://{repository}"
    cli("branch", "create", f"{repo}/dev", "-s", f"{repo}/main").ok()
    upload(cli, tmp_path, f"{repo}/dev/b.txt", b"beta")
    picked = cli("commit", f"{repo}/dev", "-m", "add b", "--json").json()
    made = cli("cherry-pick", f"{repo}/{picked['id']}", f"{repo}/main", "--json").json()
    assert made["message"] == "add b"
    assert [o["path"] for o in cli("fs", "ls", f"{repo}/main/", "--json").json()] == ["b.txt"]
    cli("branch", "revert", f"{repo}/main", made["id"]).ok()
    assert cli("fs", "ls", f"{repo}/main/", "--json").json() == []
    upload(cli, tmp_path, f"{repo}/main/c.txt", b"c")
    cli("branch", "reset", f"{repo}/main", "--object", "c.txt").ok()
    assert cli("diff", f"{repo}/main", "--json").json() == []


def test_branch_protection(cli: Cli, repository: str, tmp_path: Path) -> None:
    repo = f"lakefs://{repository}"
    assert cli("branch-protect", "list", repo, "--json").json() == []
    assert "no protected branches" in cli("branch-protect", "list", repo).ok().stdout
    cli("branch-protect", "add", repo, "main").ok()
    assert [r["pattern"] for r in cli("branch-protect", "list", repo, "--json").json()] == ["main"]
    source = tmp_path / "x"
    source.write_bytes(b"x")
    cli("fs", "upload", f"{repo}/main/x", "--source", str(source)).error(3)
    cli("branch-protect", "add", repo, "main").error(2, "already protected")
    cli("branch-protect", "delete", repo, "main").ok()
    cli("fs", "upload", f"{repo}/main/x", "--source", str(source)).ok()


def test_unknown_refs_and_malformed_uris(cli: Cli, repository: str) -> None:
    cli("log", f"lakefs://{repository}/nosuch").error(4, "nosuch")
    cli("branch", "list", "lakefs://no-such-repo").error(4, "no-such-repo")
    cli("log", "s3://bucket/x").error(2, "not a lakefs:// URI", "lakefs://<repository>/<ref>")
    cli("log", f"lakefs://{repository}").error(2, "names no branch")
    cli("branch", "list", f"lakefs://{repository}/main").error(2, "more than a repository")


def test_repo_delete_with_purge_goes_through_the_server(cli: Cli, cli_server: Server) -> None:
    name = "cli-repo-purged"
    cli("repo", "create", f"lakefs://{name}", cli_server.storage.namespace(name)).ok()
    deleted = cli("repo", "delete", name, "--purge").ok().stdout
    assert deleted.startswith(f"deleted repository {name}\npurge: ")
    assert f"kvlake repo purge-status {name}" in deleted
    assert name not in [r["id"] for r in cli("repo", "list", "--json").json()]


def test_an_absolute_local_namespace_says_where_the_data_goes(cli: Cli) -> None:
    made = cli("repo", "create", "lakefs://cli-absolute", "local:///srv/absolute", "--json")
    assert made.json()["storage_namespace"] == "local://srv/absolute"
    assert "below the server's blockstore root" in made.stderr
    assert "stored as local://srv/absolute" in made.stderr


def test_import_a_folder_without_copying(cli: Cli, cli_server: Server, repository: str) -> None:
    folder = cli_server.data_dir / "blocks" / "imports" / repository
    folder.mkdir(parents=True)
    (folder / "one.csv").write_bytes(b"id\n1\n")
    (folder / "two.csv").write_bytes(b"id\n2\n")
    done = cli(
        "import", "--from", f"{IMPORTS}/{repository}/", "--to", f"lakefs://{repository}/main/raw/",
        "--json",
    ).json()  # fmt: skip
    assert done["completed"] is True and done["ingested_objects"] == 2
    listed = cli("fs", "ls", f"lakefs://{repository}/main/raw/", "--json").json()
    assert [o["path"] for o in listed] == ["raw/one.csv", "raw/two.csv"]
    assert cli("diff", f"lakefs://{repository}/main", "--json").json() == []
    cli("import", "--from", "local://elsewhere/", "--to", f"lakefs://{repository}/main/x/").error(2)
