"""`kvlake serve`: the one way to start the server, its flags mapped onto KVLAKE_* settings.

A flag overrides its variable and nothing else, so a flag and the setting it
names can never disagree about precedence: the flags are applied as if they
were variables, then the settings load as they always do.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import click

from kvlake.config import ENV_PREFIX, load_settings
from kvlake.permissions import make_private_folders

MULTIPROCESS_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
METRICS_FOLDER: Final = "metrics"
"""The folder under the data dir that holds each running server's metrics folder."""


@click.command()
@click.option("--host", help="Address to listen on (KVLAKE_HOST).")
@click.option("--port", type=click.IntRange(0, 65535), help="Port to listen on (KVLAKE_PORT).")
@click.option("--data-dir", help="Where embedded metadata and blobs live (KVLAKE_DATA_DIR).")
@click.option("--kv", "kv_url", help="Metadata store URL, e.g. postgres://... (KVLAKE_KV_URL).")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Server processes; they share the KV store and behave as one system.",
)
def serve(
    host: str | None, port: int | None, data_dir: str | None, kv_url: str | None, workers: int
) -> None:
    """Run the lakeFS-compatible server (/api/v1) until interrupted.

    With no settings at all it keeps metadata in an embedded SQLite file and
    blobs in a local folder under ~/.kvlake. On first start it creates an admin
    user and prints its access key once (or takes it from
    KVLAKE_INSTALLATION_ACCESS_KEY_ID / KVLAKE_INSTALLATION_SECRET_ACCESS_KEY).
    """
    overrides = {
        f"{ENV_PREFIX}{name}": str(value)
        for name, value in (
            ("HOST", host),
            ("PORT", port),
            ("DATA_DIR", data_dir),
            ("KV_URL", kv_url),
        )
        if value is not None
    }
    settings = load_settings({**os.environ, **overrides})
    with metrics_folder(Path(settings.data_dir)):
        # Imported here so that every other command starts without loading the server
        # stack, and after PROMETHEUS_MULTIPROC_DIR is set: prometheus_client reads it once.
        from kvlake.api.server import serve as run_server

        run_server(settings, workers=workers)


@contextlib.contextmanager
def metrics_folder(data_dir: Path) -> Iterator[None]:
    """A fresh PROMETHEUS_MULTIPROC_DIR for this server's workers, removed at exit (an
    operator's own folder is kept): every worker writes its samples there, so a scrape
    answered by any worker counts the whole server's requests.

    It is `<data_dir>/metrics/<pid>`: a server killed before it could remove its folder
    (SIGKILL, a power loss) leaves it there, not in the system's temporary folder, and
    the next server on that data dir removes every folder whose process is gone.
    """
    if os.environ.get(MULTIPROCESS_ENV):
        yield
        return
    parent = data_dir / METRICS_FOLDER
    make_private_folders(parent)
    for left in parent.iterdir():
        if left.name.isdigit() and not _alive(int(left.name)):
            shutil.rmtree(left, ignore_errors=True)
    folder = parent / str(os.getpid())
    shutil.rmtree(folder, ignore_errors=True)  # a dead server's, whose pid came round again
    make_private_folders(folder)
    os.environ[MULTIPROCESS_ENV] = str(folder)
    try:
        yield
    finally:
        os.environ.pop(MULTIPROCESS_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True
