"""Refs dump and restore as lakeFS's tasks: dumpSubmit, dumpStatus, restoreSubmit,
restoreStatus, through the SDK and plain HTTP."""

from __future__ import annotations

import uuid

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.server import Server


def test_a_dump_task_restores_through_a_restore_task(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    branch.object("f").upload(b"data")
    branch.commit("data")
    sdk.tags_api.create_tag(repo, lakefs_sdk.TagCreation(id="v1", ref="main"))
    task = sdk.repositories_api.dump_submit(repo)
    status = sdk.repositories_api.dump_status(repo, task.id)
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
    restored = sdk.repositories_api.restore_status(copy, restore.id)
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
    status = http.get(f"/repositories/{bare_name}/restore", params={"task_id": task.json()["id"]})
    assert status.status_code == 200
    assert status.json()["done"] is True and "no complete refs dump" in status.json()["error"]
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
