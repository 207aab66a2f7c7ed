"""Branches, commits and tags through the SDKs."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import ApiException, BadRequestException, NotFoundException

from tests.api.server import Server


def test_create_branch_is_201_with_the_commit_id_as_text(http: httpx.Client, repo: str) -> None:
    head = http.get(f"/repositories/{repo}/branches/main").json()["commit_id"]
    response = http.post(f"/repositories/{repo}/branches", json={"name": "dev", "source": "main"})
    assert response.status_code == 201 and response.text == head


def test_branch_lifecycle_with_the_generated_client(sdk: LakeFSClient, repo: str) -> None:
    sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name="dev", source="main"))
    names = [ref.id for ref in sdk.branches_api.list_branches(repo).results]
    assert names == ["dev", "main"]
    with pytest.raises(ApiException) as conflict:
        sdk.branches_api.create_branch(repo, lakefs_sdk.BranchCreation(name="dev", source="main"))
    assert conflict.value.status == 409
    sdk.branches_api.delete_branch(repo, "dev")
    with pytest.raises(NotFoundException):
        sdk.branches_api.get_branch(repo, "dev")


def test_commit_and_get_commit_by_any_ref(sdk: LakeFSClient, repo: str) -> None:
    sdk.objects_api.upload_object(repo, "main", "f", content=b"1")
    commit = sdk.commits_api.commit(
        repo, "main", lakefs_sdk.CommitCreation(message="first", metadata={"k": "v"})
    )
    assert commit.message == "first" and commit.metadata == {"k": "v"}
    assert commit.committer == "admin"
    sdk.tags_api.create_tag(repo, lakefs_sdk.TagCreation(id="v1", ref="main"))
    for ref in ("main", "v1", commit.id):
        assert sdk.commits_api.get_commit(repo, ref).id == commit.id


def test_commit_without_changes_is_400(sdk: LakeFSClient, repo: str) -> None:
    with pytest.raises(BadRequestException):
        sdk.commits_api.commit(repo, "main", lakefs_sdk.CommitCreation(message="nothing"))


def test_tags_list_get_delete(sdk: LakeFSClient, repo: str) -> None:
    for name in ("t1", "t2", "t3"):
        sdk.tags_api.create_tag(repo, lakefs_sdk.TagCreation(id=name, ref="main"))
    page = sdk.tags_api.list_tags(repo, amount=2)
    assert [t.id for t in page.results] == ["t1", "t2"] and page.pagination.has_more
    assert sdk.tags_api.get_tag(repo, "t3").id == "t3"
    sdk.tags_api.delete_tag(repo, "t3")
    with pytest.raises(NotFoundException):
        sdk.tags_api.get_tag(repo, "t3")


def test_high_level_branch_commit_and_tag(server: Server, repo: str) -> None:
    repository = lakefs.Repository(repo, client=server.client())
    dev = repository.branch("dev").create(source_reference="main")
    dev.object("file").upload(b"data")
    reference = dev.commit(message="add file")
    tag = repository.tag("release").create(reference.get_commit().id)
    assert tag.get_commit().id == reference.get_commit().id
    assert [b.id for b in repository.branches()] == ["dev", "main"]
