"""The server itself SIGKILLed twice during a bulk delete: a restarted one finishes it.

A real `kvlake serve` on a SQLite data dir holds 60,000 committed objects
under `del/` (metadata only, staged with `Store.set_many` and committed) and
a few outside. A bulk delete is asked over HTTP; the server is killed with
SIGKILL as soon as the operation has started, restarted, killed again once
objects are being deleted, and restarted once more. Where exactly each kill
lands depends on timing, so the test asserts only what must hold wherever it
lands: the operation completes, deleted + failed + skipped = total, the
counters the status reported never went backwards across the kills, and
nothing outside the path was touched. (tests/operations/test_crash_resume.py
kills at chosen KV calls, deterministically.)
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import httpx

from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import Settings
from kvlake.graveler import keys
from kvlake.graveler.records import encode
from kvlake.lake import Lake
from tests.api.server import Server
from tests.support import wait_until

OBJECTS = 60_000
OUTSIDE = ("de", "dek/1", "z/1")
ENV = {"KVLAKE_OPERATIONS_LEASE_TIME": "1", "KVLAKE_OPERATIONS_BATCH_SIZE": "2000"}
COUNTERS = ("enumerated_count", "deleted_count", "failed_count", "skipped_count")


def _fill(data_dir: Path) -> None:
    with Lake.open(Settings(data_dir=str(data_dir))) as lake:
        repo = lake.graveler.create_repository("big", storage_namespace="local://big")
        token = lake.graveler.get_branch(repo, "main").staging_token
        entry = encode(
            to_value(
                ObjectEntry(address="data/x", size=1, checksum="c", mtime=1.0, content_type="x")
            )
        )
        paths = [f"del/{i:06d}" for i in range(OBJECTS)] + list(OUTSIDE)
        lake.store.set_many(keys.staging_partition(token), ((p.encode(), entry) for p in paths))
        lake.graveler.commit(repo, "main", committer="t", message="data")


def _kill(server: Server) -> None:
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait()


def test_a_bulk_delete_survives_its_server_being_killed(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    _fill(data_dir)
    seen: list[dict[str, int]] = []

    def status_of(http: httpx.Client, operation_id: str) -> dict[str, object]:
        status: dict[str, object] = http.get(
            f"/operations/bulk-delete/status/{operation_id}"
        ).json()
        seen.append({name: int(str(status[name])) for name in COUNTERS})
        return status

    def kill_when(
        server: Server, operation_id: str, ready: Callable[[dict[str, object]], bool]
    ) -> None:
        with server.http() as http:
            wait_until(lambda: ready(status_of(http, operation_id)), interval=0.02)
        _kill(server)

    server = Server(data_dir, env=ENV)
    with server.http() as http:
        created = http.put("/operations/bulk-delete", params={"path": "lakefs://big/main/del/"})
        assert created.status_code == 202, created.text
    operation_id = created.json()["operation_id"]
    kill_when(server, operation_id, lambda s: s["status"] != "not_started")
    server = Server(data_dir, env=ENV)
    kill_when(
        server,
        operation_id,
        lambda s: int(str(s["deleted_count"])) > 0 or s["status"] == "completed",
    )
    server = Server(data_dir, env=ENV)
    try:
        with server.http() as http:
            wait_until(
                lambda: status_of(http, operation_id)["status"] == "completed",
                message=lambda: f"the operation to complete after two kills: {seen[-1:]}",
            )
            final = status_of(http, operation_id)
            listed = http.get("/repositories/big/refs/main/objects/ls", params={"amount": 10})
    finally:
        server.stop()
    assert final["total_count"] == OBJECTS
    assert (final["deleted_count"], final["failed_count"], final["skipped_count"]) == (
        OBJECTS,
        0,
        0,
    )
    for before, after in zip(seen, seen[1:], strict=False):
        for name in COUNTERS:
            assert after[name] >= before[name], (name, before, after)
    assert [row["path"] for row in listed.json()["results"]] == sorted(OUTSIDE)
