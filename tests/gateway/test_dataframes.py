"""Dataframe engines through the gateway: s3fs with pandas and pyarrow, DuckDB's httpfs.

Each is the released client as users run it: s3fs (aiobotocore) in this process,
DuckDB with the httpfs extension that PyPI ships as a package, loaded from that
package (no download at run time). A dataset is written to a branch, committed
through the REST API, and read back at the commit id.
"""

from __future__ import annotations

from typing import Any

import duckdb
import httpx
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import s3fs

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server


def _commit(http: httpx.Client, repo: str) -> str:
    response = http.post(f"/repositories/{repo}/branches/main/commits", json={"message": "data"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": list(range(600)),
            "name": [f"n{i}" for i in range(600)],
            "year": [2024 + i % 3 for i in range(600)],
        }
    )


def test_s3fs_writes_a_partitioned_dataset_that_pandas_and_pyarrow_read_at_a_commit(
    server: Server, http: httpx.Client, repo: str
) -> None:
    fs = s3fs.S3FileSystem(
        key=ACCESS_KEY_ID,
        secret=SECRET_ACCESS_KEY,
        endpoint_url=server.url,
        client_kwargs={"region_name": "us-east-1"},
        config_kwargs={"s3": {"addressing_style": "path"}},
        skip_instance_cache=True,
    )
    frame = _frame()
    frame.to_parquet(f"s3://{repo}/main/sales", partition_cols=["year"], filesystem=fs, index=False)
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(f"{repo}/main/sales")) == [
        "year=2024",
        "year=2025",
        "year=2026",
    ]
    commit_id = _commit(http, repo)
    fs.rm(f"{repo}/main/sales", recursive=True)  # the commit keeps what main no longer has
    fs.invalidate_cache()

    # With a filesystem given, pyarrow wants its paths without the scheme.
    read = pd.read_parquet(f"{repo}/{commit_id}/sales", filesystem=fs)
    read["year"] = read["year"].astype("int64")
    read = read.sort_values("id").reset_index(drop=True)[list(frame.columns)]
    pd.testing.assert_frame_equal(read, frame)

    dataset = ds.dataset(
        f"{repo}/{commit_id}/sales", filesystem=fs, format="parquet", partitioning="hive"
    )
    table = dataset.to_table(filter=ds.field("year") == 2025, columns=["id"])
    assert sorted(table.column("id").to_pylist()) == [i for i in range(600) if i % 3 == 1]
    assert dataset.count_rows() == 600


def _put_parquet(s3: Any, repo: str, key: str, table: pa.Table) -> None:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    s3.put_object(Bucket=repo, Key=key, Body=sink.getvalue().to_pybytes())


def test_duckdb_httpfs_reads_parquet_at_a_branch_and_a_commit(
    duck: duckdb.DuckDBPyConnection, s3: Any, http: httpx.Client, repo: str
) -> None:
    for part in range(2):
        rows = pa.table({"id": list(range(part * 100, part * 100 + 100))})
        _put_parquet(s3, repo, f"main/t/part-{part}.parquet", rows)
    commit_id = _commit(http, repo)
    s3.delete_object(Bucket=repo, Key="main/t/part-1.parquet")
    count = "SELECT count(*), sum(id) FROM read_parquet(?)"
    assert duck.execute(count, [f"s3://{repo}/main/t/*.parquet"]).fetchone() == (100, 4950)
    at_commit = duck.execute(count, [f"s3://{repo}/{commit_id}/t/*.parquet"]).fetchone()
    assert at_commit == (200, 19900)


def test_duckdb_httpfs_copies_parquet_to_a_branch(
    duck: duckdb.DuckDBPyConnection, s3: Any, repo: str
) -> None:
    # DuckDB's httpfs writes every file with a multipart upload.
    try:
        s3.abort_multipart_upload(
            Bucket=repo,
            Key="main/probe",
            UploadId=s3.create_multipart_upload(Bucket=repo, Key="main/probe")["UploadId"],
        )
    except s3.exceptions.ClientError as exc:
        if exc.response["Error"]["Code"] != "NotImplemented":
            raise
        pytest.skip("the gateway answers NotImplemented for CreateMultipartUpload (issue 24)")
    target = f"s3://{repo}/main/out/range.parquet"
    duck.execute(f"COPY (SELECT range AS id FROM range(1000)) TO '{target}' (FORMAT parquet)")
    assert duck.execute("SELECT count(*), max(id) FROM read_parquet(?)", [target]).fetchone() == (
        1000,
        999,
    )
    body = s3.get_object(Bucket=repo, Key="main/out/range.parquet")["Body"].read()
    assert body[:4] == b"PAR1"
