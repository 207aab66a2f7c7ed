"""Repositories through the SDKs: create, list with pagination, get, delete, sample data."""

from __future__ import annotations

import uuid

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient
from lakefs_sdk.exceptions import NotFoundException

from tests.api.server import Server


def _name() -> str:
    return f"r-{uuid.uuid4().hex[:12]}"


def test_create_get_and_delete_a_repository(server: Server, sdk: LakeFSClient) -> None:
    name = _name()
    created = sdk.repositories_api.create_repository(
        lakefs_sdk.RepositoryCreation(name=name, storage_namespace=server.storage.namespace(name))
    )
    assert created.id == name and created.default_branch == "main"
    assert created.storage_id == ""
    fetched = sdk.repositories_api.get_repository(name)
    assert fetched.storage_namespace == server.storage.namespace(name)
    assert sdk.repositories_api.get_repository_metadata(name) == {}
    sdk.repositories_api.delete_repository(name)
    with pytest.raises(NotFoundException):
        sdk.repositories_api.get_repository(name)


def test_a_taken_name_conflicts_and_a_bad_name_is_refused(
    server: Server, sdk: LakeFSClient, http: httpx.Client, repo: str
) -> None:
    with pytest.raises(lakefs_sdk.ApiException) as conflict:
        sdk.repositories_api.create_repository(
            lakefs_sdk.RepositoryCreation(
                name=repo, storage_namespace=server.storage.namespace("other")
            )
        )
    assert conflict.value.status == 409
    # The SDK refuses the name itself, so send it raw: the server must refuse it too.
    response = http.post(
        "/repositories",
        json={"name": "Bad_Name", "storage_namespace": server.storage.namespace("b")},
    )
    assert response.status_code == 400 and "Bad_Name" in response.json()["message"]


def test_sample_data_is_committed_on_the_default_branch(server: Server) -> None:
    name = _name()
    client = server.client()
    repository = lakefs.Repository(name, client=client).create(
        storage_namespace=server.storage.namespace(name), include_samples=True
    )
    paths = [obj.path for obj in repository.branch("main").objects()]
    assert "README.md" in paths
    assert repository.branch("main").get_commit().message == "Add sample data"
    messages = [commit.message for commit in repository.branch("main").log()]
    assert messages == ["Add sample data", "Repository created"]


def test_listing_pages_carry_all_pagination_fields(server: Server, http: httpx.Client) -> None:
    prefix = f"pg-{uuid.uuid4().hex[:8]}"
    names = [f"{prefix}-{i}" for i in range(5)]
    for name in names:
        http.post(
            "/repositories",
            json={"name": name, "storage_namespace": server.storage.namespace(name)},
        )
    seen: list[str] = []
    after = ""
    while True:
        body = http.get(
            "/repositories", params={"prefix": prefix, "amount": 2, "after": after}
        ).json()
        assert set(body["pagination"]) == {"has_more", "next_offset", "results", "max_per_page"}
        seen += [r["id"] for r in body["results"]]
        if not body["pagination"]["has_more"]:
            break
        after = body["pagination"]["next_offset"]
    assert seen == names


def test_a_search_finds_the_names_holding_it_across_pages(
    server: Server, http: httpx.Client
) -> None:
    marker = uuid.uuid4().hex[:8]
    names = [f"s{i}-{marker}-x" for i in range(3)]
    for name in names:
        http.post(
            "/repositories",
            json={"name": name, "storage_namespace": server.storage.namespace(name)},
        )
    seen: list[str] = []
    after = ""
    while True:
        body = http.get(
            "/repositories", params={"search": marker, "amount": 2, "after": after}
        ).json()
        seen += [r["id"] for r in body["results"]]
        if not body["pagination"]["has_more"]:
            break
        after = body["pagination"]["next_offset"]
    assert seen == names


def test_high_level_listing_walks_every_page(server: Server, http: httpx.Client) -> None:
    prefix = f"hl-{uuid.uuid4().hex[:8]}"
    for i in range(3):
        http.post(
            "/repositories",
            json={
                "name": f"{prefix}-{i}",
                "storage_namespace": server.storage.namespace(f"{prefix}{i}"),
            },
        )
    found = [r.id for r in lakefs.repositories(client=server.client(), prefix=prefix)]
    assert found == [f"{prefix}-{i}" for i in range(3)]


@pytest.mark.parametrize("extra", [{"read_only": True}, {"storage_id": "other"}])
def test_unsupported_repository_options_are_refused(
    server: Server, http: httpx.Client, extra: dict[str, object]
) -> None:
    name = _name()
    response = http.post(
        "/repositories",
        json={"name": name, "storage_namespace": server.storage.namespace(name), **extra},
    )
    assert response.status_code == 400
    assert http.get(f"/repositories/{name}").status_code == 404


def test_a_failed_creation_says_why_and_leaves_the_name_free(
    server: Server, http: httpx.Client
) -> None:
    """Issue 10 item 7: a too-long namespace blamed a blob and held the name for 120 s."""
    name = f"r-{uuid.uuid4().hex[:8]}"
    too_long = {"name": name, "storage_namespace": server.storage.namespace("a" * 300)}
    refused = http.post("/repositories", json=too_long)
    assert refused.status_code == 400
    assert "segment of 300 bytes" in refused.json()["message"]
    assert http.get(f"/repositories/{name}").status_code == 404
    good = {"name": name, "storage_namespace": server.storage.namespace(name)}
    assert http.post("/repositories", json=good).status_code == 201
