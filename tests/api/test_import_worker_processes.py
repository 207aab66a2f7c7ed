"""A killed import is picked up by another worker and finishes, never half-published: an
API server with its background work off and two `kvlake worker` processes over one
store; the worker holding an import is SIGKILLed once the import has reported progress.

Real processes over one SQLite file (`synchronous=normal`) and a local blockstore with an
import folder of 2,000 files, checkpointed every 5 entries (KVLAKE_IMPORTS_PROGRESS_EVERY)
so the import stays busy for hundreds of checkpoints. Nothing is timed: every wait has a
generous bound.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from kvlake.kv import open_store
from kvlake.operations import Ledger, Operation
from tests.api.server import Server
from tests.api.test_worker_processes import ENV, WAIT, _pid
from tests.support import wait_until
from tests.support.workers import start_worker

FILES = 2000
IMPORT_ENV = {
    **ENV,
    "KVLAKE_IMPORTS_LOCAL_ENABLED": "true",
    "KVLAKE_IMPORTS_LOCAL_PREFIXES": "local://imports",
    "KVLAKE_IMPORTS_ENGINE": "local",
    "KVLAKE_IMPORTS_PROGRESS_EVERY": "5",
}


def test_a_worker_killed_mid_import_leaves_it_to_the_other_which_publishes_it_once(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    folder = data_dir / "blocks" / "imports" / "set"
    folder.mkdir(parents=True)
    for n in range(FILES):
        (folder / f"f{n:05d}").write_bytes(b"%d" % n)
    kv_url = f"sqlite://{data_dir / 'kv.db'}?synchronous=normal"
    server = Server(
        data_dir, kv_url=kv_url, env={**IMPORT_ENV, "KVLAKE_SERVER_BACKGROUND": "false"}
    )
    workers = [start_worker(data_dir, kv_url, IMPORT_ENV) for _ in range(2)]
    owners: set[int] = set()
    try:
        with server.http() as http, open_store(kv_url) as store:
            ledger = Ledger(store)
            body = {"name": "lake", "storage_namespace": "local://lake/lake"}
            assert http.post("/repositories", json=body).status_code == 201
            request = {
                "paths": [
                    {"type": "common_prefix", "path": "local://imports/set/", "destination": "in/"}
                ],
                "commit": {"message": "imported", "metadata": {"k": "v"}},
            }
            created = http.post("/repositories/lake/branches/main/import", json=request)
            assert created.status_code == 202, created.text
            import_id = created.json()["id"]
            base = http.get("/repositories/lake/branches/main").json()["commit_id"]

            def record() -> Operation:
                operation = ledger.load(import_id)[0]
                if operation.owner:
                    owners.add(_pid(operation.owner))
                return operation

            wait_until(
                lambda: record().counters.enumerated >= 5,
                timeout=WAIT,
                interval=0.01,
                message=lambda: f"a worker to report progress: {record()}",
            )
            holding = record()
            assert not holding.finished and not holding.committing, holding
            (doomed,) = [w for w in workers if w.pid == _pid(holding.owner)]
            os.killpg(doomed.pid, signal.SIGKILL)
            doomed.wait()
            (survivor,) = [w for w in workers if w is not doomed]
            half = http.get("/repositories/lake/refs/main/objects/ls", params={"prefix": "in/"})

            wait_until(
                lambda: record().finished,
                timeout=WAIT,
                message=lambda: f"the surviving worker to finish: {record()}",
            )
            status = http.get(
                "/repositories/lake/branches/main/import", params={"id": import_id}
            ).json()
            listed = http.get(
                "/repositories/lake/refs/main/objects/ls",
                params={"prefix": "in/", "amount": 1000},
            ).json()
            count = len(listed["results"])
            after = listed["pagination"]["next_offset"]
            while listed["pagination"]["has_more"]:
                listed = http.get(
                    "/repositories/lake/refs/main/objects/ls",
                    params={"prefix": "in/", "amount": 1000, "after": after},
                ).json()
                count += len(listed["results"])
                after = listed["pagination"]["next_offset"]
            log = http.get("/repositories/lake/refs/main/commits").json()["results"]
            kind = http.get(f"/operations/{import_id}").json()
    finally:
        for process in workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(30)
        server.stop()

    assert half.json()["results"] == []  # nothing published while the import was cut
    assert status["completed"] is True and "error" not in status, status
    assert status["ingested_objects"] == FILES
    assert count == FILES
    assert log[0]["id"] == status["commit"]["id"] and log[0]["parents"] == [base]  # one commit
    assert (kind["kind"], kind["status"]) == ("import", "completed")
    assert survivor.pid in owners and doomed.pid in owners
    assert server.process.pid not in owners
