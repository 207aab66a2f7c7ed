"""The "S3 clients" examples of docs/clients.md run as written against a real server.

Each block of that section is taken from docs/clients.md itself (so an edit that breaks
one fails here), with only what a reader substitutes changed: the server's address,
the keys, and the bucket (`example` becomes the test's repository). The boto3 and
polars blocks run in this process, the AWS CLI lines as commands, the SQL in DuckDB
with httpfs. Spark's s3a block is not run: its jars come from Maven (docs/gateway.md).
"""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server
from tests.gateway.conftest import duckdb_with_httpfs

README = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
README_ENDPOINT = "http://127.0.0.1:8000"


def _blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced block of the "S3 clients" section of docs/clients.md."""
    text = README.read_text()
    start = text.index("## S3 clients")
    end = text.index("\n## ", start + 1)
    return re.findall(r"```(\w*)\n(.*?)```", text[start:end], re.S)


def _block(language: str, containing: str) -> str:
    found = [code for lang, code in _blocks() if lang == language and containing in code]
    assert len(found) == 1, (
        f"docs/clients.md's S3 section lost its {language} block with {containing}"
    )
    return found[0]


def _as_reader_runs_it(code: str, server: Server, repo: str) -> str:
    return (
        code.replace(README_ENDPOINT, server.url)
        .replace('"example"', repr(repo))
        .replace("s3://example/", f"s3://{repo}/")
    )


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_the_boto3_block_puts_gets_lists_and_uploads_multipart(
    server: Server, repo: str, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.parquet").write_bytes(b"p" * (9 << 20))  # above boto3's 8 MiB threshold
    code = _as_reader_runs_it(_block("python", "import boto3"), server, repo)
    printed: list[Any] = []
    exec(  # noqa: S102 - the project's own documentation
        compile(code, "docs/clients.md", "exec"),
        {
            "ACCESS_KEY_ID": ACCESS_KEY_ID,
            "SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
            "print": printed.append,
        },
    )
    assert printed == [["main/data/a.csv"]]  # the listing runs before the upload
    big = s3.get_object(Bucket=repo, Key="main/big.parquet")
    assert big["ContentLength"] == 9 << 20
    assert big["ETag"].strip('"').endswith("-2")  # it went multipart, as the comment says


def test_the_aws_cli_lines_list_and_sync(
    aws: Any, repo: str, s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "day=1").mkdir(parents=True)
    (tmp_path / "data" / "day=1" / "part-0.csv").write_text("id\n1\n")
    (tmp_path / "data" / "notes.txt").write_text("hello\n")
    lines = [
        line.split("  #")[0].strip()
        for line in _block("sh", "aws --endpoint-url").splitlines()
        if line.startswith("aws ")
    ]
    assert len(lines) == 2, lines
    outputs = []
    for line in lines:
        words = shlex.split(line.replace("s3://example/", f"s3://{repo}/"))
        assert words[:3] == ["aws", "--endpoint-url", README_ENDPOINT], words
        outputs.append(aws(*words[3:]).stdout)  # the fixture points it at the server
    assert "PRE main/" in outputs[0]  # the listing's comment says what it shows
    listed = s3.list_objects_v2(Bucket=repo, Prefix="main/data/")
    assert sorted(o["Key"] for o in listed["Contents"]) == [
        "main/data/day=1/part-0.csv",
        "main/data/notes.txt",
    ]


def test_the_polars_block_reads_parquet(server: Server, repo: str, s3: Any) -> None:
    table = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    s3.put_object(Bucket=repo, Key="main/tables/t.parquet", Body=_parquet(table))
    code = _as_reader_runs_it(_block("python", "import polars"), server, repo)
    code = code.replace("pl.read_parquet(", "frame = pl.read_parquet(")
    scope: dict[str, Any] = {"ACCESS_KEY_ID": ACCESS_KEY_ID, "SECRET_ACCESS_KEY": SECRET_ACCESS_KEY}
    exec(compile(code, "docs/clients.md", "exec"), scope)  # noqa: S102 - our own documentation
    assert scope["frame"].to_dict(as_series=False) == {"id": [1, 2, 3], "name": ["a", "b", "c"]}


def test_the_duckdb_block_counts_rows(server: Server, repo: str, s3: Any) -> None:
    for day in range(2):
        table = pa.table({"id": list(range(day * 10, day * 10 + 10))})
        s3.put_object(Bucket=repo, Key=f"main/tables/t{day}.parquet", Body=_parquet(table))
    statements = [
        part.strip()
        for part in _as_reader_runs_it(_block("sql", "CREATE SECRET"), server, repo).split(";")
        if part.strip()
    ]
    create, select = statements
    create = (
        create.replace("KEY_ID '...'", f"KEY_ID '{ACCESS_KEY_ID}'")
        .replace("SECRET '...'", f"SECRET '{SECRET_ACCESS_KEY}'")
        .replace("'127.0.0.1:8000'", f"'{server.url.removeprefix('http://')}'")
    )
    connection: duckdb.DuckDBPyConnection = duckdb_with_httpfs()
    try:
        connection.execute(create)
        row = connection.execute(select).fetchone()
    finally:
        connection.close()
    assert row == (20,)
