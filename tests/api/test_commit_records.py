"""Commit `source_metarange` and createCommitRecord through the SDK and plain HTTP."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException

from kvlake.graveler import Commit
from kvlake.graveler.refs.store import commit_id
from tests.api.server import Server


def test_commit_a_source_metarange(server: Server, sdk: LakeFSClient, repo: str) -> None:
    branch = lakefs.Repository(repo, client=server.client()).branch("main")
    branch.object("a").upload(b"first")
    first = branch.commit("first").get_commit()
    branch.object("a").delete()
    head = branch.commit("delete").get_commit()
    commit = sdk.commits_api.commit(
        repo,
        "main",
        lakefs_sdk.CommitCreation(message="back to first", metadata={"k": "v"}),
        source_metarange=first.meta_range_id,
    )
    assert commit.meta_range_id == first.meta_range_id and commit.parents == [head.id]
    assert commit.metadata == {"k": "v"}
    assert branch.object("a").reader().read() == b"first"


def test_source_metarange_errors(server: Server, http: httpx.Client, repo: str) -> None:
    head = http.get(f"/repositories/{repo}/branches/main").json()["commit_id"]
    metarange = http.get(f"/repositories/{repo}/commits/{head}").json()["meta_range_id"]
    upload = http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "a"}, content=b"x"
    )
    assert upload.status_code == 201
    url = f"/repositories/{repo}/branches/main/commits"
    dirty = http.post(url, params={"source_metarange": metarange}, json={"message": "m"})
    assert dirty.status_code == 400
    assert dirty.json()["message"] == (
        "cannot use source MetaRange on a branch with uncommitted changes"
    )
    assert http.post(url, json={"message": "m"}).status_code == 201
    missing = http.post(url, params={"source_metarange": "0" * 64}, json={"message": "m"})
    assert missing.status_code == 400 and "metarange" in missing.json()["message"]


def test_create_commit_record(sdk: LakeFSClient, http: httpx.Client, repo: str) -> None:
    head = sdk.commits_api.get_commit(repo, "main")
    commit = Commit(
        committer="restorer",
        message="restored",
        metarange_id=head.meta_range_id,
        creation_date=1_700_000_000,
        parents=(head.id,),
        metadata={"from": "dump"},
        generation=(head.generation or 0) + 1,
    )
    identifier = commit_id(commit)
    record = lakefs_sdk.CommitRecordCreation(
        commit_id=identifier,
        version=1,
        committer=commit.committer,
        message=commit.message,
        metarange_id=commit.metarange_id,
        creation_date=commit.creation_date,
        parents=list(commit.parents),
        metadata=commit.metadata,
        generation=commit.generation,
    )
    sdk.internal_api.create_commit_record(repo, record)
    stored = sdk.commits_api.get_commit(repo, identifier)
    assert (stored.message, stored.parents, stored.metadata, stored.creation_date) == (
        "restored",
        [head.id],
        {"from": "dump"},
        1_700_000_000,
    )
    assert sdk.branches_api.get_branch(repo, "main").commit_id == head.id  # no ref moved
    with pytest.raises(ApiException) as again:
        sdk.internal_api.create_commit_record(repo, record)
    assert again.value.status == 409
    wire_body = record.to_dict()  # type: ignore[no-untyped-call]
    body: dict[str, object] = {**wire_body, "commit_id": head.id}
    wrong = http.post(f"/repositories/{repo}/commits", json=body)
    assert (
        wrong.status_code == 400
        and wrong.json()["message"] == "commit id: invalid value: validation error"
    )
    for bad in ({**body, "version": 2}, {**body, "extra": 1}, {"commit_id": identifier}):
        assert http.post(f"/repositories/{repo}/commits", json=bad).status_code == 400
    missing = http.post("/repositories/nope/commits", json={**body, "commit_id": identifier})
    assert missing.status_code == 404 and missing.json()["message"] == "repository not found"
