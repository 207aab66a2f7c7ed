"""A kvlake server whose blobs live in S3 (moto's server on loopback), driven over HTTP.

The blockstore suite proves the adapter; this proves the server is wired to it:
repositories on s3:// namespaces, uploads, commits and reads land in the bucket,
a namespace outside the root is refused at creation with nothing created, and
presigned reads hand out URLs the object store itself answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import lakefs
import pytest
from lakefs_spec import LakeFSFileSystem

from tests.api.server import ACCESS_KEY_ID as ACCESS_KEY_ID_API
from tests.api.server import SECRET_ACCESS_KEY as SECRET_ACCESS_KEY_API
from tests.api.server import Server
from tests.support.s3server import MotoS3, server_env

BUCKET = "kvlake-api"
UPLOAD_URL_SECONDS = 90
"""getPhysicalAddress's presigned PUT URL lifetime on this module's server (default 60 s)."""


@pytest.fixture(scope="module")
def s3_lake(moto_s3: MotoS3, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    moto_s3.reset()
    moto_s3.admin.create_bucket(Bucket=BUCKET)
    env = server_env(moto_s3.endpoint, BUCKET, tmp_path_factory.mktemp("aws"))
    env["KVLAKE_SERVER_PRESIGN_UPLOAD_EXPIRY"] = str(UPLOAD_URL_SECONDS)
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


def test_a_listing_is_not_presigned_even_on_s3(http: httpx.Client, repo: str) -> None:
    listed = http.get(f"/repositories/{repo}/refs/main/objects/ls", params={"presign": "true"})
    assert listed.status_code == 400, listed.text
    message = listed.json()["message"]
    assert "presigns single objects, not a listing's entries" in message
    assert "pre_sign_support is false" not in message  # it is true on S3


def test_storage_config_reports_presigned_urls_on_s3(http: httpx.Client) -> None:
    storage = http.get("/config/storage").json()
    assert storage["blockstore_type"] == "s3"
    assert storage["pre_sign_support"] is True and storage["pre_sign_support_ui"] is True
    assert storage["pre_sign_multipart_upload"] is True  # the multipart presign calls


def test_the_lakefs_wrapper_uploads_through_presigned_urls(
    s3_lake: Server, repo: str, moto_s3: MotoS3
) -> None:
    """`lakefs` uploads with pre_sign whenever the server reports pre_sign_support: the bytes
    go to the object store, and kvlake only hands out the address and links it."""
    branch = lakefs.Repository(repo, client=s3_lake.client()).branch("main")
    written = branch.object("dir/direct.txt").upload(
        b"straight to s3", content_type="text/plain", metadata={"who": "wrapper"}
    )
    stat = written.stat()
    # An address with a link ticket: uploadObject never makes one, getPhysicalAddress does.
    assert "," in stat.physical_address and stat.physical_address.startswith(f"s3://{BUCKET}/")
    key = stat.physical_address.removeprefix(f"s3://{BUCKET}/")
    stored = moto_s3.admin.get_object(Bucket=BUCKET, Key=key)
    assert stored["Body"].read() == b"straight to s3"
    assert (stat.size_bytes, stat.metadata) == (14, {"who": "wrapper"})
    assert stat.checksum == stored["ETag"].strip('"')
    assert branch.object("dir/direct.txt").reader().read() == b"straight to s3"
    branch.commit("direct upload")
    with branch.object("dir/direct.txt").reader(pre_sign=True) as reader:
        assert reader.read() == b"straight to s3"
    # Mode "x": If-None-Match on the link, as for uploadObject.
    with pytest.raises(lakefs.exceptions.ObjectExistsException):
        branch.object("dir/direct.txt").upload(b"again", mode="xb")


def test_a_link_of_an_address_for_another_path_is_refused(http: httpx.Client, repo: str) -> None:
    backing = f"/repositories/{repo}/branches/main/staging/backing"
    location = http.get(backing, params={"path": "a", "presign": "true"}).json()
    put = httpx.put(location["presigned_url"], content=b"abc")
    assert put.status_code == 200, put.text
    body = {"staging": location, "checksum": put.headers["ETag"], "size_bytes": 3}
    refused = http.put(backing, params={"path": "b"}, json=body)
    assert refused.status_code == 400
    assert "was not handed out for path 'b'" in refused.json()["message"]
    outside = body | {"staging": {"physical_address": "s3://elsewhere/x"}}
    refused = http.put(backing, params={"path": "a"}, json=outside)
    assert refused.status_code == 400
    assert "outside the repository's storage namespace" in refused.json()["message"]
    linked = http.put(backing, params={"path": "a"}, json=body)
    assert linked.status_code == 200, linked.text
    assert linked.json()["physical_address"] == location["physical_address"]
    read = http.get(f"/repositories/{repo}/refs/main/objects", params={"path": "a"})
    assert read.content == b"abc"


def test_a_blob_replaced_through_its_presigned_url_after_the_link_is_refused_on_read(
    http: httpx.Client, repo: str
) -> None:
    # The presigned PUT URL outlives the link: a second PUT of the same size replaces
    # the bytes under the recorded size and checksum. Reads must refuse them, not serve.
    backing = f"/repositories/{repo}/branches/main/staging/backing"
    location = http.get(backing, params={"path": "a", "presign": "true"}).json()
    # The URL lives only as long as the server's setting: long enough to start the PUT.
    query = parse_qs(urlsplit(location["presigned_url"]).query)
    assert query["X-Amz-Expires"] == [str(UPLOAD_URL_SECONDS)]
    signed = datetime.strptime(query["X-Amz-Date"][0], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    assert abs(location["presigned_url_expiry"] - signed.timestamp() - UPLOAD_URL_SECONDS) <= 1
    put = httpx.put(location["presigned_url"], content=b"abc")
    assert put.status_code == 200, put.text
    body = {"staging": location, "checksum": put.headers["ETag"], "size_bytes": 3}
    assert http.put(backing, params={"path": "a"}, json=body).status_code == 200
    reads = f"/repositories/{repo}/refs/main/objects"
    before = http.get(reads, params={"path": "a", "presign": "true"})
    assert before.status_code == 302 and httpx.get(before.headers["Location"]).content == b"abc"
    objects = f"/repositories/{repo}/branches/main/objects"
    deep = http.post(f"{objects}/copy", params={"dest_path": "deep"}, json={"src_path": "a"})
    shallow = http.post(
        f"{objects}/copy", params={"dest_path": "shallow"}, json={"src_path": "a", "shallow": True}
    )
    assert deep.status_code == shallow.status_code == 201
    replaced = httpx.put(location["presigned_url"], content=b"xyz")
    assert replaced.status_code == 200, replaced.text
    for path, ranged in (("a", {}), ("a", {"Range": "bytes=1-"}), ("shallow", {})):
        read = http.get(reads, params={"path": path}, headers=ranged)
        assert read.status_code == 409, read.text
        assert "was replaced after it was linked" in read.json()["message"]
        assert "upload the object again" in read.json()["message"]
    # Presigned reads go to the store without kvlake: no URL for the replaced blob.
    for path in ("a", "shallow"):
        presigned = (
            http.get(reads, params={"path": path, "presign": "true"}),
            http.get(f"{reads}/stat", params={"path": path, "presign": "true"}),
        )
        for refused in presigned:
            assert refused.status_code == 409, refused.text
            assert "was replaced after it was linked" in refused.json()["message"]
    assert http.get(f"{reads}/stat", params={"path": "a"}).status_code == 200  # no blob read
    # A deep copy made before is kvlake's own blob: the linked bytes, unaffected.
    assert http.get(reads, params={"path": "deep"}).content == b"abc"
    # A deep copy made after would copy the replaced bytes: refused, nothing staged.
    late = http.post(f"{objects}/copy", params={"dest_path": "late"}, json={"src_path": "a"})
    assert late.status_code == 409, late.text
    assert "was replaced after it was linked" in late.json()["message"]
    assert http.get(reads, params={"path": "late"}).status_code == 404


def test_copy_object_copies_inside_the_bucket_unless_shallow(
    http: httpx.Client, repo: str, moto_s3: MotoS3
) -> None:
    objects = f"/repositories/{repo}/branches/main/objects"
    source = http.post(objects, params={"path": "src"}, content=b"copy me").json()
    deep = http.post(f"{objects}/copy", params={"dest_path": "deep"}, json={"src_path": "src"})
    assert deep.status_code == 201, deep.text
    assert deep.json()["physical_address"] != source["physical_address"]
    key = deep.json()["physical_address"].removeprefix(f"s3://{BUCKET}/")
    assert moto_s3.admin.get_object(Bucket=BUCKET, Key=key)["Body"].read() == b"copy me"
    shallow = http.post(
        f"{objects}/copy",
        params={"dest_path": "shallow"},
        json={"src_path": "src", "shallow": True},
    )
    assert shallow.status_code == 201, shallow.text
    assert shallow.json()["physical_address"] == source["physical_address"]
    for path in ("deep", "shallow"):
        read = http.get(f"/repositories/{repo}/refs/main/objects", params={"path": path})
        assert read.content == b"copy me"


def test_the_lakefs_wrapper_imports_a_prefix_without_copying_it(
    s3_lake: Server, http: httpx.Client, repo: str, moto_s3: MotoS3
) -> None:
    source = f"external-{repo}"
    for key, body in (("a.txt", b"A"), ("deep/b.txt", b"BB")):
        moto_s3.admin.put_object(Bucket=BUCKET, Key=f"{source}/{key}", Body=body)
    storage = http.get("/config/storage").json()
    assert storage["import_support"] is True and storage["import_validity_regex"] == "^s3://"
    branch = lakefs.Repository(repo, client=s3_lake.client()).branch("main")
    manager = branch.import_data(commit_message="zero copy").prefix(
        f"s3://{BUCKET}/{source}/", destination="imported/"
    )
    status = manager.run(poll_interval=timedelta(seconds=0.1))
    assert status.completed and status.ingested_objects == 2 and status.error is None
    assert status.commit is not None and status.commit.message == "zero copy"
    assert branch.object("imported/deep/b.txt").reader().read() == b"BB"
    stat = branch.object("imported/a.txt").stat()
    assert stat.physical_address == f"s3://{BUCKET}/{source}/a.txt"
    listed = moto_s3.admin.list_objects_v2(Bucket=BUCKET, Prefix=f"{repo}/data/")
    assert "Contents" not in listed  # nothing was copied into the namespace


def test_import_status_and_cancel_of_an_unknown_import_are_404(
    http: httpx.Client, repo: str
) -> None:
    path = f"/repositories/{repo}/branches/main/import"
    assert http.get(path, params={"id": "nope"}).status_code == 404
    assert http.delete(path, params={"id": "nope"}).status_code == 404
    inside = {
        "paths": [{"type": "common_prefix", "path": f"s3://{BUCKET}/{repo}/", "destination": ""}],
        "commit": {"message": "m"},
    }
    refused = http.post(path, json=inside)
    assert refused.status_code == 400
    assert f"is inside repository {repo}'s namespace" in refused.json()["message"]


def test_lakefs_spec_writes_and_reads_through_presigned_urls(
    s3_lake: Server, http: httpx.Client, repo: str
) -> None:
    fs = LakeFSFileSystem(
        host=s3_lake.url, username=ACCESS_KEY_ID_API, password=SECRET_ACCESS_KEY_API, pre_sign=True
    )
    fs.pipe(f"{repo}/main/spec/table.csv", b"a,b\n1,2\n")
    with fs.open(f"{repo}/main/spec/table.csv", "rb") as reader:
        assert reader.read() == b"a,b\n1,2\n"
    assert fs.info(f"{repo}/main/spec/table.csv")["size"] == 8
    stat = http.get(
        f"/repositories/{repo}/refs/main/objects/stat", params={"path": "spec/table.csv"}
    )
    assert "," in stat.json()["physical_address"]  # linked from getPhysicalAddress, not uploaded


MIB = 1 << 20


def test_a_presigned_multipart_upload_goes_straight_to_the_store(
    http: httpx.Client, repo: str
) -> None:
    storage = http.get("/config/storage").json()
    assert storage["pre_sign_multipart_upload"] is True
    uploads = f"/repositories/{repo}/branches/main/staging/pmpu"
    path = {"path": "big.bin"}
    started = http.post(uploads, params=path | {"parts": 1})
    assert started.status_code == 201, started.text
    upload = started.json()
    first = b"a" * (5 * MIB)  # S3's smallest part but the last
    put = httpx.put(upload["presigned_urls"][0], content=first)
    assert put.status_code == 200, put.text
    address = {"physical_address": upload["physical_address"]}
    part_url = f"{uploads}/{upload['upload_id']}/parts/2"
    second = http.put(part_url, params=path, json=address)
    assert second.status_code == 200, second.text
    put2 = httpx.put(second.json()["presigned_url"], content=b"tail")
    parts = [
        {"part_number": 1, "etag": put.headers["ETag"]},
        {"part_number": 2, "etag": put2.headers["ETag"]},
    ]
    refused = http.put(  # only the path the address was handed out for
        f"{uploads}/{upload['upload_id']}",
        params={"path": "other.bin"},
        json=address | {"parts": parts},
    )
    assert refused.status_code == 400 and "was not handed out" in refused.json()["message"]
    done = http.put(
        f"{uploads}/{upload['upload_id']}",
        params=path,
        json=address | {"parts": parts, "content_type": "application/x-big"},
    )
    assert done.status_code == 200, done.text
    assert done.json()["size_bytes"] == 5 * MIB + 4
    assert done.json()["physical_address"] == upload["physical_address"]
    objects = f"/repositories/{repo}/refs/main/objects"
    read = http.get(objects, params=path, headers={"Range": "bytes=-5"})
    assert read.content == b"atail"


def test_a_multipart_part_can_be_copied_from_an_object_and_an_upload_aborted(
    http: httpx.Client, repo: str, moto_s3: MotoS3
) -> None:
    objects = f"/repositories/{repo}/branches/main/objects"
    source = b"".join(bytes([65 + i % 26]) * 1024 for i in range(6 * 1024))  # 6 MiB
    assert http.post(objects, params={"path": "src"}, content=source).status_code == 201
    uploads = f"/repositories/{repo}/branches/main/staging/pmpu"
    upload = http.post(uploads, params={"path": "joined"}).json()
    address = {"physical_address": upload["physical_address"]}
    base = f"{uploads}/{upload['upload_id']}"
    copied = http.put(
        f"{base}/parts/1/copy",
        params={"path": "joined"},
        json=address
        | {
            "copy_source": {
                "repository": repo,
                "ref": "main",
                "path": "src",
                "range": f"bytes=0-{5 * MIB - 1}",
            }
        },
    )
    assert copied.status_code == 204, copied.text
    tail = http.put(
        f"{base}/parts/2/copy",
        params={"path": "joined"},
        json=address | {"copy_source": {"repository": repo, "ref": "main", "path": "src"}},
    )
    assert tail.status_code == 204, tail.text
    parts = [
        {"part_number": 1, "etag": copied.headers["ETag"]},
        {"part_number": 2, "etag": tail.headers["ETag"]},
    ]
    done = http.put(base, params={"path": "joined"}, json=address | {"parts": parts})
    assert done.status_code == 200, done.text
    joined = http.get(f"/repositories/{repo}/refs/main/objects", params={"path": "joined"})
    assert joined.content == source[: 5 * MIB] + source
    aborted = http.post(uploads, params={"path": "never"}).json()
    gone = http.request(
        "DELETE",
        f"{uploads}/{aborted['upload_id']}",
        params={"path": "never"},
        json={"physical_address": aborted["physical_address"]},
    )
    assert gone.status_code == 204, gone.text
    assert moto_s3.admin.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []
