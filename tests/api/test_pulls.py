"""Pull requests through the SDK and plain HTTP: a life cycle, listings, errors."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from tests.api.conftest import viewer
from tests.api.server import Server


def _create(sdk: LakeFSClient, repo: str, title: str = "add a") -> str:
    created = sdk.pulls_api.create_pull_request(
        repo,
        lakefs_sdk.PullRequestCreation(
            title=title, description="please review", source_branch="dev", destination_branch="main"
        ),
    )
    return created.id


def test_a_pull_request_life_cycle(server: Server, sdk: LakeFSClient, repo: str) -> None:
    repository = lakefs.Repository(repo, client=server.client())
    dev = repository.branch("dev").create(source_reference="main")
    dev.object("a").upload(b"from dev")
    dev.commit("add a")
    pull_id = _create(sdk, repo)
    pull = sdk.pulls_api.get_pull_request(repo, pull_id)
    assert (pull.status, pull.title, pull.description, pull.author) == (
        "open",
        "add a",
        "please review",
        "admin",
    )
    assert (pull.source_branch, pull.destination_branch) == ("dev", "main")
    sdk.pulls_api.update_pull_request(
        repo, pull_id, lakefs_sdk.PullRequestBasic(title="add a, reviewed")
    )
    listed = sdk.pulls_api.list_pull_requests(repo, status="open")
    assert [p.id for p in listed.results] == [pull_id]
    assert listed.results[0].title == "add a, reviewed"
    assert listed.results[0].description == ""  # listings leave descriptions out, as lakeFS
    merged = sdk.pulls_api.merge_pull_request(repo, pull_id)
    assert repository.branch("main").object("a").reader().read() == b"from dev"
    after = sdk.pulls_api.get_pull_request(repo, pull_id)
    assert (after.status, after.merged_commit_id) == ("merged", merged.reference)
    assert after.closed_date is not None
    assert sdk.pulls_api.list_pull_requests(repo, status="open").results == []
    assert [p.id for p in sdk.pulls_api.list_pull_requests(repo, status="closed").results] == [
        pull_id
    ]
    with pytest.raises(ApiException) as again:
        sdk.pulls_api.merge_pull_request(repo, pull_id)
    assert again.value.status == 400 and "bad pull request status" in str(again.value.body)


def test_closing_and_paging(sdk: LakeFSClient, http: httpx.Client, repo: str) -> None:
    sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name="dev", source="main"))
    ids = sorted(_create(sdk, repo, f"pr {n}") for n in range(3))  # listings are in id order
    sdk.pulls_api.update_pull_request(repo, ids[0], lakefs_sdk.PullRequestBasic(status="closed"))
    first = sdk.pulls_api.list_pull_requests(repo, amount=2)
    assert [p.id for p in first.results] == ids[:2] and first.pagination.has_more
    rest = sdk.pulls_api.list_pull_requests(repo, after=first.pagination.next_offset)
    assert [p.id for p in rest.results] == ids[2:]
    closed = sdk.pulls_api.get_pull_request(repo, ids[0])
    assert closed.status == "closed" and closed.closed_date is not None
    bad_status = http.get(f"/repositories/{repo}/pulls", params={"status": "merged"})
    assert bad_status.status_code == 400


def test_errors_carry_lakefs_texts(sdk: LakeFSClient, http: httpx.Client, repo: str) -> None:
    url = f"/repositories/{repo}/pulls"
    body = {"title": "t", "source_branch": "main", "destination_branch": "main"}
    same = http.post(url, json=body)
    assert same.status_code == 400 and same.json()["message"] == (
        "source and destination branches are the same: same branch validation error"
    )
    missing_branch = http.post(url, json={**body, "source_branch": "nope"})
    assert missing_branch.status_code == 404
    assert missing_branch.json()["message"] == "branch not found"
    bad_id = http.get(f"{url}/not-an-id")
    assert bad_id.status_code == 400
    assert (
        bad_id.json()["message"]
        == "argument pullRequestID: pull request id: invalid value: validation error"
    )
    unknown = "0" * 26
    for response in (
        http.get(f"{url}/{unknown}"),
        http.patch(f"{url}/{unknown}", json={"title": "x"}),
        http.put(f"{url}/{unknown}/merge"),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["message"] == "pull request not found"
    assert http.post(url, json={**body, "extra": 1}).status_code == 400
    assert http.get("/repositories/nope/pulls").json()["message"] == "repository not found"
    assert http.get(url).json()["results"] == []


def test_merging_needs_commit_rights_on_the_destination(
    server: Server, sdk: LakeFSClient, repo: str
) -> None:
    sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name="dev", source="main"))
    pull_id = _create(sdk, repo)
    reader = viewer(server, sdk, f"viewer-{repo}")
    with pytest.raises(ApiException) as denied:
        reader.pulls_api.merge_pull_request(repo, pull_id)
    assert denied.value.status == 401
    assert sdk.pulls_api.get_pull_request(repo, pull_id).status == "open"


def test_a_dirty_destination_is_named_as_lakefs_names_it(
    sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name="dev", source="main"))
    pull_id = _create(sdk, repo)
    sdk.objects_api.upload_object(repo, "main", "dirt", content=b"x")
    merge = http.put(f"/repositories/{repo}/pulls/{pull_id}/merge")
    assert merge.status_code == 400
    assert merge.json()["message"] == "main: uncommitted changes (dirty branch)"
    assert sdk.pulls_api.get_pull_request(repo, pull_id).status == "open"
