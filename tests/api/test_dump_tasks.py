"""Refs dump and restore as lakeFS's background tasks: dumpSubmit, dumpStatus,
restoreSubmit, restoreStatus, through the SDK and plain HTTP; a submit answers at once,
the status says running until the outcome, and a dead runner's task is run again by
another once its lease lapsed (a restore that had begun writing fails clearly)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio
import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from kvlake.operations import Driver, submit_restore, task_status
from kvlake.operations.refs_tasks import CUT_SHORT
from tests.api.inprocess import app_over, client_of, services_in
from tests.api.server import Server
from tests.support import FakeClock, wait_until

_S = TypeVar("_S", lakefs_sdk.RepositoryDumpStatus, lakefs_sdk.RepositoryRestoreStatus)


def finished(status: Callable[[], _S]) -> _S:
    """Poll a background task's status until it is done; return the last answer."""
    answers: list[_S] = []

    def done() -> bool:
        answers.append(status())
        return bool(answers[-1].done)

    wait_until(done, message="the task to finish")
    return answers[-1]


def test_a_dump_task_restores_through_a_restore_task(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    branch.object("f").upload(b"data")
    branch.commit("data")
    sdk.tags_api.create_tag(repo, lakefs_sdk.TagCreation(id="v1", ref="main"))
    task = sdk.repositories_api.dump_submit(repo)
    status = finished(lambda: sdk.repositories_api.dump_status(repo, task.id))
    assert status.done and status.error is None and status.refs is not None
    assert status.id == task.id and status.update_time is not None
    namespace = sdk.repositories_api.get_repository(repo).storage_namespace
    assert http.delete(f"/repositories/{repo}").status_code == 204
    copy = f"copy-{uuid.uuid4().hex[:8]}"
    bare = {"name": copy, "storage_namespace": namespace}
    assert http.post("/repositories", params={"bare": "true"}, json=bare).status_code == 201
    refs = status.refs
    restore = sdk.repositories_api.restore_submit(
        copy,
        lakefs_sdk.RefsRestore(
            commits_meta_range_id=refs.commits_meta_range_id,
            tags_meta_range_id=refs.tags_meta_range_id,
            branches_meta_range_id=refs.branches_meta_range_id,
        ),
    )
    restored = finished(lambda: sdk.repositories_api.restore_status(copy, restore.id))
    assert restored.done and restored.error is None
    assert bytes(sdk.objects_api.get_object(copy, "v1", "f")) == b"data"
    # Into a repository that is not bare: refused at submit, as lakeFS does.
    body = {
        "commits_meta_range_id": refs.commits_meta_range_id,
        "tags_meta_range_id": refs.tags_meta_range_id,
        "branches_meta_range_id": refs.branches_meta_range_id,
    }
    again = http.post(f"/repositories/{copy}/restore", json=body)
    assert again.status_code == 400
    assert again.json()["message"] == "can only restore into a bare repository"


def test_a_missing_dump_is_a_finished_task_with_an_error(
    server: Server, http: httpx.Client, repo: str
) -> None:
    bare_name = f"bare-{uuid.uuid4().hex[:8]}"
    bare = {"name": bare_name, "storage_namespace": server.storage.namespace(bare_name)}
    assert http.post("/repositories", params={"bare": "true"}, json=bare).status_code == 201
    dump_id = "0" * 26
    body = {f"{k}_meta_range_id": dump_id for k in ("commits", "tags", "branches")}
    task = http.post(f"/repositories/{bare_name}/restore", json=body)
    assert task.status_code == 202
    status = finished(
        lambda: lakefs_sdk.RepositoryRestoreStatus.parse_obj(
            http.get(
                f"/repositories/{bare_name}/restore", params={"task_id": task.json()["id"]}
            ).json()
        )
    )
    assert status.error is not None and "no complete refs dump" in status.error
    malformed = http.post(
        f"/repositories/{bare_name}/restore", json={**body, "tags_meta_range_id": "x"}
    )
    assert malformed.status_code == 400


def test_unknown_tasks_are_404(sdk: LakeFSClient, http: httpx.Client, repo: str) -> None:
    dump = sdk.repositories_api.dump_submit(repo).id
    with pytest.raises(ApiException) as unknown:
        sdk.repositories_api.dump_status(repo, "dump-nope")
    assert unknown.value.status == 404
    other_kind = http.get(f"/repositories/{repo}/restore", params={"task_id": dump})
    assert other_kind.status_code == 404 and other_kind.json()["message"] == "not found"
    assert http.get(f"/repositories/{repo}/dump").status_code == 400  # task_id is required
    missing = http.post("/repositories/nope/dump")
    assert missing.status_code == 404 and missing.json()["message"] == "repository not found"


# -- in-process: operation records a runner runs, and a task whose runner died ----------------


async def _tasks_on_the_runner(tmp_path: Path) -> None:
    clock = FakeClock()
    services = services_in(tmp_path, clock=clock)
    lake = services.lake
    try:
        async with client_of(app_over(services)) as client:
            body = {"name": "held", "storage_namespace": "local://held"}
            assert (await client.post("/repositories", json=body)).status_code == 201
            submitted = await client.post("/repositories/held/dump")
            assert submitted.status_code == 202
            task = {"task_id": submitted.json()["id"]}
            running = (await client.get("/repositories/held/dump", params=task)).json()
            assert running["done"] is False and "refs" not in running and "error" not in running
            listed = (await client.get("/operations", params={"kind": "dump"})).json()
            assert [op["operation_id"] for op in listed["results"]] == [task["task_id"]]
            assert listed["results"][0]["path"] == "lakefs://held/"  # no branch: the repository
            assert (await client.get("/operations", params={"kind": "restore"})).json()[
                "results"
            ] == []
            lake.operations.run_once()
            done = (await client.get("/repositories/held/dump", params=task)).json()
            assert done["done"] is True and "error" not in done
            assert len(set(done["refs"].values())) == 1  # one dump id in all three fields
            # A restore of a dump that is not there: running, then done with the error.
            bare = {"name": "bare", "storage_namespace": "local://bare"}
            created = await client.post("/repositories", params={"bare": "true"}, json=bare)
            assert created.status_code == 201
            missing = {f"{k}_meta_range_id": "0" * 26 for k in ("commits", "tags", "branches")}
            restore = await client.post("/repositories/bare/restore", json=missing)
            assert restore.status_code == 202
            task = {"task_id": restore.json()["id"]}
            assert (await client.get("/repositories/bare/restore", params=task)).json()[
                "done"
            ] is False
            lake.operations.run_once()
            failed = (await client.get("/repositories/bare/restore", params=task)).json()
            assert failed["done"] is True and "no complete refs dump" in failed["error"]
            # A dump whose runner died after claiming it: running while its lease holds,
            # then another runner runs it again.
            orphan = (await client.post("/repositories/held/dump")).json()["id"]
            dead = Driver(lake.ledger, owner="dead", lease_time=60, clock=clock)
            assert dead.claim(orphan).owner == "dead"
            lake.operations.run_once()
            held = await client.get("/repositories/held/dump", params={"task_id": orphan})
            assert held.json()["done"] is False
            clock.advance(61)
            lake.operations.run_once()
            resumed = await client.get("/repositories/held/dump", params={"task_id": orphan})
            assert resumed.json()["done"] is True and "error" not in resumed.json()
            assert resumed.json()["refs"] != done["refs"]  # a new, complete dump
    finally:
        services.close()


def test_tasks_run_on_the_runner_and_resume_after_its_death(tmp_path: Path) -> None:
    anyio.run(_tasks_on_the_runner, tmp_path)


def _restore_cut_short(tmp_path: Path, *, written: bool) -> dict[str, object]:
    """A restore whose runner died after marking it `in_progress`; `written`: after it had
    begun writing refs. Returns its status once another runner took it over."""
    clock = FakeClock()
    services = services_in(tmp_path, clock=clock)
    lake = services.lake
    try:
        graveler = lake.graveler
        source = graveler.create_repository("src", storage_namespace="local://shared")
        dump_id = graveler.dumps.dump(source).dump_id
        graveler.delete_repository("src")
        bare = graveler.create_bare_repository("copy", storage_namespace="local://shared")
        task_id = submit_restore(lake.ledger, graveler, bare, dump_id, creator="me", now=clock.now)
        dead = Driver(lake.ledger, owner="dead", lease_time=60, clock=clock)
        dead.claim(task_id)
        dead.checkpoint(task_id, status="in_progress")
        if written:
            graveler.dumps.restore(bare, dump_id)  # it wrote (all of) the refs, then died
        clock.advance(61)
        lake.operations.run_once()
        status = task_status(lake.ledger, bare, "restore", task_id)
        return {"done": status.done, "error": status.error}
    finally:
        services.close()


def test_a_restore_resumed_after_it_began_writing_fails_clearly(tmp_path: Path) -> None:
    assert _restore_cut_short(tmp_path, written=True) == {"done": True, "error": CUT_SHORT}


def test_a_restore_resumed_before_it_wrote_anything_runs_again(tmp_path: Path) -> None:
    assert _restore_cut_short(tmp_path, written=False) == {"done": True, "error": ""}
