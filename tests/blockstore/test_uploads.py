"""Multipart uploads sent through kvlake (`upload_part`), on every adapter that has them.

The same contract on the local folder (parts as files, joined on completion) and
on S3 (moto's server: parts are S3's parts), with S3's rules: every part but the
last at least 5 MiB, parts listed ascending, ETags that match, and the
completed blob's ETag the MD5 of the parts' MD5s with the part count.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvlake.blockstore import MIN_PART_BYTES, BlockStore, multipart_etag, open_blockstore
from kvlake.errors import UploadRefusedError
from tests.support import backends
from tests.support.backends import BLOCKSTORES

from .conftest import ADAPTERS
from .streams import PatternStream, pattern

KEY = "data/large"


@pytest.fixture(params=sorted(BLOCKSTORES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlockStore]:
    with open_blockstore(ADAPTERS[request.param](request, tmp_path)) as opened:
        yield opened


@pytest.fixture
def ns(store: BlockStore) -> str:
    return backends.namespace(store, "repo1")


def _md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def test_streamed_parts_complete_into_one_blob_with_s3s_etag(store: BlockStore, ns: str) -> None:
    upload = store.start_upload(ns, KEY)
    first = store.upload_part(ns, KEY, upload, 1, io.BufferedReader(PatternStream(MIN_PART_BYTES)))
    second = store.upload_part(ns, KEY, upload, 2, b"tail")
    assert first == _md5(pattern(0, MIN_PART_BYTES))
    assert not store.exists(ns, KEY)
    assert list(store.list_keys(ns)) == []  # parts are never listed as blobs
    etag = store.complete_upload(ns, KEY, upload, [(1, first), (2, f'"{second}"')])
    assert etag == multipart_etag([first, second])
    assert etag.endswith("-2")
    assert store.get(ns, KEY) == pattern(0, MIN_PART_BYTES) + b"tail"


def test_a_part_sent_again_replaces_the_earlier_one(store: BlockStore, ns: str) -> None:
    upload = store.start_upload(ns, KEY)
    old = store.upload_part(ns, KEY, upload, 1, b"old")
    new = store.upload_part(ns, KEY, upload, 1, b"new")
    with pytest.raises(UploadRefusedError) as refused:
        store.complete_upload(ns, KEY, upload, [(1, old)])
    assert refused.value.code == "InvalidPart"
    store.complete_upload(ns, KEY, upload, [(1, new)])
    assert store.get(ns, KEY) == b"new"


def test_list_upload_parts_shows_the_last_sent_of_each_number(store: BlockStore, ns: str) -> None:
    upload = store.start_upload(ns, KEY)
    store.upload_part(ns, KEY, upload, 2, b"two")
    store.upload_part(ns, KEY, upload, 1, b"old")
    store.upload_part(ns, KEY, upload, 1, b"first")
    parts = store.list_upload_parts(ns, KEY, upload)
    assert [(p.number, p.etag, p.size) for p in parts] == [
        (1, _md5(b"first"), 5),
        (2, _md5(b"two"), 3),
    ]


def test_a_small_part_but_the_last_is_entity_too_small(store: BlockStore, ns: str) -> None:
    upload = store.start_upload(ns, KEY)
    small = store.upload_part(ns, KEY, upload, 1, b"x" * (MIN_PART_BYTES - 1))
    last = store.upload_part(ns, KEY, upload, 2, b"y")
    with pytest.raises(UploadRefusedError) as refused:
        store.complete_upload(ns, KEY, upload, [(1, small), (2, last)])
    assert refused.value.code == "EntityTooSmall"
    assert not store.exists(ns, KEY)


def test_parts_out_of_order_are_refused(store: BlockStore, ns: str) -> None:
    upload = store.start_upload(ns, KEY)
    etag = store.upload_part(ns, KEY, upload, 1, b"a")
    with pytest.raises(UploadRefusedError) as refused:
        store.complete_upload(ns, KEY, upload, [(2, etag), (1, etag)])
    assert refused.value.code == "InvalidPartOrder"


@pytest.mark.parametrize("etag", ["0" * 32, "../../x", "not-an-md5", "a\0b"])
def test_a_missing_part_or_a_wrong_etag_is_invalid_part(
    store: BlockStore, ns: str, etag: str
) -> None:
    upload = store.start_upload(ns, KEY)
    sent = store.upload_part(ns, KEY, upload, 1, b"a")
    for parts in ([(1, etag)], [(1, sent), (2, sent)]):
        with pytest.raises(UploadRefusedError) as refused:
            store.complete_upload(ns, KEY, upload, parts)
        assert refused.value.code == "InvalidPart"
    assert not store.exists(ns, KEY)


def test_an_unknown_upload_is_no_such_upload(store: BlockStore, ns: str) -> None:
    if store.scheme == "s3":
        pytest.skip("moto answers any call on an unknown upload with a 500, never NoSuchUpload")
    upload = store.start_upload(ns, KEY)
    etag = store.upload_part(ns, KEY, upload, 1, b"a")
    store.abort_upload(ns, KEY, upload)
    for unknown in (upload, "0" * 32, "../../etc"):
        with pytest.raises(UploadRefusedError) as refused:
            store.complete_upload(ns, KEY, unknown, [(1, etag)])
        assert refused.value.code == "NoSuchUpload"
        with pytest.raises(UploadRefusedError) as refused:
            store.upload_part(ns, KEY, unknown, 1, b"a")
        assert refused.value.code == "NoSuchUpload"


def test_an_upload_completes_only_into_its_own_key(store: BlockStore, ns: str) -> None:
    if store.scheme == "s3":
        pytest.skip("moto completes an upload into any key; S3 answers NoSuchUpload")
    upload = store.start_upload(ns, KEY)
    etag = store.upload_part(ns, KEY, upload, 1, b"a")
    with pytest.raises(UploadRefusedError) as refused:
        store.complete_upload(ns, "data/other", upload, [(1, etag)])
    assert refused.value.code == "NoSuchUpload"
    assert not store.exists(ns, "data/other")


def test_a_copied_part_is_a_range_of_a_blob(store: BlockStore, ns: str) -> None:
    store.put(ns, "data/source", b"0123456789")
    upload = store.start_upload(ns, KEY)
    etag = store.copy_upload_part(ns, KEY, upload, 1, source=(ns, "data/source"), start=2, end=6)
    assert etag == _md5(b"2345")
    store.complete_upload(ns, KEY, upload, [(1, etag)])
    assert store.get(ns, KEY) == b"2345"


def test_aborted_and_completed_uploads_leave_no_parts_behind(
    store: BlockStore, ns: str, request: pytest.FixtureRequest
) -> None:
    aborted = store.start_upload(ns, "data/aborted")
    store.upload_part(ns, "data/aborted", aborted, 1, b"part")
    store.abort_upload(ns, "data/aborted", aborted)
    store.abort_upload(ns, "data/aborted", aborted)  # twice is fine
    completed = store.start_upload(ns, KEY)
    etag = store.upload_part(ns, KEY, completed, 1, b"part")
    store.complete_upload(ns, KEY, completed, [(1, etag)])
    if store.scheme == "s3":
        admin = request.getfixturevalue("s3_server").admin
        assert admin.list_multipart_uploads(Bucket="lake").get("Uploads", []) == []
    else:
        root = Path(store.root) / "lake/repo1"  # type: ignore[attr-defined]
        assert [p.name for p in root.rglob("*") if p.is_file()] == ["large"]
        assert not any(os.scandir(root / "_lakefs/uploads"))
