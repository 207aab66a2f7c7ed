"""The server itself SIGKILLed at random moments of a 200,000-object bulk delete finishes it.

The issue's scenario, on a real `kvlake serve` over SQLite, with a local folder
and then S3 for its range files. Under `del/` the branch holds 200,000 objects
(metadata only, written with `Store.set_many`, not through the API): 171,000
committed, of which 5,001 are staged again over their committed entry and 1,000
deleted in staging, and 30,000 only staged. So both batch kinds run: the
committed ranges wholly under the prefix become range batches (one range-tombstone
record each, their restaged objects tombstoned one by one, their deleted ones
not counted), and the objects listed one by one (the staged-only ones, the
ranges at the prefix's ends) become path batches. Objects outside the path,
committed and staged, have names that sort right next to the prefix. Two objects
under the path (one committed, one only staged) hold a write lock taken through
the API with an expiry that outlives the test.

A bulk delete is asked over HTTP, then the server is killed with SIGKILL at
`KILLS` moments drawn from a seeded generator, and restarted after each: one
once the enumeration has counted a random number of objects, the others once
the processing has counted a random number (each past what the previous
server had counted, so each server works before it dies), each after a further
random delay so the kill lands anywhere inside a batch's work, not only just
after a status change. The seed is printed and named in the failure messages;
`KVLAKE_TEST_SIGKILL_SEED=<seed>` draws the same moments again (where exactly a
kill lands still depends on timing). A kill that lands after completion is
harmless. The test asserts only what must hold wherever the kills land: the
operation completes, total = deleted + failed + skipped = 200,000 with the
locked objects skipped (and listed by the failures endpoint with their
reason), the counters never went backwards across every status read and
kill, the branch holds under the path only the locked objects, nothing
outside the path changed, and a commit of the branch afterwards succeeds
with, under the path, the locked objects only.

The store runs with `synchronous=normal`: a SIGKILL loses nothing SQLite wrote
(WAL frames are in the OS's cache, only a power loss or OS crash drops them;
docs/kv.md), and it keeps the test's per-object compare-and-swaps (the staged
objects) from costing a disk sync each. No timing is asserted; waits have
generous timeouts. tests/operations/test_crash_resume.py kills at chosen KV
calls, deterministically.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.config import Settings
from kvlake.graveler import keys
from kvlake.graveler.records import encode
from kvlake.graveler.staging.store import TOMBSTONE
from kvlake.lake import Lake
from tests.api.server import Server
from tests.support import wait_until
from tests.support.backends import BLOCKSTORES

COMMITTED = 171_000
DELETED = range(5, COMMITTED, 171)  # 1,000 committed objects deleted in staging
RESTAGED = [i for i in range(0, COMMITTED, 34) if i % 171 != 5]  # 5,001 staged again
STAGED = 30_000
TOTAL = COMMITTED - len(DELETED) + STAGED
LOCKED = ("del/c085001", "del/s15000")
OUTSIDE_COMMITTED = ("de", "dek/1", "del", "del.x", "del0", "del0/1", "z/1")
OUTSIDE_STAGED = ("del.new", "del0/new")
OUTSIDE = tuple(sorted((*OUTSIDE_COMMITTED, *OUTSIDE_STAGED)))
KILLS = 5
SEED_VARIABLE = "KVLAKE_TEST_SIGKILL_SEED"
ENV = {"KVLAKE_OPERATIONS_LEASE_TIME": "1", "KVLAKE_OPERATIONS_BATCH_SIZE": "2000"}
COUNTERS = ("enumerated_count", "deleted_count", "failed_count", "skipped_count")
ENTRY_FIELDS = ("path", "physical_address", "checksum", "size_bytes", "mtime")
WAIT = 300.0  # seconds: only keeps a broken run from hanging

Status = dict[str, object]


def _entry(address: str) -> bytes:
    entry = ObjectEntry(address=address, size=1, checksum=address, mtime=1.0, content_type="x")
    return encode(to_value(entry))


def _fill(data_dir: Path, kv_url: str, blockstore_url: str) -> int:
    """Write the data; the number of committed ranges wholly under `del/`."""
    settings = Settings(data_dir=str(data_dir), kv_url=kv_url, blockstore_url=blockstore_url)
    with Lake.open(settings) as lake:
        graveler = lake.graveler
        namespace = "s3://lake/big" if lake.blockstore.scheme == "s3" else "local://big"
        repo = graveler.create_repository("big", storage_namespace=namespace)
        token = graveler.get_branch(repo, "main").staging_token
        committed = [f"del/c{i:06d}" for i in range(COMMITTED)] + list(OUTSIDE_COMMITTED)
        lake.store.set_many(
            keys.staging_partition(token),
            ((path.encode(), _entry(f"data/{path}")) for path in committed),
        )
        commit_id = graveler.commit(repo, "main", committer="t", message="data")
        token = graveler.get_branch(repo, "main").staging_token
        staged = [f"del/c{i:06d}" for i in RESTAGED] + [f"del/s{i:05d}" for i in range(STAGED)]
        lake.store.set_many(
            keys.staging_partition(token),
            ((path.encode(), _entry(f"data/staged/{path}")) for path in (*staged, *OUTSIDE_STAGED)),
        )
        lake.store.set_many(
            keys.staging_partition(token),
            ((f"del/c{i:06d}".encode(), TOMBSTONE) for i in DELETED),
        )
        commit = graveler.get_commit(repo, commit_id)
        ranges = graveler.committed.ranges(repo.storage_namespace, commit.metarange_id)
        return sum(1 for r in ranges if r.min_key.startswith(b"del/") and r.max_key < b"del0")


def _kill(server: Server) -> None:
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait()


def _paths(http: httpx.Client, ref: str, prefix: str = "") -> list[dict[str, object]]:
    answer = http.get(
        f"/repositories/big/refs/{ref}/objects/ls", params={"prefix": prefix, "amount": 1000}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert not body["pagination"]["has_more"], body["pagination"]
    results: list[dict[str, object]] = body["results"]
    return [{name: row[name] for name in ENTRY_FIELDS} for row in results]


def _stats(http: httpx.Client, ref: str, paths: tuple[str, ...]) -> list[dict[str, object]]:
    rows = []
    for path in paths:
        answer = http.get(f"/repositories/big/refs/{ref}/objects/stat", params={"path": path})
        assert answer.status_code == 200, answer.text
        rows.append({name: answer.json()[name] for name in ENTRY_FIELDS})
    return rows


def _outside(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return [row for row in rows if not str(row["path"]).startswith("del/")]


def _past(least: int) -> Callable[[Status], bool]:
    """Whether a status has counted at least `least` objects processed."""
    return lambda status: _processed(status) >= least


def _processed(status: Status) -> int:
    return sum(int(str(status[name])) for name in COUNTERS[1:])


@pytest.mark.parametrize("kind", sorted(BLOCKSTORES))
def test_a_bulk_delete_survives_its_server_killed_at_random_moments(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    seed = int(os.environ.get(SEED_VARIABLE) or random.SystemRandom().randrange(2**32))
    rng = random.Random(seed)
    enumerated_at = rng.randrange(1, TOTAL)
    processed_at = sorted(rng.sample(range(1, TOTAL), KILLS - 1))
    delays = [rng.uniform(0.0, 0.05)] + [rng.uniform(0.0, 0.3) for _ in processed_at]
    replay = f"seed {seed} (replay: {SEED_VARIABLE}={seed})"
    print(
        f"{replay}: kills once enumerated >= {enumerated_at}, then processed >= {processed_at};"
        f" delays {[round(d, 3) for d in delays]} s"
    )

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    kv_url = f"sqlite://{data_dir / 'kv.db'}?synchronous=normal"
    env = dict(ENV)
    if kind == "s3":  # the bucket `lake` of the session's moto server, emptied for the test
        from tests.support.s3server import lake_bucket_env

        env |= lake_bucket_env(request, tmp_path / "aws")
    whole_ranges = _fill(data_dir, kv_url, env.get("KVLAKE_BLOCKSTORE_URL", ""))
    assert whole_ranges >= 10, f"the data should make range batches; {whole_ranges} whole ranges"
    seen: list[dict[str, int]] = []
    landed: list[str] = []

    def start() -> Server:
        return Server(data_dir, kv_url=kv_url, env=env)

    def status_of(http: httpx.Client, operation_id: str) -> Status:
        answer = http.get(f"/operations/bulk-delete/status/{operation_id}")
        assert answer.status_code == 200, f"{replay}: {answer.text}"
        status: Status = answer.json()
        assert status["status"] != "failed", f"{replay}: {status}"
        seen.append({name: int(str(status[name])) for name in COUNTERS})
        return status

    def kill_when(server: Server, operation_id: str, ready: Callable[[Status], bool]) -> None:
        status: Status = {}

        def check(http: httpx.Client) -> bool:
            nonlocal status
            status = status_of(http, operation_id)
            return str(status["status"]).startswith("completed") or ready(status)

        with server.http() as http:
            wait_until(
                lambda: check(http),
                timeout=WAIT,
                interval=0.01,
                message=lambda: f"the kill point ({replay}); last status {status}",
            )
        time.sleep(delays[len(landed)])
        _kill(server)
        landed.append(f"{status['status']} {seen[-1]}")

    server = start()
    with server.http() as http:
        for path in LOCKED:
            taken = http.put("/repositories/big/locks", params={"path": path, "ttl": 7 * 24 * 3600})
            assert taken.status_code == 200, taken.text
        outside_before = _stats(http, "main", OUTSIDE)
        created = http.put("/operations/bulk-delete", params={"path": "lakefs://big/main/del/"})
        assert created.status_code == 202, created.text
    operation_id = created.json()["operation_id"]

    kill_when(server, operation_id, lambda s: int(str(s["enumerated_count"])) >= enumerated_at)
    for threshold in processed_at:
        server = start()
        with server.http() as http:
            so_far = _processed(status_of(http, operation_id))
        kill_when(server, operation_id, _past(max(threshold, so_far + 1)))
    print(f"{replay}: the kills landed at {landed}")

    server = start()
    try:
        with server.http() as http:
            wait_until(
                lambda: str(status_of(http, operation_id)["status"]).startswith("completed"),
                timeout=WAIT,
                message=lambda: f"the operation to complete ({replay}); last {seen[-1:]}",
            )
            final = status_of(http, operation_id)
            failures = http.get(f"/operations/bulk-delete/status/{operation_id}/failures")
            on_branch = _paths(http, "main")
            commit = http.post("/repositories/big/branches/main/commits", json={"message": "m"})
            assert commit.status_code == 201, f"{replay}: {commit.text}"
            commit_id = commit.json()["id"]
            committed = _paths(http, commit_id)
            committed_under = _paths(http, commit_id, "del/")
    finally:
        server.stop()

    assert final["status"] == "completed_with_errors", f"{replay}: {final}"
    counted = [final[name] for name in ("total_count", *COUNTERS)]
    assert counted == [TOTAL, TOTAL, TOTAL - len(LOCKED), 0, len(LOCKED)], f"{replay}: {final}"
    for before, after in zip(seen, seen[1:], strict=False):
        for name in COUNTERS:
            assert after[name] >= before[name], f"{replay}: {name} went back: {before} {after}"
    assert failures.status_code == 200, failures.text
    reasons = [(row["path"], row["outcome"], row["reason"]) for row in failures.json()["results"]]
    assert [(path, outcome) for path, outcome, _ in reasons] == [
        (path, "skipped") for path in LOCKED
    ], f"{replay}: {reasons}"
    for _, _, reason in reasons:
        assert reason.startswith("write-locked by 'admin' until "), f"{replay}: {reason}"
    assert [row["path"] for row in on_branch] == sorted((*OUTSIDE, *LOCKED)), replay
    assert _outside(on_branch) == outside_before, replay
    assert [row["path"] for row in committed_under] == list(LOCKED), replay
    assert _outside(committed) == outside_before, replay
