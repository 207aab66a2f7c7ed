"""Objects: upload, read (with ranges), stat, list, delete, copy, and bad input."""

from __future__ import annotations

import hashlib
import io

import pytest

from kvlake.blockstore import READ_CHUNK
from kvlake.catalog import Catalog, CommonPrefix, ObjectStat
from kvlake.errors import (
    BranchNotFoundError,
    EntryNotFoundError,
    InvalidInputError,
    PreconditionFailedError,
    RefNotFoundError,
    RepositoryNotFoundError,
)
from kvlake.graveler.records import Repository


class _ChunkedBody:
    """A body of `total` bytes that records how much each read asked for."""

    def __init__(self, total: int) -> None:
        self.remaining = total
        self.requests: list[int] = []

    def read(self, size: int = -1) -> bytes:
        self.requests.append(size)
        n = self.remaining if size < 0 else min(size, self.remaining)
        self.remaining -= n
        return b"x" * n


def _repo(catalog: Catalog) -> Repository:
    """The repository record, read as a request would before calling the catalog."""
    return catalog.graveler.get_repository("repo1")


def upload(catalog: Catalog, path: str, body: bytes, **options: object) -> ObjectStat:
    return catalog.upload(_repo(catalog), "main", path, io.BytesIO(body), **options)  # type: ignore[arg-type]


def read(catalog: Catalog, ref: str, path: str, **options: int | None) -> bytes:
    _, reader = catalog.open_object(_repo(catalog), ref, path, **options)  # type: ignore[arg-type]
    with reader:
        return reader.read()


def test_upload_then_read_returns_bytes_size_and_md5(catalog: Catalog) -> None:
    stat = upload(catalog, "a/b.txt", b"hello", content_type="text/plain", metadata={"owner": "me"})
    assert stat.size == 5
    assert stat.checksum == hashlib.md5(b"hello").hexdigest()
    assert stat.address.startswith("data/")
    assert read(catalog, "main", "a/b.txt") == b"hello"
    assert catalog.stat(_repo(catalog), "main", "a/b.txt") == stat
    assert stat.content_type == "text/plain" and stat.metadata == {"owner": "me"}


def test_upload_streams_large_body(catalog: Catalog) -> None:
    body = _ChunkedBody(40 << 20)
    stat = catalog.upload(_repo(catalog), "main", "big", body)  # type: ignore[arg-type]
    assert stat.size == 40 << 20
    assert stat.checksum == hashlib.md5(b"x" * (40 << 20)).hexdigest()
    assert read(catalog, "main", "big", start=(40 << 20) - 3) == b"xxx"
    assert 0 < max(body.requests) <= READ_CHUNK  # streamed in chunks, never read whole


def test_byte_ranges(catalog: Catalog) -> None:
    upload(catalog, "f", b"0123456789")
    assert read(catalog, "main", "f", start=2, end=5) == b"234"
    assert read(catalog, "main", "f", start=8) == b"89"
    assert read(catalog, "main", "f", start=7, end=100) == b"789"


def test_committed_object_reads_from_commit_and_overwrite_gets_new_address(
    catalog: Catalog,
) -> None:
    first = upload(catalog, "f", b"v1")
    repo = catalog.graveler.get_repository("repo1")
    commit = catalog.graveler.commit(repo, "main", committer="t", message="m")
    second = upload(catalog, "f", b"v2")
    assert second.address != first.address
    assert read(catalog, commit, "f") == b"v1"
    assert read(catalog, "main", "f") == b"v2"


def test_if_absent_refuses_existing_object_and_changes_nothing(catalog: Catalog) -> None:
    upload(catalog, "f", b"v1", if_absent=True)
    with pytest.raises(PreconditionFailedError, match="already exists"):
        upload(catalog, "f", b"v2", if_absent=True)
    assert read(catalog, "main", "f") == b"v1"


@pytest.mark.parametrize("path", ["", "a\0b", "x" * 1025])
def test_bad_paths_are_rejected_before_any_write(catalog: Catalog, path: str) -> None:
    with pytest.raises(InvalidInputError):
        upload(catalog, path, b"data")
    assert catalog.list_objects(_repo(catalog), "main").results == []
    namespace = catalog.graveler.get_repository("repo1").storage_namespace
    assert list(catalog.blockstore.list_keys(namespace, "data/")) == []


def test_missing_things_are_not_found(catalog: Catalog) -> None:
    with pytest.raises(EntryNotFoundError):
        catalog.stat(_repo(catalog), "main", "nope")
    with pytest.raises(RepositoryNotFoundError):
        catalog.graveler.get_repository("repo2")  # what a request reads before the catalog
    with pytest.raises(BranchNotFoundError):
        upload_to(catalog, "nobranch")
    with pytest.raises(RefNotFoundError):
        catalog.list_objects(_repo(catalog), "nobranch")


def upload_to(catalog: Catalog, branch: str) -> None:
    catalog.upload(_repo(catalog), branch, "f", io.BytesIO(b"x"))


def test_listing_with_delimiter_folds_folders_and_paginates(catalog: Catalog) -> None:
    for path in ["a/1", "a/2", "b", "c/d/e", "c/f", "d"]:
        upload(catalog, path, b"x")
    page = catalog.list_objects(_repo(catalog), "main", delimiter="/")
    assert [(type(r).__name__, r.path) for r in page.results] == [
        ("CommonPrefix", "a/"),
        ("ObjectStat", "b"),
        ("CommonPrefix", "c/"),
        ("ObjectStat", "d"),
    ]
    assert not page.has_more
    first = catalog.list_objects(_repo(catalog), "main", delimiter="/", amount=2)
    assert [r.path for r in first.results] == ["a/", "b"] and first.has_more
    assert first.next_offset == "b"
    rest = catalog.list_objects(_repo(catalog), "main", delimiter="/", after="a/")
    assert [r.path for r in rest.results] == ["b", "c/", "d"]
    inner = catalog.list_objects(_repo(catalog), "main", prefix="c/", delimiter="/")
    assert [r.path for r in inner.results] == ["c/d/", "c/f"]
    assert isinstance(inner.results[0], CommonPrefix)
    flat = catalog.list_objects(_repo(catalog), "main", prefix="c/")
    assert [r.path for r in flat.results] == ["c/d/e", "c/f"]


def test_listing_amount_out_of_range_is_rejected(catalog: Catalog) -> None:
    with pytest.raises(InvalidInputError, match="amount"):
        catalog.list_objects(_repo(catalog), "main", amount=1001)


def test_delete_and_delete_many(catalog: Catalog) -> None:
    for path in ["a", "b", "c"]:
        upload(catalog, path, b"x")
    catalog.delete_object(_repo(catalog), "main", "a")
    with pytest.raises(EntryNotFoundError):
        catalog.delete_object(_repo(catalog), "main", "a")
    assert catalog.delete_objects(_repo(catalog), "main", ["b", "missing"]) == []
    assert [r.path for r in catalog.list_objects(_repo(catalog), "main").results] == ["c"]
    with pytest.raises(InvalidInputError, match="at most 1000"):
        catalog.delete_objects(_repo(catalog), "main", ["c"] * 1001)
    with pytest.raises(InvalidInputError):
        catalog.delete_objects(_repo(catalog), "main", ["c", ""])
    assert [r.path for r in catalog.list_objects(_repo(catalog), "main").results] == ["c"]


def test_copy_keeps_bytes_checksum_metadata_and_content_type(catalog: Catalog) -> None:
    source = upload(catalog, "src", b"data", content_type="text/csv", metadata={"k": "v"})
    copy = catalog.copy_object(_repo(catalog), "main", "src", "main", "dst")
    assert (copy.checksum, copy.size, copy.metadata, copy.content_type) == (
        source.checksum,
        source.size,
        {"k": "v"},
        "text/csv",
    )
    assert read(catalog, "main", "dst") == b"data"
