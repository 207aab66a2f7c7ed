"""logCommits' `stop_at` and commit's `date`, through the SDK and the wrapper."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient

from tests.api.server import Server


def _commits(sdk: LakeFSClient, repo: str, count: int) -> list[str]:
    ids = []
    for i in range(count):
        sdk.objects_api.upload_object(repo, "main", f"f{i}", content=b"x")
        commit = sdk.commits_api.commit(repo, "main", lakefs_sdk.CommitCreation(message=f"c{i}"))
        ids.append(commit.id)
    return ids


def test_stop_at_lists_down_to_its_commit_included(sdk: LakeFSClient, repo: str) -> None:
    ids = _commits(sdk, repo, 4)
    log = sdk.refs_api.log_commits(repo, "main", stop_at=ids[1])
    assert [c.id for c in log.results] == [ids[3], ids[2], ids[1]]
    assert log.pagination.has_more is False
    sdk.tags_api.create_tag(repo, lakefs_sdk.TagCreation(id="v1", ref=ids[2]))
    paged = sdk.refs_api.log_commits(repo, "main", stop_at="v1", amount=1)
    assert [c.id for c in paged.results] == [ids[3]] and paged.pagination.has_more
    rest = sdk.refs_api.log_commits(
        repo, "main", stop_at="v1", amount=1, after=paged.pagination.next_offset
    )
    assert [c.id for c in rest.results] == [ids[2]] and not rest.pagination.has_more


def test_stop_at_outside_the_history_and_empty_change_nothing(
    http: httpx.Client, sdk: LakeFSClient, repo: str
) -> None:
    ids = _commits(sdk, repo, 2)
    sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name="side", source="main"))
    side = _commits_on(sdk, repo, "side")
    log = f"/repositories/{repo}/refs/main/commits"
    everything = http.get(log).json()["results"]
    assert [c["id"] for c in http.get(log, params={"stop_at": side}).json()["results"]] == [
        c["id"] for c in everything
    ]
    assert http.get(log, params={"stop_at": ""}).json()["results"] == everything
    missing = http.get(log, params={"stop_at": "no-such-ref"})
    assert missing.status_code == 404
    assert ids[1] == everything[0]["id"]


def _commits_on(sdk: LakeFSClient, repo: str, branch: str) -> str:
    sdk.objects_api.upload_object(repo, branch, "side.txt", content=b"s")
    return str(sdk.commits_api.commit(repo, branch, lakefs_sdk.CommitCreation(message="s")).id)


def test_commit_date_sets_the_creation_date(server: Server, repo: str) -> None:
    main = lakefs.Repository(repo, client=server.client()).branch("main")
    main.object("a").upload(b"a")
    ref = main.commit(message="back-dated", date=1_600_000_000)
    assert ref.get_commit().creation_date == 1_600_000_000
    assert main.get_commit().creation_date == 1_600_000_000


@pytest.mark.parametrize("date", [-1, 253_402_300_800, "soon"])
def test_a_bad_date_is_400_and_commits_nothing(http: httpx.Client, repo: str, date: object) -> None:
    branch = f"/repositories/{repo}/branches/main"
    http.post(f"{branch}/objects", params={"path": "a"}, content=b"a")
    before = http.get(branch).json()["commit_id"]
    response = http.post(f"{branch}/commits", json={"message": "m", "date": date})
    assert response.status_code == 400, response.text
    assert http.get(branch).json()["commit_id"] == before
