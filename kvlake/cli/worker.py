"""`kvlake worker`: the background work of `kvlake serve`, without serving HTTP.

The long-running operations of every kind (bulk deletes, GC runs), the
deletion workers and the cleaner run here, as they run in an API server whose
background work is on; with `KVLAKE_SERVER_BACKGROUND=false` the API servers
leave it all to workers (SDMS's separate deletion service). Any number of
workers and servers share one KV store and blockstore: leases in the KV decide
who works on what, and a worker that dies leaves its work to the others once
its leases expire (docs/operations.md, "The worker service").

It takes the settings `kvlake serve` takes (KVLAKE_* variables, KVLAKE_CONFIG,
and the same `--data-dir` and `--kv` flags), and stops at SIGTERM or SIGINT
after the operations it runs reach their next batch boundary.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

import click

from kvlake.config import ENV_PREFIX, load_settings, redact_url
from kvlake.lake import Lake


@click.command()
@click.option("--data-dir", help="Where embedded metadata and blobs live (KVLAKE_DATA_DIR).")
@click.option("--kv", "kv_url", help="Metadata store URL, e.g. postgres://... (KVLAKE_KV_URL).")
def worker(data_dir: str | None, kv_url: str | None) -> None:
    """Run long-running operations, deletion workers and the cleaner until interrupted."""
    overrides = {
        f"{ENV_PREFIX}{name}": value
        for name, value in (("DATA_DIR", data_dir), ("KV_URL", kv_url))
        if value is not None
    }
    settings = load_settings({**os.environ, **overrides})
    stop = threading.Event()

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGINT, stopping)
    with Lake.open(settings) as lake:
        lake.start_background_jobs(settings.server.job_interval)
        print(
            f"kvlake: worker running operations ({settings.operations.concurrency} at once),"
            f" deletion workers and the cleaner; metadata in {redact_url(settings.kv_url)}",
            flush=True,
        )
        while not stop.wait(1.0):
            pass
        print("kvlake: worker stopping: operations stop at their next batch boundary", flush=True)
    print("kvlake: worker stopped", flush=True)
