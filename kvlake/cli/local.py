"""`kvlake local clone|status|commit|pull`: a local folder that tracks a path of a branch.

As lakectl local: `clone` downloads `lakefs://repo/branch/path/` into a folder and
writes `.lakefs_ref.yaml` (`src`, `at_head`: the commit the folder matches) and an
index of what it downloaded (`.kvlake_index.json`: path -> size, sha256), so `status`
tells local changes from the index without the server, and remote changes from a
diff between `at_head` and the branch. `commit` uploads and removes what changed
locally, then commits; it refuses when the branch moved on (pull first). `pull`
brings the commits since `at_head`; it refuses to overwrite local changes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import click
import yaml

from kvlake.cli.client import EXIT_CONFLICT, ApiClient, ApiError
from kvlake.cli.output import emit_json, json_option
from kvlake.cli.pairs import parse_pairs
from kvlake.cli.refs import ref_path
from kvlake.errors import InvalidInputError
from kvlake.uri import LakeUri, parse_uri

REF_FILE: Final = ".lakefs_ref.yaml"
INDEX_FILE: Final = ".kvlake_index.json"
CHUNK: Final = 1024 * 1024

Index = dict[str, list[Any]]
"""Relative path -> [size, sha256] of each file as the folder last matched the branch."""


@click.group()
def local() -> None:
    """A local folder tracking a path of a branch: clone, status, commit, pull."""


class Tracked:
    """A cloned folder: where it points, at which commit, and its index."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        try:
            ref = yaml.safe_load((folder / REF_FILE).read_text())
            self.index: Index = json.loads((folder / INDEX_FILE).read_text())
        except FileNotFoundError:
            raise InvalidInputError(
                f"{folder} is not a kvlake local folder (no {REF_FILE}); make one with "
                "`kvlake local clone lakefs://REPO/BRANCH/PATH/ FOLDER`"
            ) from None
        except (yaml.YAMLError, ValueError):
            raise InvalidInputError(
                f"{folder}/{REF_FILE} or {INDEX_FILE} is damaged; clone again"
            ) from None
        self.src = parse_uri(str(ref["src"]), path=True)
        self.at_head = str(ref["at_head"])

    @property
    def prefix(self) -> str:
        return self.src.path

    def save(self, at_head: str, index: Index) -> None:
        self.at_head, self.index = at_head, index
        _write_state(self.folder, self.src, at_head, index)

    def local_changes(self) -> list[tuple[str, str]]:
        """(kind, path) of every file added, changed or removed since the index."""
        found = scan(self.folder)
        changes = [
            ("added" if path not in self.index else "changed", path)
            for path, entry in found.items()
            if self.index.get(path) != entry
        ]
        changes += [("removed", path) for path in self.index if path not in found]
        return sorted(changes, key=lambda change: change[1])


def scan(folder: Path) -> Index:
    """Every file below `folder` but the state files, with its size and sha256."""
    found: Index = {}
    for file in sorted(folder.rglob("*")):
        relative = file.relative_to(folder).as_posix()
        if not file.is_file() or relative in (REF_FILE, INDEX_FILE):
            continue
        digest = hashlib.sha256()
        with file.open("rb") as stream:
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
        found[relative] = [file.stat().st_size, digest.hexdigest()]
    return found


def _write_state(folder: Path, src: LakeUri, at_head: str, index: Index) -> None:
    (folder / REF_FILE).write_text(yaml.safe_dump({"src": str(src), "at_head": at_head}))
    (folder / INDEX_FILE).write_text(json.dumps(index, sort_keys=True))


def _head(client: ApiClient, src: LakeUri) -> str:
    commit_id: str = client.get(ref_path(src))["commit_id"]
    return commit_id


def _download(client: ApiClient, src: LakeUri, ref: str, path: str, local: Path) -> None:
    local.parent.mkdir(parents=True, exist_ok=True)
    partial = local.with_name(f".{local.name}.kvlake-partial")
    try:
        with partial.open("wb") as out:
            objects = f"/repositories/{quote(src.repository, safe='')}/refs/{quote(ref)}/objects"
            for response in client.stream(objects, {"path": path}):
                for chunk in response.iter_bytes(CHUNK):
                    out.write(chunk)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, local)


@local.command("clone")
@click.argument("uri")
@click.argument("folder", type=click.Path(path_type=Path), required=False)
@json_option
def local_clone(uri: str, folder: Path | None, as_json: bool) -> None:
    """Download branch path URI (lakefs://REPO/BRANCH/[PATH/]) into FOLDER and track it."""
    src = parse_uri(uri, path=True)
    if src.path and not src.path.endswith("/"):
        src = src._replace(path=src.path + "/")
    folder = folder or Path(src.path.rstrip("/").rsplit("/", 1)[-1] or src.repository)
    if folder.exists() and any(folder.iterdir()):
        raise InvalidInputError(f"{folder} is not empty; clone into a new or empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    with ApiClient.open() as client:
        head = _head(client, src)
        listing = client.pages(
            f"{ref_path(src._replace(ref=head), 'refs')}/objects/ls", prefix=src.path, delimiter=""
        )
        for found in listing:
            relative = found["path"][len(src.path) :]
            _download(client, src, head, found["path"], folder / relative)
    index = scan(folder)
    _write_state(folder, src, head, index)
    if as_json:
        emit_json({"folder": str(folder), "src": str(src), "at_head": head, "files": len(index)})
        return
    click.echo(f"cloned {src} at {head[:16]} into {folder}: {len(index)} files")


@local.command("status")
@click.argument("folder", type=click.Path(path_type=Path), default=".")
@json_option
def local_status(folder: Path, as_json: bool) -> None:
    """Local changes since the last clone, pull or commit, and the branch's new changes."""
    tracked = Tracked(folder)
    mine = tracked.local_changes()
    with ApiClient.open() as client:
        theirs = _remote_changes(client, tracked)
    if as_json:
        emit_json(
            {
                "local": [{"type": kind, "path": path} for kind, path in mine],
                "remote": [{"type": c["type"], "path": c["path"]} for c in theirs],
            }
        )
        return
    click.echo(f"{tracked.src} at {tracked.at_head[:16]}")
    for kind, path in mine:
        click.echo(f"local  {kind:<8} {path}")
    for change in theirs:
        click.echo(f"remote {change['type']:<8} {change['path'][len(tracked.prefix) :]}")
    if not mine and not theirs:
        click.echo("no changes: the folder matches the branch")


def _remote_changes(client: ApiClient, tracked: Tracked) -> list[dict[str, Any]]:
    src = tracked.src
    head = _head(client, src)
    if head == tracked.at_head:
        return []
    path = f"{ref_path(src._replace(ref=tracked.at_head), 'refs')}/diff/{quote(head, safe='')}"
    return [
        change
        for change in client.pages(path, prefix=tracked.prefix)
        if change.get("path_type", "object") == "object"
    ]


@local.command("commit")
@click.argument("folder", type=click.Path(path_type=Path), default=".")
@click.option("-m", "--message", required=True, help="The commit message.")
@click.option("--meta", multiple=True, help="Metadata KEY=VALUE (repeatable).")
@json_option
def local_commit(folder: Path, message: str, meta: tuple[str, ...], as_json: bool) -> None:
    """Upload the folder's changes to its branch path and commit them."""
    tracked = Tracked(folder)
    src = tracked.src
    changes = tracked.local_changes()
    if not changes:
        raise InvalidInputError(f"{folder} has no local changes to commit")
    with ApiClient.open() as client:
        if _head(client, src) != tracked.at_head:
            raise ApiError(
                f"{src} has new commits since {tracked.at_head[:16]}; run "
                f"`kvlake local pull {folder}` first",
                EXIT_CONFLICT,
            )
        objects = f"{ref_path(src)}/objects"
        for kind, path in changes:
            remote = src.path + path
            if kind == "removed":
                client.request("DELETE", objects, params={"path": remote})
                continue
            with (folder / path).open("rb") as stream:
                client.request(
                    "POST",
                    objects,
                    params={"path": remote},
                    content=iter(lambda: stream.read(CHUNK), b""),
                    headers={"Content-Type": "application/octet-stream"},
                )
        made = client.request(
            "POST",
            f"{ref_path(src)}/commits",
            json={"message": message, "metadata": parse_pairs(meta, option="--meta")},
        ).json()
    tracked.save(made["id"], scan(folder))
    if as_json:
        emit_json(made)
        return
    click.echo(f"committed {len(changes)} changes to {src}: {made['id']}")


@local.command("pull")
@click.argument("folder", type=click.Path(path_type=Path), default=".")
@click.option("--force", is_flag=True, help="Overwrite local changes.")
@json_option
def local_pull(folder: Path, force: bool, as_json: bool) -> None:
    """Bring the branch's commits since the folder's `at_head` into the folder."""
    tracked = Tracked(folder)
    src = tracked.src
    if tracked.local_changes() and not force:
        raise ApiError(
            f"{folder} has local changes; commit them (`kvlake local commit`) or pass --force",
            EXIT_CONFLICT,
        )
    with ApiClient.open() as client:
        head = _head(client, src)
        changes = _remote_changes(client, tracked)
        for change in changes:
            local_file = folder / change["path"][len(src.path) :]
            if change["type"] == "removed":
                local_file.unlink(missing_ok=True)
            else:
                _download(client, src, head, change["path"], local_file)
    tracked.save(head, scan(folder))
    if as_json:
        emit_json({"at_head": head, "changes": len(changes)})
        return
    click.echo(f"pulled {len(changes)} changes; {folder} is at {head[:16]}")
