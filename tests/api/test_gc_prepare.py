"""lakeFS's GC preparation calls through the SDK and HTTP: the commits CSV against the
repository's commits and rules, the uncommitted Parquet against its staged objects,
permissions, and bad input, answered as lakeFS answers them."""

from __future__ import annotations

import csv
import io
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
import lakefs
import lakefs_sdk
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from kvlake.operations import Driver
from kvlake.operations.tasks import CANCELLED
from tests.api.inprocess import app_over, client_of, services_in
from tests.api.server import Server
from tests.support import FakeClock, wait_until

NO_RULES = lakefs_sdk.GarbageCollectionRules(default_retention_days=0, branches=[])


def _blob(server: Server, location: str) -> bytes:
    """The blob a location the server answered names, read through its blockstore."""
    namespace, key = _split(server, location)
    return server.storage.blocks.get(namespace, key)


def _table(server: Server, folder: str) -> pa.Table:
    """The Parquet files under a folder location, read through the server's blockstore."""
    namespace, prefix = _split(server, folder)
    keys = server.storage.keys(namespace, prefix)
    assert keys, folder
    blocks = server.storage.blocks
    return pa.concat_tables(pq.read_table(io.BytesIO(blocks.get(namespace, k))) for k in keys)


def _split(server: Server, location: str) -> tuple[str, str]:
    """(namespace, key) of a location in a repository namespace of the server's storage."""
    root = server.storage.namespace("")
    assert location.startswith(root), location
    name, _, key = location.removeprefix(root).partition("/")
    return server.storage.namespace(name), key


def _commits_csv(server: Server, location: str) -> list[dict[str, str]]:
    text = _blob(server, location).decode()
    assert text.splitlines()[0] == "commit_id,expired,metarange_id"
    return list(csv.DictReader(io.StringIO(text)))


def _commit(branch: lakefs.Branch, path: str) -> str:
    branch.object(path).upload(path.encode())
    return branch.commit(f"add {path}").get_commit().id


def _first_parents(sdk: LakeFSClient, repo: str, ref: str) -> list[str]:
    log = sdk.refs_api.log_commits(repo, ref, first_parent=True, amount=1000)
    return [commit.id for commit in log.results]


def test_the_commits_file_lists_what_the_rules_retain(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    lake_repo = lakefs.Repository(repo, client=server.client())
    main = lake_repo.branch("main")
    _commit(main, "a")
    _commit(main, "b")
    dev = lake_repo.branch("dev").create(source_reference="main")
    dev_head = _commit(dev, "d")
    tmp = lake_repo.branch("tmp").create(source_reference="dev")
    dangling = _commit(tmp, "t")
    tmp.delete()
    # main keeps 30 days of history; dev and dangling commits keep nothing but heads.
    sdk.repositories_api.set_gc_rules(
        repo,
        lakefs_sdk.GarbageCollectionRules(
            default_retention_days=0,
            branches=[lakefs_sdk.GarbageCollectionRule(branch_id="main", retention_days=30)],
        ),
    )
    prepared = sdk.internal_api.prepare_garbage_collection_commits(repo)
    namespace = sdk.repositories_api.get_repository(repo).storage_namespace
    assert prepared.gc_commits_location == (
        f"{namespace}/_lakefs/retention/gc/commits/run_id={prepared.run_id}/commits.csv"
    )
    assert prepared.gc_addresses_location == f"{namespace}/_lakefs/retention/gc/addresses/"
    # Only S3 signs URLs (the local blockstore has none to give).
    assert (prepared.gc_commits_presigned_url is None) == (server.storage.kind == "local")
    rows = _commits_csv(server, prepared.gc_commits_location)
    retained = {row["commit_id"] for row in rows}
    main_line = _first_parents(sdk, repo, "main")
    assert len(main_line) == 3  # the repository's first commit, a, b
    assert retained == {*main_line, dev_head}
    assert dangling not in retained
    assert {row["expired"] for row in rows} == {"false"}
    for row in rows:
        commit = sdk.commits_api.get_commit(repo, row["commit_id"])
        assert row["metarange_id"] == commit.meta_range_id
    # A second preparation is a new run with its own file.
    again = sdk.internal_api.prepare_garbage_collection_commits(repo)
    assert again.run_id != prepared.run_id
    assert _commits_csv(server, again.gc_commits_location) == rows


def test_the_async_preparation_reports_its_result(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    main = lakefs.Repository(repo, client=server.client()).branch("main")
    head = _commit(main, "a")
    sdk.repositories_api.set_gc_rules(repo, NO_RULES)
    internal = sdk.internal_api
    task = internal.prepare_garbage_collection_commits_async(repo)
    statuses: list[lakefs_sdk.PrepareGarbageCollectionCommitsStatus] = []

    def done() -> bool:
        statuses.append(internal.prepare_garbage_collection_commits_status(repo, task.id))
        return bool(statuses[-1].completed)

    wait_until(done, message="the preparation task to complete")
    status = statuses[-1]
    assert status.task_id == task.id and status.error is None and status.update_time is not None
    result = status.result
    assert result is not None and result.gc_addresses_location.endswith("/gc/addresses/")
    assert f"run_id={result.run_id}/" in result.gc_commits_location
    rows = _commits_csv(server, result.gc_commits_location)
    assert [row["commit_id"] for row in rows] == [head]  # 0 days: the head alone


def test_bad_input_is_answered_as_lakefs_answers_it(http: httpx.Client, repo: str) -> None:
    gc = f"/repositories/{repo}/gc"
    for response in (http.post(f"{gc}/prepare_commits"), http.post(f"{gc}/prepare_commits/async")):
        assert response.status_code == 404
        assert response.json()["message"] == "get gc rules: not found"
    missing = "/repositories/no-such-repo/gc"
    for response in (
        http.post(f"{missing}/prepare_commits"),
        http.post(f"{missing}/prepare_commits/async"),
        http.get(f"{missing}/prepare_commits/status", params={"id": "x"}),
        http.post(f"{missing}/prepare_uncommited", json={}),
    ):
        assert response.status_code == 404
        assert response.json()["message"] == "repository not found"
    unknown = http.get(f"{gc}/prepare_commits/status", params={"id": "gc-nope"})
    assert unknown.status_code == 404 and unknown.json()["message"] == "not found"
    assert http.get(f"{gc}/prepare_commits/status").status_code == 400  # id is required
    dump = http.post(f"/repositories/{repo}/dump").json()["id"]  # a task of another kind
    assert http.get(f"{gc}/prepare_commits/status", params={"id": dump}).status_code == 404
    for token in ("%%%", "bm90IGpzb24=", "eyJydW5faWQiOiIuLi94In0="):
        bad = http.post(f"{gc}/prepare_uncommited", json={"continuation_token": token})
        assert bad.status_code == 400 and bad.json()["message"] == "invalid continuation token"
    extra = http.post(f"{gc}/prepare_uncommited", json={"continuation_token": None, "x": 1})
    assert extra.status_code == 400


def test_the_uncommitted_files_list_every_staged_address(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    lake_repo = lakefs.Repository(repo, client=server.client())
    main = lake_repo.branch("main")
    _commit(main, "committed")
    dev = lake_repo.branch("dev").create(source_reference="main")
    for branch, path in ((main, "m1"), (main, "m2"), (dev, "d1")):
        branch.object(path).upload(path.encode())
    main.object("gone").upload(b"x")
    main.object("gone").delete()  # staged, then a tombstone: nothing to keep
    dev.object("committed").delete()  # a tombstone over committed data
    namespace = sdk.repositories_api.get_repository(repo).storage_namespace
    expected = {
        sdk.objects_api.stat_object(repo, ref, path).physical_address.removeprefix(namespace + "/")
        for ref, path in (("main", "m1"), ("main", "m2"), ("dev", "d1"))
    }
    answer = sdk.internal_api.prepare_garbage_collection_uncommitted(repo)
    assert answer.continuation_token is None
    assert answer.gc_uncommitted_location == (
        f"{namespace}/_lakefs/retention/gc/uncommitted/{answer.run_id}/uncommitted/"
    )
    table = _table(server, answer.gc_uncommitted_location)
    assert table.schema.names == ["physical_address", "creation_date"]
    assert set(table.column("physical_address").to_pylist()) == expected
    assert table.num_rows == len(expected)
    now = time.time()
    assert all(now - 3600 < date <= now for date in table.column("creation_date").to_pylist())


def test_nothing_staged_answers_no_location(sdk: LakeFSClient, repo: str) -> None:
    answer = sdk.internal_api.prepare_garbage_collection_uncommitted(
        repo, lakefs_sdk.PrepareGCUncommittedRequest()
    )
    assert answer.gc_uncommitted_location == "" and answer.continuation_token is None


def test_the_config_names_the_grace_period(server: Server, sdk: LakeFSClient) -> None:
    assert sdk.internal_api.get_garbage_collection_config().grace_period == 86400
    anonymous = httpx.get(f"{server.url}/api/v1/config/garbage-collection")
    assert anonymous.status_code == 401


def _user_with(server: Server, sdk: LakeFSClient, repo: str, action: str) -> LakeFSClient:
    name = f"gc-{uuid.uuid4().hex[:8]}"
    statement = lakefs_sdk.Statement(
        effect="allow", action=[action], resource=f"arn:lakefs:fs:::repository/{repo}"
    )
    sdk.auth_api.create_policy(lakefs_sdk.Policy(id=name, statement=[statement]))
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=name))
    sdk.auth_api.attach_policy_to_user(name, name)
    keys = sdk.auth_api.create_credentials(name)
    return server.sdk(keys.access_key_id, keys.secret_access_key)


def test_permissions_are_lakefs_retention_actions(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    sdk.repositories_api.set_gc_rules(repo, NO_RULES)
    commits = _user_with(server, sdk, repo, "retention:PrepareGarbageCollectionCommits")
    uncommitted = _user_with(server, sdk, repo, "retention:PrepareGarbageCollectionUncommitted")
    commits.internal_api.prepare_garbage_collection_commits(repo)
    task = commits.internal_api.prepare_garbage_collection_commits_async(repo).id
    commits.internal_api.prepare_garbage_collection_commits_status(repo, task)
    uncommitted.internal_api.prepare_garbage_collection_uncommitted(repo)
    assert uncommitted.internal_api.get_garbage_collection_config().grace_period == 86400
    denied_calls: list[Callable[[], object]] = [
        lambda: commits.internal_api.prepare_garbage_collection_uncommitted(repo),
        lambda: uncommitted.internal_api.prepare_garbage_collection_commits(repo),
        lambda: uncommitted.internal_api.prepare_garbage_collection_commits_async(repo),
        lambda: uncommitted.internal_api.prepare_garbage_collection_commits_status(repo, task),
    ]
    for denied_call in denied_calls:
        with pytest.raises(ApiException) as denied:
            denied_call()
        assert denied.value.status == 401


# -- in-process: pages of a set size, and the async task held at a gate ------------------


async def _stage(client: httpx.AsyncClient, repo: str, branch: str, path: str) -> str:
    url = f"/repositories/{repo}/branches/{branch}/objects"
    response = await client.post(url, params={"path": path}, content=path.encode())
    assert response.status_code == 201, response.text
    address: str = response.json()["physical_address"]
    return address.removeprefix(f"local://{repo}/")


async def _pages(tmp_path: Path) -> None:
    services = services_in(tmp_path, KVLAKE_GC_UNCOMMITTED_PAGE_SIZE="2")
    repo = "pages"
    try:
        async with client_of(app_over(services)) as client:
            body = {"name": repo, "storage_namespace": f"local://{repo}"}
            assert (await client.post("/repositories", json=body)).status_code == 201
            dev = {"name": "dev", "source": "main"}
            branch = await client.post(f"/repositories/{repo}/branches", json=dev)
            assert branch.status_code == 201, branch.text
            expected = {await _stage(client, repo, "main", p) for p in ("a", "b", "c")}
            expected |= {await _stage(client, repo, "dev", p) for p in ("x", "y")}
            await _stage(client, repo, "main", "gone")
            objects = f"/repositories/{repo}/branches/main/objects"
            assert (await client.delete(objects, params={"path": "gone"})).status_code == 204
            answers: list[dict[str, str]] = []
            token = None
            while True:
                request: dict[str, str] = {"continuation_token": token} if token else {}
                response = await client.post(
                    f"/repositories/{repo}/gc/prepare_uncommited", json=request
                )
                assert response.status_code == 201, response.text
                answers.append(response.json())
                token = answers[-1].get("continuation_token")
                if not token:
                    break
        assert len(answers) == 3  # 2 + 2 + 1 addresses
        assert len({answer["run_id"] for answer in answers}) == 1
        locations = {answer["gc_uncommitted_location"] for answer in answers}
        assert len(locations) == 1
        folder = tmp_path / "blocks" / locations.pop().removeprefix("local://")
        tables = [pq.read_table(part) for part in sorted(folder.iterdir())]
        assert sorted(table.num_rows for table in tables) == [1, 2, 2]
        listed = [a for table in tables for a in table.column("physical_address").to_pylist()]
        assert sorted(listed) == sorted(expected)
    finally:
        services.close()


def test_uncommitted_pages_follow_the_continuation_token(tmp_path: Path) -> None:
    anyio.run(_pages, tmp_path)


async def _preparation_on_the_runner(tmp_path: Path) -> None:
    clock = FakeClock()
    services = services_in(tmp_path, clock=clock)
    lake = services.lake
    repo = "held"
    try:
        async with client_of(app_over(services)) as client:
            body = {"name": repo, "storage_namespace": f"local://{repo}"}
            assert (await client.post("/repositories", json=body)).status_code == 201
            rules = {"default_retention_days": 1, "branches": []}
            put = await client.put(f"/repositories/{repo}/settings/gc_rules", json=rules)
            assert put.status_code == 204
            submitted = await client.post(f"/repositories/{repo}/gc/prepare_commits/async")
            assert submitted.status_code == 202
            task_id = submitted.json()["id"]
            status_url = f"/repositories/{repo}/gc/prepare_commits/status"
            running = (await client.get(status_url, params={"id": task_id})).json()
            assert running["task_id"] == task_id and running["completed"] is False
            assert "result" not in running and "error" not in running
            listed = await client.get("/operations", params={"kind": "gc-prepare-commits"})
            assert [op["operation_id"] for op in listed.json()["results"]] == [task_id]
            lake.operations.run_once()
            done = (await client.get(status_url, params={"id": task_id})).json()
            assert done["completed"] is True and "error" not in done
            assert done["result"]["run_id"] == task_id
            location = done["result"]["gc_commits_location"]
            head = (await client.get(f"/repositories/{repo}/branches/main")).json()["commit_id"]
            # One whose runner died after claiming it: another runs it once the lease lapsed.
            orphan = (await client.post(f"/repositories/{repo}/gc/prepare_commits/async")).json()
            dead = Driver(lake.ledger, owner="dead", lease_time=60, clock=clock)
            assert dead.claim(orphan["id"]).owner == "dead"
            lake.operations.run_once()
            held = (await client.get(status_url, params={"id": orphan["id"]})).json()
            assert held["completed"] is False
            clock.advance(61)
            lake.operations.run_once()
            resumed = (await client.get(status_url, params={"id": orphan["id"]})).json()
            assert resumed["completed"] is True and "error" not in resumed
            # Rules deleted between the submit and the run: the task's error, no file.
            late = (await client.post(f"/repositories/{repo}/gc/prepare_commits/async")).json()
            deleted = await client.delete(f"/repositories/{repo}/settings/gc_rules")
            assert deleted.status_code == 204
            lake.operations.run_once()
            failed = (await client.get(status_url, params={"id": late["id"]})).json()
            assert failed["completed"] is True and "result" not in failed
            assert "rules" in failed["error"]["message"]
            # The status of another kind's task, or of no task: 404.
            dump = (await client.post(f"/repositories/{repo}/dump")).json()["id"]
            other = await client.get(status_url, params={"id": dump})
            assert other.status_code == 404
        rows = (tmp_path / "blocks" / location.removeprefix("local://")).read_text()
        assert rows.splitlines()[1].startswith(f"{head},false,")
        late_csv = location.replace(task_id, late["id"]).removeprefix("local://")
        assert task_id in location and not (tmp_path / "blocks" / late_csv).exists()
    finally:
        services.close()


def test_the_async_preparation_runs_on_the_runner_and_resumes_after_its_death(
    tmp_path: Path,
) -> None:
    anyio.run(_preparation_on_the_runner, tmp_path)


async def _cancelled_preparation(tmp_path: Path) -> None:
    services = services_in(tmp_path)
    lake = services.lake
    repo = "cancelled"
    try:
        async with client_of(app_over(services)) as client:
            body = {"name": repo, "storage_namespace": f"local://{repo}"}
            assert (await client.post("/repositories", json=body)).status_code == 201
            rules = {"default_retention_days": 1, "branches": []}
            put = await client.put(f"/repositories/{repo}/settings/gc_rules", json=rules)
            assert put.status_code == 204
            task_id = (await client.post(f"/repositories/{repo}/gc/prepare_commits/async")).json()[
                "id"
            ]
            assert (await client.delete(f"/operations/{task_id}")).status_code in (200, 202)
            lake.operations.run_once()
            status_url = f"/repositories/{repo}/gc/prepare_commits/status"
            status = (await client.get(status_url, params={"id": task_id})).json()
            assert status["completed"] is True and "result" not in status
            assert status["error"]["message"] == CANCELLED
            operation = (await client.get(f"/operations/{task_id}")).json()
            assert operation["status"] == "cancelled"
    finally:
        services.close()


def test_a_cancelled_preparation_reads_done_with_an_error_and_writes_nothing(
    tmp_path: Path,
) -> None:
    anyio.run(_cancelled_preparation, tmp_path)
