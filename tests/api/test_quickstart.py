"""The quickstart sample through the unchanged clients, queried as lakeFS's tutorials query it:
DuckDB through a registered lakefs-spec filesystem, pandas and polars through lakefs-spec."""

from __future__ import annotations

import io
import uuid

import duckdb
import lakefs
import lakefs_sdk
import pandas as pd
import polars as pl
import pytest
from lakefs.exceptions import ForbiddenException
from lakefs_spec import LakeFSFileSystem

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server


@pytest.fixture(scope="module")
def quickstart(server: Server) -> str:
    """One repository created with `sample_data: true` (through the wrapper), shared read-only."""
    name = f"quickstart-{uuid.uuid4().hex[:8]}"
    server.storage.prepare()
    lakefs.Repository(name, client=server.client()).create(
        storage_namespace=server.storage.namespace(name), include_samples=True
    )
    return name


def _fs(server: Server) -> LakeFSFileSystem:
    return LakeFSFileSystem(host=server.url, username=ACCESS_KEY_ID, password=SECRET_ACCESS_KEY)


def test_the_sample_has_lakefs_quickstart_layout_in_one_commit(
    server: Server, quickstart: str
) -> None:
    main = lakefs.Repository(quickstart, client=server.client()).branch("main")
    objects = {obj.path: obj for obj in main.objects()}
    assert set(objects) == {
        "README.md",
        "data/lakes.source.md",
        "images/lakes-map.png",
        "lakes.parquet",
    }
    size = main.object("lakes.parquet").stat().size_bytes
    assert size is not None and size > 512 * 1024
    assert main.object("images/lakes-map.png").stat().content_type == "image/png"
    readme = main.object("README.md").reader(mode="r").read()
    assert "synthetic" in readme and f"lakefs://{quickstart}/main/lakes.parquet" in readme
    source = main.object("data/lakes.source.md").reader(mode="r").read()
    assert "generated" in source
    assert [c.message for c in main.log()] == ["Add sample data", "Repository created"]


def test_the_default_branch_is_protected_as_in_lakefs(server: Server, quickstart: str) -> None:
    repository = lakefs.Repository(quickstart, client=server.client())
    # On S3 the wrapper uploads through getPhysicalAddress (presigned) and passes its 403 on
    # untranslated, as the SDK's exception; on local storage it uploads, and translates.
    refused = (
        ForbiddenException
        if server.storage.kind == "local"
        else lakefs_sdk.exceptions.ForbiddenException
    )
    with pytest.raises(refused):
        repository.branch("main").object("new.txt").upload(b"x")
    rules = server.sdk().repositories_api.get_branch_protection_rules(quickstart)
    assert [rule.pattern for rule in rules] == ["main"]


def test_duckdb_queries_lakes_parquet_through_a_registered_filesystem(
    server: Server, quickstart: str
) -> None:
    connection = duckdb.connect()
    connection.register_filesystem(_fs(server))
    rows = connection.execute(
        f"""SELECT   country, COUNT(*)
            FROM     READ_PARQUET('lakefs://{quickstart}/main/lakes.parquet')
            GROUP BY country
            ORDER BY COUNT(*) DESC
            LIMIT    5"""
    ).fetchall()
    assert len(rows) == 5 and rows[0][0] == "Canada"
    assert rows == sorted(rows, key=lambda row: -row[1])
    danish = connection.execute(
        f"SELECT COUNT(*) FROM READ_PARQUET('lakefs://{quickstart}/main/lakes.parquet')"
        " WHERE Country = 'Denmark'"
    ).fetchone()
    assert danish is not None and danish[0] > 0
    connection.close()


def test_the_tutorial_branch_filters_denmark_and_merges(server: Server, quickstart: str) -> None:
    """The tutorial's flow on a copy: branch, keep Denmark's rows with DuckDB, commit, diff."""
    repository = lakefs.Repository(quickstart, client=server.client())
    branch = repository.branch(f"denmark-{uuid.uuid4().hex[:6]}").create(source_reference="main")
    connection = duckdb.connect()
    connection.register_filesystem(_fs(server))
    path = f"lakefs://{quickstart}/{branch.id}/lakes.parquet"
    connection.execute(f"CREATE TABLE lakes AS SELECT * FROM READ_PARQUET('{path}')")
    connection.execute("DELETE FROM lakes WHERE Country != 'Denmark'")
    data = connection.execute("SELECT * FROM lakes").df()
    connection.close()
    with branch.object("lakes.parquet").writer(mode="wb") as out:
        data.to_parquet(out)
    branch.commit(message="Keep Denmark's lakes")
    changes = [change.path for change in repository.ref("main").diff(branch)]
    assert changes == ["lakes.parquet"]
    with branch.object("lakes.parquet").reader(mode="rb") as reader:
        written = reader.read()
    assert isinstance(written, bytes)
    frame = pd.read_parquet(io.BytesIO(written))
    assert set(frame["Country"]) == {"Denmark"}


def test_pandas_reads_lakes_parquet_through_lakefs_spec(server: Server, quickstart: str) -> None:
    options = {"host": server.url, "username": ACCESS_KEY_ID, "password": SECRET_ACCESS_KEY}
    frame = pd.read_parquet(f"lakefs://{quickstart}/main/lakes.parquet", storage_options=options)
    assert len(frame) > 10_000 and "Denmark" in set(frame["Country"])


def test_polars_reads_parquet_and_csv_through_lakefs_spec(server: Server, quickstart: str) -> None:
    fs = _fs(server)
    with fs.open(f"{quickstart}/main/lakes.parquet", "rb") as parquet:
        lakes = pl.read_parquet(parquet)
    assert lakes.height > 10_000 and "Lake_name" in lakes.columns
    top = lakes.group_by("Country").len().sort("len", descending=True).row(0)
    assert top[0] == "Canada"
    branch = f"csv-{uuid.uuid4().hex[:6]}"
    lakefs.Repository(quickstart, client=server.client()).branch(branch).create("main")
    fs.pipe(f"{quickstart}/{branch}/lakes.csv", lakes.head(100).write_csv().encode())
    with fs.open(f"{quickstart}/{branch}/lakes.csv", "rb") as csv:
        again = pl.read_csv(csv)
    assert (
        again.height == 100 and again["Lake_name"].to_list() == lakes["Lake_name"][:100].to_list()
    )
