"""`kvlake fs ls|cat|stat|upload|download|rm`: objects over the API, streamed and parallel.

Uploads and downloads stream (no file is held in memory); `--recursive` transfers run
`--parallelism` at a time over one connection pool, with one tqdm bar of bytes on
stderr. Recursive removes list the prefix and delete in batches of the API's 1,000.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, Final

import click

from kvlake.cli.client import ApiClient
from kvlake.cli.output import emit_json, emit_listing, json_option, progress
from kvlake.cli.refs import ref_path
from kvlake.errors import InvalidInputError
from kvlake.uri import LakeUri, parse_uri

CHUNK: Final = 1024 * 1024
DELETE_BATCH: Final = 1000
"""Paths per deleteObjects call: lakeFS's limit."""

parallelism_option = click.option(
    "-p",
    "--parallelism",
    type=click.IntRange(1, 64),
    default=8,
    show_default=True,
    help="Transfers at once with --recursive.",
)


@click.group()
def fs() -> None:
    """Objects: list, read, stat, upload, download and remove."""


def _objects(client: ApiClient, uri: LakeUri, *, recursive: bool) -> Iterator[dict[str, Any]]:
    return client.pages(
        f"{ref_path(uri, 'refs')}/objects/ls",
        prefix=uri.path,
        delimiter="" if recursive else "/",
    )


@fs.command("ls")
@click.argument("uri")
@click.option("-r", "--recursive", is_flag=True, help="Every object below, not one level.")
@json_option
def fs_ls(uri: str, recursive: bool, as_json: bool) -> None:
    """Objects and common prefixes below URI (lakefs://REPO/REF/[PREFIX])."""
    target = parse_uri(uri, path=True)
    if target.path and not recursive and not target.path.endswith("/"):
        target = target._replace(path=target.path + "/")
    with ApiClient.open() as client:
        emit_listing(
            _objects(client, target, recursive=recursive),
            [
                ("type", lambda o: "prefix" if o["path_type"] == "common_prefix" else "object"),
                ("size", lambda o: o.get("size_bytes", "")),
                ("path", lambda o: o["path"]),
            ],
            as_json=as_json,
            empty=f"no objects below {target}",
        )


@fs.command("stat")
@click.argument("uri")
@json_option
def fs_stat(uri: str, as_json: bool) -> None:
    """One object's size, checksum, content type, physical address and metadata."""
    target = _object_uri(uri)
    with ApiClient.open() as client:
        stat = client.get(f"{ref_path(target, 'refs')}/objects/stat", path=target.path)
    if as_json:
        emit_json(stat)
        return
    for label, key in (
        ("Path", "path"),
        ("Modified Time", "mtime"),
        ("Size", "size_bytes"),
        ("Human Size", None),
        ("Physical Address", "physical_address"),
        ("Checksum", "checksum"),
        ("Content-Type", "content_type"),
    ):
        value = _human(stat.get("size_bytes", 0)) if key is None else stat.get(key, "")
        click.echo(f"{label}: {value}")
    for name, value in sorted((stat.get("metadata") or {}).items()):
        click.echo(f"Metadata: {name} = {value}")


@fs.command("cat")
@click.argument("uri")
def fs_cat(uri: str) -> None:
    """Write one object's bytes to stdout, streamed."""
    target = _object_uri(uri)
    out = sys.stdout.buffer
    with ApiClient.open() as client:
        for response in client.stream(f"{ref_path(target, 'refs')}/objects", {"path": target.path}):
            for chunk in response.iter_bytes(CHUNK):
                out.write(chunk)
    out.flush()


@fs.command("upload")
@click.argument("uri")
@click.option("-s", "--source", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("-r", "--recursive", is_flag=True, help="Upload a folder's files below URI.")
@click.option("--content-type", default=None, help="Content type of a single file.")
@parallelism_option
@json_option
def fs_upload(
    uri: str,
    source: Path,
    recursive: bool,
    content_type: str | None,
    parallelism: int,
    as_json: bool,
) -> None:
    """Upload file --source to URI (lakefs://REPO/BRANCH/PATH), or a folder with --recursive."""
    target = parse_uri(uri, path=True)
    if source.is_dir() != recursive:
        fix = "add --recursive" if source.is_dir() else "drop --recursive"
        kind = "a folder" if source.is_dir() else "a file"
        raise InvalidInputError(f"--source {source} is {kind}; {fix}")
    if recursive:
        base = target.path.rstrip("/") + "/" if target.path else ""
        jobs = [
            (file, base + file.relative_to(source).as_posix())
            for file in sorted(source.rglob("*"))
            if file.is_file()
        ]
    else:
        if not target.path or target.path.endswith("/"):
            raise InvalidInputError(f"{uri} names no object path; write lakefs://REPO/BRANCH/PATH")
        jobs = [(source, target.path)]
    total = sum(file.stat().st_size for file, _ in jobs)
    with ApiClient.open() as client, progress(total, "B", "upload") as bar:

        def send(job: tuple[Path, str]) -> dict[str, Any]:
            file, path = job
            with file.open("rb") as stream:
                response = client.request(
                    "POST",
                    f"{ref_path(target)}/objects",
                    params={"path": path},
                    content=_chunks(stream, bar.update),
                    headers={
                        "Content-Type": content_type or "application/octet-stream",
                        "Content-Length": str(file.stat().st_size),
                    },
                )
            stat: dict[str, Any] = response.json()
            return stat

        results = _parallel(send, jobs, parallelism)
    _report(as_json, results, "uploaded", target)


@fs.command("download")
@click.argument("uri")
@click.argument("destination", type=click.Path(path_type=Path), required=False)
@click.option("-r", "--recursive", is_flag=True, help="Every object below URI, into a folder.")
@parallelism_option
@json_option
def fs_download(
    uri: str, destination: Path | None, recursive: bool, parallelism: int, as_json: bool
) -> None:
    """Download URI to DESTINATION (default: its name, here), or a prefix with --recursive."""
    target = parse_uri(uri, path=True)
    with ApiClient.open() as client:
        if recursive:
            prefix = target.path.rstrip("/") + "/" if target.path else ""
            folder = destination or Path(".")
            found = list(_objects(client, target._replace(path=prefix), recursive=True))
            jobs = [(o["path"], folder / o["path"][len(prefix) :], o["size_bytes"]) for o in found]
        else:
            if not target.path:
                raise InvalidInputError(f"{uri} names no object; add its path or --recursive")
            local = destination or Path(target.path.rsplit("/", 1)[-1])
            if local.is_dir():
                local = local / target.path.rsplit("/", 1)[-1]
            jobs = [(target.path, local, None)]
        total = sum(size for _, _, size in jobs if size is not None) or None
        with progress(total, "B", "download") as bar:

            def fetch(job: tuple[str, Path, int | None]) -> dict[str, Any]:
                path, local, _ = job
                local.parent.mkdir(parents=True, exist_ok=True)
                partial = local.with_name(f".{local.name}.kvlake-partial")
                written = 0
                try:
                    with partial.open("wb") as out:
                        for response in client.stream(
                            f"{ref_path(target, 'refs')}/objects", {"path": path}
                        ):
                            for chunk in response.iter_bytes(CHUNK):
                                out.write(chunk)
                                written += len(chunk)
                                bar.update(len(chunk))
                except BaseException:
                    # A failed download leaves nothing behind, not half a file.
                    partial.unlink(missing_ok=True)
                    raise
                os.replace(partial, local)
                return {"path": path, "local": str(local), "size_bytes": written}

            results = _parallel(fetch, jobs, parallelism)
    _report(as_json, results, "downloaded", target)


@fs.command("rm")
@click.argument("uri")
@click.option("-r", "--recursive", is_flag=True, help="Every object below URI's prefix.")
@json_option
def fs_rm(uri: str, recursive: bool, as_json: bool) -> None:
    """Remove the object URI (staged on its branch), or every object below it with -r."""
    target = parse_uri(uri, path=True)
    if not target.path and not recursive:
        raise InvalidInputError(f"{uri} names no object; add its path, or --recursive for all")
    removed: list[str] = []
    with ApiClient.open() as client:
        if not recursive:
            client.request("DELETE", f"{ref_path(target)}/objects", params={"path": target.path})
            removed.append(target.path)
        else:
            batch: list[str] = []
            for found in _objects(client, target, recursive=True):
                batch.append(found["path"])
                if len(batch) == DELETE_BATCH:
                    removed += _delete_batch(client, target, batch)
                    batch = []
            if batch:
                removed += _delete_batch(client, target, batch)
    if as_json:
        emit_json(removed)
        return
    click.echo(
        f"removed {len(removed)} objects from {target}" if removed else f"nothing below {target}"
    )


def _delete_batch(client: ApiClient, target: LakeUri, paths: list[str]) -> list[str]:
    answer = client.request(
        "POST", f"{ref_path(target)}/objects/delete", json={"paths": paths}
    ).json()
    failed = {error.get("path") for error in answer.get("errors", [])}
    for error in answer.get("errors", []):
        click.echo(f"kvlake: not removed: {error.get('path')}: {error.get('message')}", err=True)
    return [path for path in paths if path not in failed]


def _object_uri(uri: str) -> LakeUri:
    target = parse_uri(uri, path=True)
    if not target.path:
        raise InvalidInputError(f"{uri} names no object; write lakefs://REPO/REF/PATH")
    return target


def _chunks(stream: BinaryIO, advance: Callable[[int], object]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        advance(len(chunk))
        yield chunk


def _parallel(
    work: Callable[[Any], dict[str, Any]], jobs: Iterable[Any], parallelism: int
) -> list[dict[str, Any]]:
    """Run `work` on each job, `parallelism` at once; the first failure stops the rest."""
    with ThreadPoolExecutor(parallelism) as pool:
        return list(pool.map(work, jobs))


def _report(as_json: bool, results: list[dict[str, Any]], verb: str, target: LakeUri) -> None:
    if as_json:
        emit_json(results)
        return
    size = sum(int(r.get("size_bytes", 0)) for r in results)
    click.echo(f"{verb} {len(results)} objects ({_human(size)}) at {target}")


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"
