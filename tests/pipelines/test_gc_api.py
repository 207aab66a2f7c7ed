"""GC through the API: a run starts at once (202) and its status says how it went."""

from __future__ import annotations

import io
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
from pyspark.sql import SparkSession

from kvlake.api.services import Services
from kvlake.config import Settings
from kvlake.graveler import make_rules
from kvlake.lake import Lake
from kvlake.operations import Operation
from kvlake.pipelines.gc.runs import GcRunEngine
from tests.api.inprocess import app_over, client_of, settings_in
from tests.pipelines.test_gc import namespace_of

ORPHAN = "data/20250101T00/orphan"
UNKNOWN_RUN = "01m8a1b2c3d4e5f6g7h8j9k0m1"


@asynccontextmanager
async def _served(
    tmp_path: Path, blockstore_url: str = "", *, background: bool = True
) -> AsyncIterator[tuple[httpx.AsyncClient, Lake]]:
    """The API over a lake in `tmp_path`, on `blockstore_url` ("": the data dir's folder),
    its runner running operations in the background unless `background` is false."""
    blocks = {"KVLAKE_BLOCKSTORE_URL": blockstore_url} if blockstore_url else {}
    lake = Lake.open(settings_in(tmp_path, **blocks))
    services = Services(lake)
    services.install()
    if background:
        services.start_background_jobs()
    repo = lake.graveler.create_repository("repo1", storage_namespace=namespace_of(lake))
    lake.graveler.retention.set_rules(repo, make_rules(7))
    lake.catalog.upload(repo, "main", "kept", io.BytesIO(b"referenced"))
    lake.blockstore.put(repo.storage_namespace, ORPHAN, b"orphan")
    try:
        async with client_of(app_over(services)) as client:
            yield client, lake
    finally:
        lake.close()


async def _finished(client: httpx.AsyncClient, run_id: str) -> dict[str, object]:
    for _ in range(600):
        answer = await client.get(f"/repositories/repo1/gc/runs/{run_id}")
        assert answer.status_code == 200, answer.text
        status: dict[str, object] = answer.json()
        if status["status"] != "running":
            return status
        await anyio.sleep(0.5)
    raise AssertionError(f"GC run {run_id} still running after 300 s")


def test_a_run_started_through_the_api_marks_sweeps_and_reports(
    spark: SparkSession, tmp_path: Path, settings: Settings
) -> None:
    anyio.run(_run_through_the_api, tmp_path, settings.blockstore_url)


async def _run_through_the_api(tmp_path: Path, blockstore_url: str) -> None:
    async with _served(tmp_path, blockstore_url) as (client, lake):
        started = await client.post("/repositories/repo1/gc/runs", json={})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        again = await client.post("/repositories/repo1/gc/runs", json={"mode": "mark"})
        assert (
            again.status_code == 409
            and f"has garbage collection run {run_id!r} going" in again.text
        )

        status = await _finished(client, run_id)

        assert status["status"] == "swept", status
        summary = status["summary"]
        assert isinstance(summary, dict)
        assert summary["counts"]["deleted"] == 1 and summary["counts"]["bytes_freed"] == 6
        namespace = lake.graveler.get_repository("repo1").storage_namespace
        assert not lake.blockstore.exists(namespace, ORPHAN)

        # One record for every kind: the run is an operation, listed and read as one.
        listed = await client.get("/operations", params={"kind": "gc-run"})
        assert listed.status_code == 200, listed.text
        (record,) = listed.json()["results"]
        assert record["operation_id"] == run_id and record["kind"] == "gc-run"
        assert record["status"] == "completed" and record["path"] == "lakefs://repo1/"
        assert record["created_by"] == "admin" and record["phase"] == "sweep"
        assert record["summary"] == "garbage collection completed: last phase sweep"
        finished = await client.delete(f"/operations/{run_id}")
        assert finished.status_code == 409 and "'completed'" in finished.text


def test_free_storage_runs_garbage_collection_after_the_delete_and_reports_bytes(
    spark: SparkSession, tmp_path: Path
) -> None:
    anyio.run(_free_storage, tmp_path)


async def _free_storage(tmp_path: Path) -> None:
    async with _served(tmp_path) as (client, lake):
        for path in ("t/1", "t/2"):
            answer = await client.post(
                "/repositories/repo1/branches/main/objects",
                params={"path": path},
                content=b"deleted",
            )
            assert answer.status_code == 201, answer.text
        created = await client.put(
            "/operations/bulk-delete",
            params={"path": "lakefs://repo1/main/t/"},
            json={"commit": {"message": "gone"}, "free_storage": True},
        )
        assert created.status_code == 202, created.text
        operation_id = created.json()["operation_id"]
        status: dict[str, object] = {}
        for _ in range(600):
            status = (await client.get(f"/operations/{operation_id}")).json()
            if status["bytes_freed"] is not None:
                break
            await anyio.sleep(0.5)
        # The delete's commit and GC after it: the orphan in an old hour folder is freed;
        # the objects just deleted stay, referenced by a commit the rules (7 days) retain.
        assert (status["status"], status["deleted_count"]) == ("completed", 2), status
        assert status["free_storage"] is True and status["bytes_freed"] == 6, status
        run = await _finished(client, str(status["gc_run_id"]))
        assert run["status"] == "swept", run
        namespace = lake.graveler.get_repository("repo1").storage_namespace
        assert not lake.blockstore.exists(namespace, ORPHAN)
        repo = lake.graveler.get_repository("repo1")
        lake.graveler.retention.delete_rules(repo)
        refused = await client.put(
            "/operations/bulk-delete",
            params={"path": "lakefs://repo1/main/t/"},
            json={"free_storage": True},
        )
        assert refused.status_code == 400 and "no garbage collection rules" in refused.text


def test_a_run_started_on_one_server_is_run_by_another_processs_runner(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The API server runs no background work; a second lake on the same store (a worker)
    claims the record, takes over the lease its start took, and runs it."""
    anyio.run(_run_elsewhere, tmp_path)


async def _run_elsewhere(tmp_path: Path) -> None:
    async with _served(tmp_path, background=False) as (client, lake):
        started = await client.post("/repositories/repo1/gc/runs", json={})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        queued = await client.get(f"/repositories/repo1/gc/runs/{run_id}")
        assert queued.json()["status"] == "running"  # recorded, not started: still "running"
        worker = Lake.open(lake.settings)
        try:
            (ran,) = worker.operations.run_once()
        finally:
            worker.close()
        assert ran.id == run_id and ran.status == "completed", ran
        status = await _finished(client, run_id)
        assert status["status"] == "swept", status
        namespace = lake.graveler.get_repository("repo1").storage_namespace
        assert not lake.blockstore.exists(namespace, ORPHAN)


def test_a_run_cancelled_mid_run_stops_at_the_next_phase_boundary(
    spark: SparkSession, tmp_path: Path
) -> None:
    anyio.run(_cancel_mid_run, tmp_path)


async def _cancel_mid_run(tmp_path: Path) -> None:
    """The cancel lands while the first phase runs (asked from inside its checkpoint, so
    exactly there): the run ends `cancelled` before its sweep, the orphan kept."""
    async with _served(tmp_path, background=False) as (client, lake):
        started = await client.post("/repositories/repo1/gc/runs", json={})
        run_id = started.json()["run_id"]
        engine = GcRunEngine(lake.engine_context())
        checkpoint = engine._driver.checkpoint
        phases: list[object] = []

        def cancel_then_checkpoint(operation_id: str, **changes: object) -> Operation:
            if "phase" in changes:
                if not phases:
                    lake.bulk_deletes.cancel(operation_id, user="", admin=True)
                phases.append(changes["phase"])
            return checkpoint(operation_id, **changes)

        engine._driver.checkpoint = cancel_then_checkpoint  # type: ignore[method-assign]
        ended = engine.run(run_id, threading.Event())
        assert ended.status == "cancelled" and ended.phase == "staged", ended
        assert phases == ["staged"]  # no phase after the cancel
        status = await client.get(f"/repositories/repo1/gc/runs/{run_id}")
        assert status.json()["status"] == "cancelled", status.text
        namespace = lake.graveler.get_repository("repo1").storage_namespace
        assert lake.blockstore.exists(namespace, ORPHAN)


def test_a_run_cancelled_before_a_runner_claims_it_deletes_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    anyio.run(_cancel_queued, tmp_path)


async def _cancel_queued(tmp_path: Path) -> None:
    async with _served(tmp_path, background=False) as (client, lake):
        started = await client.post("/repositories/repo1/gc/runs", json={})
        run_id = started.json()["run_id"]
        cancelled = await client.delete(f"/operations/{run_id}")
        assert cancelled.status_code == 202 and cancelled.json()["status"] == "cancelled"
        assert lake.operations.run_once() == []  # finished: no runner takes it up
        status = await client.get(f"/repositories/repo1/gc/runs/{run_id}")
        assert status.json()["status"] == "cancelled", status.text
        namespace = lake.graveler.get_repository("repo1").storage_namespace
        assert lake.blockstore.exists(namespace, ORPHAN)


def test_bad_requests_are_refused_before_anything_starts(
    spark: SparkSession, tmp_path: Path
) -> None:
    anyio.run(_bad_requests, tmp_path)


async def _bad_requests(tmp_path: Path) -> None:
    async with _served(tmp_path) as (client, lake):
        runs = "/repositories/repo1/gc/runs"
        no_id = await client.post(runs, json={"mode": "sweep"})
        assert no_id.status_code == 400 and "needs `run_id`" in no_id.text
        unmarked = await client.post(runs, json={"mode": "sweep", "run_id": UNKNOWN_RUN})
        assert unmarked.status_code == 404
        future = await client.post(runs, json={"grace_period_seconds": -1})
        assert future.status_code == 400 and "in the future" in future.text
        unknown = await client.get(f"{runs}/{UNKNOWN_RUN}")
        assert unknown.status_code == 404
        namespace = lake.graveler.get_repository("repo1").storage_namespace
        assert lake.blockstore.exists(namespace, ORPHAN)


def test_a_repository_without_rules_is_refused_before_a_run_starts(
    spark: SparkSession, tmp_path: Path
) -> None:
    anyio.run(_without_rules, tmp_path)


async def _without_rules(tmp_path: Path) -> None:
    async with _served(tmp_path) as (client, lake):
        repo = lake.graveler.get_repository("repo1")
        lake.graveler.retention.delete_rules(repo)
        refused = await client.post("/repositories/repo1/gc/runs", json={})
        assert refused.status_code == 404 and "no garbage collection rules" in refused.text
        assert lake.blockstore.exists(repo.storage_namespace, ORPHAN)
