"""`kvlake import`: lakectl's zero-copy import of objects already in storage, over the API.

The server lists the source and commits it to the branch (importStart); this command
polls importStatus, shows the objects ingested on stderr, and prints the commit.
"""

from __future__ import annotations

import time
from typing import Final

import click

from kvlake.cli.client import EXIT_SERVER, ApiClient, ApiError
from kvlake.cli.output import emit_json, json_option, progress
from kvlake.cli.refs import ref_path
from kvlake.uri import parse_uri

POLL_SECONDS: Final = 0.5


@click.command("import")
@click.option("--from", "source", required=True, help="Where the objects are (s3://, local://).")
@click.option("--to", "target", required=True, help="lakefs://REPO/BRANCH/[PATH] to import to.")
@click.option("-m", "--message", default="", help="The import commit's message.")
@click.option("--meta", multiple=True, help="Metadata KEY=VALUE (repeatable).")
@json_option
def import_(source: str, target: str, message: str, meta: tuple[str, ...], as_json: bool) -> None:
    """Import objects under --from into branch path --to, without copying, and commit them.

    A --from ending in `/` imports everything below it (a prefix); otherwise one object.
    """
    from kvlake.cli.pairs import parse_pairs

    to = parse_uri(target, path=True)
    kind = "common_prefix" if source.endswith("/") else "object"
    body = {
        "paths": [{"type": kind, "path": source, "destination": to.path}],
        "commit": {
            "message": message or f"Import from {source}",
            "metadata": parse_pairs(meta, option="--meta"),
        },
    }
    with ApiClient.open() as client:
        path = f"{ref_path(to)}/import"
        started = client.request("POST", path, json=body).json()
        with progress(None, "object", "import") as bar:
            while True:
                status = client.get(path, id=started["id"])
                bar.update(status.get("ingested_objects", 0) - bar.n)
                if status.get("completed") or status.get("error"):
                    break
                time.sleep(POLL_SECONDS)
    error = status.get("error")
    if error:
        raise ApiError(f"import {started['id']} failed: {error.get('message', error)}", EXIT_SERVER)
    if as_json:
        emit_json(status)
        return
    commit = status.get("commit") or {}
    click.echo(
        f"imported {status.get('ingested_objects', 0)} objects from {source} to {to}: "
        f"commit {commit.get('id', status.get('metarange_id', ''))}"
    )
