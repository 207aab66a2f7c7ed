"""A server with local imports on: /config/storage says so, and the lakeFS wrapper imports a
folder without copying it; repositories stay out of the import folders."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import lakefs
import pytest

from tests.api.server import Server


@pytest.fixture(scope="module")
def local_lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("local-imports")
    for key, body in (("set/a.txt", b"A"), ("set/deep/b.txt", b"BB")):
        path = data_dir / "blocks" / "imports" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    env = {
        "KVLAKE_IMPORTS_LOCAL_ENABLED": "true",
        "KVLAKE_IMPORTS_LOCAL_PREFIXES": "local://imports",
        "KVLAKE_IMPORTS_ENGINE": "local",
    }
    server = Server(data_dir, env=env)
    yield server
    server.stop()
    assert "Traceback" not in server.output(), server.output()


@pytest.fixture
def http(local_lake: Server) -> Iterator[httpx.Client]:
    with local_lake.http() as client:
        yield client


def test_the_lakefs_wrapper_imports_a_local_folder_in_place(
    local_lake: Server, http: httpx.Client
) -> None:
    storage = http.get("/config/storage").json()
    assert storage["import_support"] is True and storage["import_validity_regex"] == "^local://"
    name = f"repo-{uuid.uuid4().hex[:12]}"
    body = {"name": name, "storage_namespace": f"local://lake/{name}"}
    assert http.post("/repositories", json=body).status_code == 201
    branch = lakefs.Repository(name, client=local_lake.client()).branch("main")
    manager = branch.import_data(commit_message="local").prefix(
        "local://imports/set/", destination="imported/"
    )
    status = manager.run(poll_interval=timedelta(seconds=0.1))
    assert status.completed and status.ingested_objects == 2 and status.error is None
    assert branch.object("imported/deep/b.txt").reader().read() == b"BB"
    assert branch.object("imported/a.txt").stat().physical_address == "local://imports/set/a.txt"


def test_a_repository_in_an_import_folder_is_refused(http: httpx.Client) -> None:
    body = {"name": "inside", "storage_namespace": "local://imports/set/repo"}
    refused = http.post("/repositories", json=body)
    assert refused.status_code == 400
    assert "folder local imports read" in refused.json()["message"]
    assert http.get("/repositories/inside").status_code == 404


def test_a_source_outside_the_import_folders_is_refused(
    local_lake: Server, http: httpx.Client
) -> None:
    name = f"repo-{uuid.uuid4().hex[:12]}"
    body = {"name": name, "storage_namespace": f"local://lake/{name}"}
    assert http.post("/repositories", json=body).status_code == 201
    data_dir = Path(local_lake.log).parent
    (data_dir / "blocks" / "other").mkdir(exist_ok=True)
    request = {
        "paths": [{"type": "common_prefix", "path": "local://other/", "destination": "d/"}],
        "commit": {"message": "m"},
    }
    refused = http.post(f"/repositories/{name}/branches/main/import", json=request)
    assert refused.status_code == 400
    assert "outside the folders local imports may read" in refused.json()["message"]
