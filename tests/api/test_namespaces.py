"""A storage namespace belongs to one repository: reuse and nesting are refused, in any spelling."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest

from kvlake.api.services import Services
from kvlake.config import load_settings
from kvlake.lake import Lake
from tests.api.server import Server

IN_USE = "storage namespace already in use"


def _create(http: httpx.Client, name: str, namespace: str, *, bare: bool = False) -> httpx.Response:
    params = {"bare": "true"} if bare else {}
    body = {"name": name, "storage_namespace": namespace}
    return http.post("/repositories", params=params, json=body)


def _refused(http: httpx.Client, namespace: str, *, bare: bool = False) -> str:
    name = f"other-{uuid.uuid4().hex[:8]}"
    response = _create(http, name, namespace, bare=bare)
    assert response.status_code == 400, response.text
    assert http.get(f"/repositories/{name}").status_code == 404
    message: str = response.json()["message"]
    assert message.startswith(IN_USE), message
    return message


@pytest.mark.parametrize("bare", [False, True])
def test_a_live_repositorys_namespace_is_refused_in_every_spelling_and_nesting(
    server: Server, http: httpx.Client, repo: str, bare: bool
) -> None:
    namespace = server.storage.namespace
    spellings = [namespace(repo), f"{namespace(repo)}/", f"{namespace(repo)}//"]
    if server.storage.kind == "local":
        spellings.append(f"local:///{repo}")  # a local path's own spelling
    for spelling in spellings:
        assert f"belongs to repository '{repo}'" in _refused(http, spelling, bare=bare)
    assert "overlaps" in _refused(http, namespace(f"{repo}/inner"), bare=bare)
    outer = f"outer-{uuid.uuid4().hex[:8]}"
    assert _create(http, outer, namespace(f"{outer}/a/b")).status_code == 201
    assert "overlaps" in _refused(http, namespace(outer), bare=bare)
    assert "overlaps" in _refused(http, namespace(f"{outer}/a"), bare=bare)
    assert "overlaps" in _refused(http, namespace(f"{outer}/a/b/c"), bare=bare)
    assert _create(http, f"{outer}-x", namespace(f"{outer}/a/bc")).status_code == 201


def test_a_namespace_deleted_without_purge_keeps_its_data_from_new_repositories(
    server: Server, http: httpx.Client, repo: str
) -> None:
    uploaded = http.post(
        f"/repositories/{repo}/branches/main/objects",
        params={"path": "kept"},
        content=b"data",
        headers={"Content-Type": "application/octet-stream"},
    )
    assert uploaded.status_code == 201, uploaded.text
    assert http.delete(f"/repositories/{repo}").status_code == 204
    # A new repository there could be purged later, deleting the deleted one's data.
    namespace = server.storage.namespace
    assert "deleted without purge" in _refused(http, namespace(repo))
    assert "overlaps" in _refused(http, namespace(f"{repo}/inner"), bare=True)
    assert _create(http, repo, namespace(repo), bare=True).status_code == 201


def test_a_server_adopts_the_namespaces_of_repositories_older_than_owners(
    tmp_path: Path,
) -> None:
    settings = load_settings({"KVLAKE_DATA_DIR": str(tmp_path)})
    with Lake.open(settings) as lake:
        old = lake.graveler.create_repository("old", storage_namespace="local://old")
        lake.store.drop_partition(b"graveler_namespaces")  # as an earlier version left it
        assert lake.graveler.references.namespace_owner("local://old") is None
    services = Services.open(settings)
    try:
        owner = services.graveler.references.namespace_owner("local://old")
        assert owner is not None and owner.instance_uid == old.instance_uid
    finally:
        services.close()
