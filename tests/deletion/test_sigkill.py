"""A worker killed with SIGKILL mid-batch loses nothing: the next worker finishes its work.

The worker runs in a child process on SQLite and a local folder (then S3), and kills
itself with SIGKILL from inside its blockstore after some blobs of a batch are
gone but before their records are removed. Its lease is left held; another
worker, whose clock is past the lease, must take over and finish exactly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kvlake.blockstore import open_blockstore
from kvlake.config import DeletionSettings
from kvlake.deletion import Lease
from kvlake.deletion.leases import Leases
from kvlake.kv import open_store
from tests.deletion.helpers import DeletionLake
from tests.support import FakeClock
from tests.support.backends import BLOCKSTORES

OBJECTS = 120
KILL_AT_DELETE = 70
SETTINGS = DeletionSettings(batch_size=50, send_delay=0.0, partitions=2)
NO_LEASE = Lease(owner="", expires=0.0)

CHILD = """
import os, signal, sys
from kvlake.blockstore import open_blockstore
from kvlake.config import DeletionSettings
from kvlake.kv import open_store
from tests.deletion.blockstores import FaultyBlockStore
from tests.deletion.helpers import DeletionLake
from tests.support import FakeClock

kv_url, blocks_url, now, kill_at = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
deletes = 0

def die_mid_batch(call):
    global deletes
    if call.op == "delete":
        deletes += 1
        if deletes == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    return None

clock = FakeClock()
clock.now = now
settings = DeletionSettings(batch_size=50, send_delay=0.0, partitions=2)
lake = DeletionLake(open_store(kv_url), open_blockstore(blocks_url), clock=clock, settings=settings,
            create=False)
lake.worker(FaultyBlockStore(lake.blocks, die_mid_batch), owner="doomed").run_once()
print("not killed")
"""


@pytest.mark.parametrize("kind", sorted(BLOCKSTORES))
def test_a_worker_killed_mid_batch_is_replaced_and_nothing_is_lost(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # On S3 the child reaches moto through the AWS_* variables the fixture set here.
    kv_url, blocks_url = f"sqlite://{tmp_path}/kv.db", BLOCKSTORES[kind](request, tmp_path)
    clock = FakeClock()
    with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
        lake = DeletionLake(store, blocks, clock=clock, settings=SETTINGS)
        for i in range(OBJECTS):
            lake.upload(f"p{i:03d}", b"old")
        kept = {lake.upload(f"p{i:03d}", b"new").address for i in range(OBJECTS)}
        assert lake.pending() == OBJECTS
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), kv_url, blocks_url, str(clock.now + 1)]
        + [str(KILL_AT_DELETE)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
        lake = DeletionLake(store, blocks, clock=clock, settings=SETTINGS, create=False)
        deleted_before_kill = 2 * OBJECTS - len(lake.data_blobs())
        assert deleted_before_kill == KILL_AT_DELETE - 1
        (doomed,) = [n for n in range(2) if (Leases(store).load(n) or NO_LEASE).owner == "doomed"]
        assert list(lake.log.scan(doomed))  # the killed batch's records are still there
        lake.worker(owner="next").run_once()  # too early: the dead worker's lease still holds
        assert list(lake.log.scan(doomed))
        lake.settle(lake.worker(owner="next"))
        assert lake.data_blobs() == kept == lake.referenced()
        assert lake.pending() == 0


UPLOAD_CHILD = """
import io, os, signal, sys
from kvlake.blockstore import open_blockstore
from kvlake.kv import open_store
from tests.deletion.blockstores import FaultyBlockStore
from tests.deletion.helpers import DeletionLake
from tests.support import FakeClock


class DiesAfterPut(FaultyBlockStore):
    def _put(self, namespace, key, chunks):
        size = super()._put(namespace, key, chunks)
        os.kill(os.getpid(), signal.SIGKILL)  # the blob is stored, its entry never staged
        return size


kv_url, blocks_url, now = sys.argv[1], sys.argv[2], float(sys.argv[3])
clock = FakeClock()
clock.now = now
blocks = DiesAfterPut(open_blockstore(blocks_url))
lake = DeletionLake(open_store(kv_url), blocks, clock=clock, create=False)
lake.upload("doomed", b"never staged")
print("not killed")
"""


@pytest.mark.parametrize("kind", sorted(BLOCKSTORES))
def test_an_upload_killed_between_its_blob_and_its_entry_orphans_nothing(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Issue 22 (f): the upload logs its blob's intent before storing it, so a process
    killed after the put and before staging leaves a blob the deletion log collects."""
    kv_url, blocks_url = f"sqlite://{tmp_path}/kv.db", BLOCKSTORES[kind](request, tmp_path)
    clock = FakeClock()
    with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
        lake = DeletionLake(store, blocks, clock=clock)
        kept = lake.upload("kept", b"staged").address
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(UPLOAD_CHILD), kv_url, blocks_url, str(clock.now)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    with open_store(kv_url) as store, open_blockstore(blocks_url) as blocks:
        lake = DeletionLake(store, blocks, clock=clock, create=False)
        assert len(lake.data_blobs()) == 2  # the killed upload's blob is there, unstaged
        lake.settle()
        assert lake.data_blobs() == {kept} == lake.referenced()
        assert lake.pending() == 0
