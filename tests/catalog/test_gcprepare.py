"""The files lakeFS's GC client reads, written through the blockstore on a local folder
and on S3: commits the rules retain, staged addresses (sealed tokens too), pages."""

from __future__ import annotations

import csv
import io

import httpx
import pyarrow.parquet as pq
import pytest

from kvlake.catalog import Catalog, GcPreparation, UncommittedMark, decode_mark, encode_mark
from kvlake.catalog.gcprepare import commits_key
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler import Repository, make_rules
from kvlake.graveler.records import Branch
from kvlake.graveler.refs.store import Refs


def _repo(catalog: Catalog) -> Repository:
    return catalog.graveler.get_repository("repo1")


def _upload(catalog: Catalog, branch: str, path: str) -> str:
    return catalog.upload(_repo(catalog), branch, path, io.BytesIO(path.encode())).address


def _listed(catalog: Catalog, location: str) -> list[str]:
    repo = _repo(catalog)
    prefix = location.removeprefix(repo.storage_namespace + "/")
    blocks = catalog.blockstore
    return [
        address
        for key in blocks.list_keys(repo.storage_namespace, prefix)
        for address in pq.read_table(io.BytesIO(blocks.get(repo.storage_namespace, key)))
        .column("physical_address")
        .to_pylist()
    ]


def test_the_commits_file_holds_the_retained_commits(catalog: Catalog) -> None:
    repo = _repo(catalog)
    preparation = GcPreparation(catalog.graveler, catalog.blockstore)
    with pytest.raises(NotFoundError):
        preparation.prepare_commits(repo)  # no rules: refused, nothing written
    assert list(catalog.blockstore.list_keys(repo.storage_namespace, "_lakefs/retention/")) == []
    _upload(catalog, "main", "a")
    catalog.graveler.commit(repo, "main", committer="c", message="a")
    catalog.graveler.retention.set_rules(repo, make_rules(7))
    prepared = preparation.prepare_commits(repo)
    data = catalog.blockstore.get(repo.storage_namespace, commits_key(prepared.run_id))
    rows = list(csv.reader(io.StringIO(data.decode())))
    assert rows[0] == ["commit_id", "expired", "metarange_id"]
    now = catalog.graveler.clock()
    retained = catalog.graveler.retention.retained_commits(repo, now)
    assert sorted(rows[1:]) == sorted([r.commit_id, "false", r.metarange_id] for r in retained)
    assert len(rows) == 3  # the repository's first commit and "a"
    assert data.endswith(b"\n") and b"\r" not in data
    if catalog.blockstore.presigns:  # S3: the client may download the file by URL
        assert prepared.presigned_url is not None
        assert httpx.get(prepared.presigned_url).content == data
    else:
        assert prepared.presigned_url is None


def test_every_staged_address_is_listed_sealed_tokens_too(catalog: Catalog) -> None:
    repo = _repo(catalog)
    graveler = catalog.graveler
    graveler.create_branch(repo, "dev", "main")
    sealed = {_upload(catalog, "dev", "being-committed")}
    # A commit that sealed dev's token and died before publishing: still staged data.
    refs = Refs(graveler.store)
    branch, predicate = refs.load_branch(repo, "dev")
    fresh = Branch(
        commit_id=branch.commit_id,
        staging_token=branch.staging_token + "-next",
        sealed_tokens=(branch.staging_token,),
    )
    refs.swap_branch(repo, "dev", fresh, predicate)
    staged = {_upload(catalog, "dev", "later"), _upload(catalog, "main", "m")}
    _upload(catalog, "main", "gone")
    catalog.delete_object(repo, "main", "gone")
    prepared = GcPreparation(graveler, catalog.blockstore).prepare_uncommitted(repo)
    assert prepared.mark is None
    assert sorted(_listed(catalog, prepared.location)) == sorted(staged | sealed)


def test_pages_resume_where_the_last_one_stopped(catalog: Catalog) -> None:
    repo = _repo(catalog)
    graveler = catalog.graveler
    graveler.create_branch(repo, "dev", "main")
    dev_only = _upload(catalog, "dev", "x")
    on_main = [_upload(catalog, "main", p) for p in ("a", "b", "c")]
    preparation = GcPreparation(graveler, catalog.blockstore, page_size=2)
    first = preparation.prepare_uncommitted(repo)  # dev's x, main's a; branches by name
    assert first.mark is not None and (first.mark.branch, first.mark.path) == ("main", "b")
    second = preparation.prepare_uncommitted(repo, decode_mark(encode_mark(first.mark)))
    assert second.mark is None  # b and c: the last page, full
    assert second.run_id == first.run_id and second.location == first.location
    listed = _listed(catalog, first.location)
    assert sorted(listed) == sorted([dev_only, *on_main])


def test_a_page_after_its_token_was_committed_lists_the_branch_afresh(catalog: Catalog) -> None:
    repo = _repo(catalog)
    graveler = catalog.graveler
    first_two = [_upload(catalog, "main", p) for p in ("a", "b")]
    _upload(catalog, "main", "c")
    preparation = GcPreparation(graveler, catalog.blockstore, page_size=2)
    first = preparation.prepare_uncommitted(repo)
    assert first.mark is not None and first.mark.path == "c"
    graveler.commit(repo, "main", committer="c", message="abc")  # c is committed data now
    later = _upload(catalog, "main", "d")
    second = preparation.prepare_uncommitted(repo, first.mark)
    assert second.mark is None and second.location == first.location
    assert sorted(_listed(catalog, first.location)) == sorted([*first_two, later])


def test_a_token_not_answered_by_a_call_is_refused() -> None:
    good = UncommittedMark(run_id="0" * 26, branch="main", token="t", path="p")
    assert decode_mark(encode_mark(good)) == good
    for token in (
        "not base64!",
        "e30=",
        encode_mark(UncommittedMark(run_id="../../x", branch="main", token="t", path="p")),
        encode_mark(UncommittedMark(run_id="0" * 26, branch="a/b", token="t", path="p")),
    ):
        with pytest.raises(InvalidInputError, match="invalid continuation token"):
            decode_mark(token)
