"""The deployment the SDMS design asks for: an API server with its background work off and
two `kvlake worker` processes over one store; one worker is SIGKILLed mid-operation and the
other finishes the operation.

Real processes over one SQLite file (`synchronous=normal`: a SIGKILL loses nothing SQLite
wrote) and a local folder. 3,000 staged-only objects under `del/` (metadata written
straight into the store) in batches of 5 keep the operation busy for hundreds of
checkpoints; the test reads the operation record from the store to learn which worker
holds it, kills that one once it has folded a batch, and waits for the survivor to take
over after the three-second lease. Nothing is timed: every wait has a generous bound.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import Settings
from kvlake.graveler import keys
from kvlake.graveler.records import encode
from kvlake.kv import open_store
from kvlake.lake import Lake
from kvlake.operations import Ledger, Operation
from tests.api.server import Server
from tests.support import wait_until
from tests.support.workers import start_worker

OBJECTS = 3000
ENV = {
    # Long enough for a worker on a loaded 2-core machine to renew it in time (at 1 s the
    # two workers took the operation from each other for two minutes, once).
    "KVLAKE_OPERATIONS_LEASE_TIME": "3",
    "KVLAKE_OPERATIONS_BATCH_SIZE": "5",
    "KVLAKE_SERVER_JOB_INTERVAL": "0.5",
}
WAIT = 120.0


def _fill(data_dir: Path, kv_url: str) -> None:
    entry = ObjectEntry(address="data/x", size=1, checksum="x", mtime=1.0, content_type="x")
    with Lake.open(Settings(data_dir=str(data_dir), kv_url=kv_url)) as lake:
        repo = lake.graveler.create_repository("big", storage_namespace="local://big")
        token = lake.graveler.get_branch(repo, "main").staging_token
        lake.store.set_many(
            keys.staging_partition(token),
            ((f"del/{i:05d}".encode(), encode(to_value(entry))) for i in range(OBJECTS)),
        )


def _pid(owner: str) -> int:
    """The process an operation's lease owner names (`host:pid:uid`)."""
    return int(owner.split(":")[1])


def test_a_worker_killed_mid_operation_leaves_it_to_the_other(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    kv_url = f"sqlite://{data_dir / 'kv.db'}?synchronous=normal"
    _fill(data_dir, kv_url)
    server = Server(data_dir, kv_url=kv_url, env={**ENV, "KVLAKE_SERVER_BACKGROUND": "false"})
    workers = [start_worker(data_dir, kv_url, ENV) for _ in range(2)]
    owners: set[int] = set()
    try:
        with server.http() as http, open_store(kv_url) as store:
            ledger = Ledger(store)
            created = http.put("/operations/bulk-delete", params={"path": "lakefs://big/main/del/"})
            assert created.status_code == 202, created.text
            operation_id = created.json()["operation_id"]

            def record() -> Operation:
                operation = ledger.load(operation_id)[0]
                if operation.owner:
                    owners.add(_pid(operation.owner))
                return operation

            wait_until(
                lambda: record().done >= 1,
                timeout=WAIT,
                interval=0.01,
                message=lambda: f"a worker to fold a batch: {record()}",
            )
            holding = record()
            assert not holding.finished, holding
            (doomed,) = [w for w in workers if w.pid == _pid(holding.owner)]
            os.killpg(doomed.pid, signal.SIGKILL)
            doomed.wait()
            (survivor,) = [w for w in workers if w is not doomed]

            wait_until(
                lambda: record().finished,
                timeout=WAIT,
                message=lambda: f"the surviving worker to finish: {record()}",
            )
            final = http.get(f"/operations/{operation_id}").json()
            listed = http.get("/repositories/big/refs/main/objects/ls", params={"prefix": "del/"})
    finally:
        for process in workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(30)
        server.stop()

    assert final["status"] == "completed", final
    assert (final["total_count"], final["deleted_count"]) == (OBJECTS, OBJECTS), final
    assert listed.json()["results"] == []
    assert survivor.pid in owners and doomed.pid in owners
    assert server.process.pid not in owners  # its background work is off
    assert survivor.returncode == 0  # SIGTERM: stopped cleanly
