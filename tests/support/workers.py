"""`kvlake worker` processes for the tests that run background work outside the API server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.processes import python_dying_with_parent


def start_worker(data_dir: Path, kv_url: str, settings: dict[str, str]) -> subprocess.Popen[bytes]:
    """A `kvlake worker` process over `data_dir` and `kv_url`, with `settings` (KVLAKE_*
    variables) and no others; its output goes to `worker-<n>.log` in `data_dir`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KVLAKE_")} | settings
    command = python_dying_with_parent("-m", "kvlake", "worker", "--data-dir", str(data_dir))
    log = (data_dir / f"worker-{len(list(data_dir.glob('worker-*')))}.log").open("wb")
    with log:
        return subprocess.Popen(
            [*command, "--kv", kv_url],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
