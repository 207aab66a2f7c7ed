"""A kvlake server whose blobs live in S3 (moto's server on loopback), driven over HTTP.

The blockstore suite proves the adapter; this proves the server is wired to it:
repositories on s3:// namespaces, uploads, commits and reads land in the bucket,
a namespace outside the root is refused at creation with nothing created, and
presigned reads hand out URLs the object store itself answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.api.server import Server
from tests.support.s3server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, MotoS3

BUCKET = "kvlake-api"


@pytest.fixture(scope="module")
def s3_lake(moto_s3: MotoS3, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    moto_s3.reset()
    moto_s3.admin.create_bucket(Bucket=BUCKET)
    blank = tmp_path_factory.mktemp("aws")
    env = {
        "KVLAKE_BLOCKSTORE_URL": f"s3://{BUCKET}?endpoint_url={moto_s3.endpoint}",
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "AWS_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(blank / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(blank / "credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    server = Server(tmp_path_factory.mktemp("s3-lake"), env=env)
    yield server
    server.stop()
    assert "Traceback" not in server.output(), server.output()


@pytest.fixture
def http(s3_lake: Server) -> Iterator[httpx.Client]:
    with s3_lake.http() as client:
        yield client


@pytest.fixture
def repo(http: httpx.Client) -> str:
    name = f"repo-{uuid.uuid4().hex[:12]}"
    body = {"name": name, "storage_namespace": f"s3://{BUCKET}/{name}"}
    response = http.post("/repositories", json=body)
    assert response.status_code == 201, response.text
    return name


def test_objects_are_stored_in_the_bucket_and_read_back(
    http: httpx.Client, repo: str, moto_s3: MotoS3
) -> None:
    upload = http.post(
        f"/repositories/{repo}/branches/main/objects", params={"path": "a.txt"}, content=b"on s3"
    )
    assert upload.status_code == 201, upload.text
    commit = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "first"})
    assert commit.status_code == 201, commit.text
    read = http.get(f"/repositories/{repo}/refs/main/objects", params={"path": "a.txt"})
    assert read.content == b"on s3"
    listed = moto_s3.admin.list_objects_v2(Bucket=BUCKET, Prefix=f"{repo}/")
    keys = [entry["Key"] for entry in listed.get("Contents", [])]
    assert any(key.startswith(f"{repo}/data/") for key in keys), keys


def test_a_repository_in_another_bucket_is_refused_and_not_created(http: httpx.Client) -> None:
    name = f"repo-{uuid.uuid4().hex[:12]}"
    body = {"name": name, "storage_namespace": f"s3://no-such-bucket/{name}"}
    response = http.post("/repositories", json=body)
    assert response.status_code == 400, response.text
    assert "not below the blockstore root 's3://kvlake-api'" in response.json()["message"]
    assert http.get(f"/repositories/{name}").status_code == 404


def test_a_namespace_outside_the_root_bucket_is_refused(http: httpx.Client) -> None:
    body = {"name": f"repo-{uuid.uuid4().hex[:12]}", "storage_namespace": "local://elsewhere"}
    response = http.post("/repositories", json=body)
    assert response.status_code == 400
    assert "use a s3:// namespace" in response.json()["message"]


def test_presigned_reads_go_straight_to_the_object_store(http: httpx.Client, repo: str) -> None:
    path = {"path": "b.bin"}
    upload = http.post(f"/repositories/{repo}/branches/main/objects", params=path, content=b"b")
    assert upload.status_code == 201, upload.text
    stat = http.get(
        f"/repositories/{repo}/refs/main/objects/stat", params=path | {"presign": "true"}
    ).json()
    assert stat["physical_address"].startswith("http://127.0.0.1:")
    # The expiry is the signature's own: signed at X-Amz-Date, valid X-Amz-Expires seconds.
    query = parse_qs(urlsplit(stat["physical_address"]).query)
    signed = datetime.strptime(query["X-Amz-Date"][0], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    expires = int(signed.timestamp()) + int(query["X-Amz-Expires"][0])
    assert abs(stat["physical_address_expiry"] - expires) <= 1
    assert httpx.get(stat["physical_address"]).content == b"b"  # no kvlake credentials
    redirect = http.get(f"/repositories/{repo}/refs/main/objects", params=path | {"presign": "1"})
    assert redirect.status_code == 302
    assert httpx.get(redirect.headers["Location"]).content == b"b"


def test_storage_config_reports_s3_without_presigned_uploads(http: httpx.Client) -> None:
    storage = http.get("/config/storage").json()
    assert storage["blockstore_type"] == "s3"
    # Presigned *uploads* (getPhysicalAddress) are not served yet, and the lakefs
    # wrapper uploads that way whenever pre_sign_support is true.
    assert storage["pre_sign_support"] is False
