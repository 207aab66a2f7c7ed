"""Real S3 clients other than boto3 against a real server: the AWS CLI, MinIO's SDK, polars.

Each runs as users run it: the AWS CLI as a process with its standard
variables, MinIO's SDK and polars' native S3 support (Rust's object_store) in
this process (the `aws` fixture is conftest's).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import httpx
import polars as pl
from minio import Minio

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_aws_cli_copies_syncs_lists_and_removes(aws: Any, repo: str, tmp_path: Path) -> None:
    source = tmp_path / "source"
    for name, data in {"a.txt": b"a", "dir/b.bin": bytes(range(256)) * 100, "dir/c": b""}.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(data)
    aws("s3", "cp", "--recursive", str(source), f"s3://{repo}/main/copied/")
    listed = aws("s3", "ls", "--recursive", f"s3://{repo}/main/copied/").stdout
    assert sorted(line.split()[-1] for line in listed.splitlines()) == [
        "main/copied/a.txt",
        "main/copied/dir/b.bin",
        "main/copied/dir/c",
    ]
    assert "PRE main/" in aws("s3", "ls", f"s3://{repo}/").stdout
    back = tmp_path / "back"
    aws("s3", "sync", f"s3://{repo}/main/copied/", str(back))
    assert _tree(back) == _tree(source)
    (source / "new.txt").write_bytes(b"new")
    aws("s3", "sync", str(source), f"s3://{repo}/main/copied/")
    assert "new.txt" in aws("s3", "ls", f"s3://{repo}/main/copied/").stdout
    head = aws("s3api", "head-object", "--bucket", repo, "--key", "main/copied/a.txt").stdout
    assert '"ContentLength": 1' in head
    aws("s3", "rm", "--recursive", f"s3://{repo}/main/copied/")
    # `aws s3 ls` exits with 1 when it lists nothing.
    assert aws("s3", "ls", "--recursive", f"s3://{repo}/main/", status=1).stdout.strip() == ""


def _minio(server: Server) -> Minio:
    return Minio(
        server.url.removeprefix("http://"),
        access_key=ACCESS_KEY_ID,
        secret_key=SECRET_ACCESS_KEY,
        secure=False,
        region="us-east-1",
    )


def test_minio_sdk_puts_gets_lists_and_removes(server: Server, repo: str) -> None:
    client = _minio(server)
    assert client.bucket_exists(repo)
    data = b"minio bytes" * 1000
    client.put_object(
        repo, "main/m/one", io.BytesIO(data), len(data), metadata={"x-amz-meta-who": "minio"}
    )
    response = client.get_object(repo, "main/m/one")
    try:
        assert response.read() == data
    finally:
        response.close()
        response.release_conn()
    stat = client.stat_object(repo, "main/m/one")
    assert stat.size == len(data)
    assert [o.object_name for o in client.list_objects(repo, prefix="main/m/")] == ["main/m/one"]
    client.remove_object(repo, "main/m/one")
    assert list(client.list_objects(repo, prefix="main/m/")) == []


def test_polars_writes_and_reads_parquet_at_a_branch_and_a_commit(
    server: Server, http: httpx.Client, repo: str
) -> None:
    options = {
        "aws_endpoint_url": server.url,
        "aws_access_key_id": ACCESS_KEY_ID,
        "aws_secret_access_key": SECRET_ACCESS_KEY,
        "aws_region": "us-east-1",
        "aws_allow_http": "true",
    }
    frame = pl.DataFrame({"id": list(range(1000)), "name": [f"n{i}" for i in range(1000)]})
    frame.write_parquet(f"s3://{repo}/main/tables/t.parquet", storage_options=options)
    commit = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "t"})
    assert commit.status_code == 201, commit.text
    commit_id = commit.json()["id"]
    for ref in ("main", commit_id):
        read = pl.read_parquet(f"s3://{repo}/{ref}/tables/t.parquet", storage_options=options)
        assert read.equals(frame)
    scanned = pl.scan_parquet(f"s3://{repo}/main/tables/*.parquet", storage_options=options)
    assert scanned.select(pl.len()).collect().item() == 1000
