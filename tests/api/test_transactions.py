"""Transactions through the unchanged clients: the `lakefs` wrapper's `Branch.transact()` and
lakefs-spec's `fs.transaction`, both built on hidden ephemeral branches, and pandas reading
and writing Parquet through lakefs-spec."""

from __future__ import annotations

import httpx
import lakefs
import pandas as pd
import pytest
from lakefs_spec import LakeFSFileSystem

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server


def _branch_names(http: httpx.Client, repo: str, *, show_hidden: bool = False) -> list[str]:
    query = "?show_hidden=true" if show_hidden else ""
    response = http.get(f"/repositories/{repo}/branches{query}")
    assert response.status_code == 200, response.text
    return [ref["id"] for ref in response.json()["results"]]


def _fs(server: Server) -> LakeFSFileSystem:
    return LakeFSFileSystem(host=server.url, username=ACCESS_KEY_ID, password=SECRET_ACCESS_KEY)


def test_hidden_branches_are_listed_only_when_asked(http: httpx.Client, repo: str) -> None:
    branches = f"/repositories/{repo}/branches"
    created = http.post(branches, json={"name": "tx-1", "source": "main", "hidden": True})
    assert created.status_code == 201, created.text
    assert _branch_names(http, repo) == ["main"]
    assert _branch_names(http, repo, show_hidden=True) == ["main", "tx-1"]
    # Otherwise ordinary: readable by name, writable, committable, deletable.
    assert http.get(f"{branches}/tx-1").json()["commit_id"] == created.text
    upload = http.post(f"{branches}/tx-1/objects", params={"path": "f"}, content=b"x")
    assert upload.status_code == 201, upload.text
    commit = http.post(f"{branches}/tx-1/commits", json={"message": "on a hidden branch"})
    assert commit.status_code == 201, commit.text
    assert http.get(f"{branches}/tx-1").json()["commit_id"] == commit.json()["id"]
    assert _branch_names(http, repo) == ["main"]  # a commit keeps the branch hidden
    assert http.delete(f"{branches}/tx-1").status_code == 204
    assert _branch_names(http, repo, show_hidden=True) == ["main"]


def test_wrapper_transaction_commits_merges_and_leaves_no_branch(
    server: Server, http: httpx.Client, repo: str
) -> None:
    client = server.client()
    main = lakefs.Repository(repo, client=client).branch("main")
    main.object("old.txt").upload(b"old")
    main.commit(message="before")
    with main.transact(commit_message="in a transaction", tag="after-tx") as tx:
        assert tx.id not in _branch_names(http, repo)
        assert tx.id in _branch_names(http, repo, show_hidden=True)
        tx.object("new.txt").upload(b"new")
        tx.object("old.txt").delete()
        assert not main.object("new.txt").exists()  # the source is untouched until the end
    assert main.object("new.txt").reader().read() == b"new"
    assert not main.object("old.txt").exists()
    assert _branch_names(http, repo, show_hidden=True) == ["main"]
    head = main.get_commit()
    assert head.message.startswith("Merge transaction") and len(head.parents) == 2
    assert lakefs.Tag(repo, "after-tx", client=client).get_commit().id == head.id
    log = [c.message for c in main.log(max_amount=3)]
    assert "in a transaction" in log


def test_wrapper_transaction_that_raises_rolls_back(
    server: Server, http: httpx.Client, repo: str
) -> None:
    main = lakefs.Repository(repo, client=server.client()).branch("main")
    before = main.get_commit().id
    with pytest.raises(RuntimeError, match="changed my mind"):
        with main.transact(commit_message="never") as tx:
            tx.object("doomed.txt").upload(b"x")
            raise RuntimeError("changed my mind")
    assert main.get_commit().id == before
    assert not main.object("doomed.txt").exists()
    assert _branch_names(http, repo, show_hidden=True) == ["main"]


def test_lakefs_spec_transaction_commits_and_merges(
    server: Server, http: httpx.Client, repo: str
) -> None:
    fs = _fs(server)
    with fs.transaction(repo, "main") as tx:
        fs.pipe(f"{repo}/{tx.branch.id}/hello.txt", b"hello")
        tx.commit(message="add hello")
        tx.tag(tx.branch.head, "v1")
    assert fs.cat(f"{repo}/main/hello.txt") == b"hello"
    assert fs.cat(f"{repo}/v1/hello.txt") == b"hello"
    assert _branch_names(http, repo, show_hidden=True) == ["main"]


def test_lakefs_spec_transaction_that_raises_leaves_main_unchanged(
    server: Server, repo: str
) -> None:
    fs = _fs(server)
    with pytest.raises(ValueError, match="abort"):
        with fs.transaction(repo, "main", delete="always") as tx:
            fs.pipe(f"{repo}/{tx.branch.id}/x.txt", b"x")
            tx.commit(message="add x")
            raise ValueError("abort")
    assert not fs.exists(f"{repo}/main/x.txt")


def test_pandas_writes_parquet_through_lakefs_spec_and_reads_it_from_a_tag(
    server: Server, repo: str
) -> None:
    fs = _fs(server)
    frame = pd.DataFrame(
        {"lake": ["Superior", "Victoria", "Baikal"], "area": [82100, 68870, 31722]}
    )
    with fs.transaction(repo, "main") as tx:
        frame.to_parquet(
            f"lakefs://{repo}/{tx.branch.id}/lakes.parquet", storage_options=_options(server)
        )
        tx.commit(message="add lakes")
        tx.tag(tx.branch.head, "lakes-v1")
    read = pd.read_parquet(
        f"lakefs://{repo}/lakes-v1/lakes.parquet", storage_options=_options(server)
    )
    pd.testing.assert_frame_equal(read, frame)
    fs.touch(f"{repo}/main/_SUCCESS")  # lakefs-spec allows touch from lakeFS 1.3.1 on
    assert fs.info(f"{repo}/main/_SUCCESS")["size"] == 0


def _options(server: Server) -> dict[str, str]:
    return {"host": server.url, "username": ACCESS_KEY_ID, "password": SECRET_ACCESS_KEY}
