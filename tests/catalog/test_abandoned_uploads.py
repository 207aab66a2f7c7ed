"""An upload through kvlake (the S3 gateway's multipart upload) that a client abandons.

Neither completed nor aborted, its parts would stay in the store for good: the
hand-out record of its address, once the address expired unlinked, makes the
deletion worker abort every upload still in progress to that address.
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import LINK_SECONDS, PhysicalLinks, UploadTarget, link_key
from tests.deletion.helpers import DeletionLake

KEY = link_key(b"a master key for tests")


@pytest.fixture
def links(lake: DeletionLake) -> PhysicalLinks:
    return lake.catalog.direct_uploads(KEY)


def _start(links: PhysicalLinks, lake: DeletionLake, path: str) -> tuple[str, str]:
    started = links.start_upload(lake.repository, "main", path)
    return started.address, started.store_upload_id


def _listed(links: PhysicalLinks, lake: DeletionLake) -> list[str]:
    return [upload.key for upload in links.list_uploads(lake.repository)]


def _uploads_in_progress(blocks: BlockStore, namespace: str, address: str) -> int:
    """How many uploads to `address` still hold parts (counted by aborting them)."""
    return blocks.abort_uploads_to(namespace, address)


@pytest.mark.parametrize("lake_blocks", ["local", "s3"], indirect=True)
def test_an_abandoned_upload_is_aborted_once_its_address_expired(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address, upload = _start(links, lake, "big")
    links.upload_part(UploadTarget(lake.repository, "main", "big", address, upload), 1, b"part")
    kept, kept_upload = _start(links, lake, "other")
    etag = links.upload_part(
        UploadTarget(lake.repository, "main", "other", kept, kept_upload), 1, b"x"
    )
    links.complete_multipart(
        UploadTarget(lake.repository, "main", "other", kept, kept_upload), [(1, etag)],
        content_type="", metadata={},
    )  # fmt: skip
    assert _listed(links, lake) == ["main/big"]  # the completed upload is no longer listed
    lake.clock.advance(LINK_SECONDS + 1)
    assert _listed(links, lake) == []  # the abandoned one's record expired with its address
    lake.settle()
    assert _uploads_in_progress(lake.blocks, lake.namespace, address) == 0
    assert lake.data_blobs() == {kept}  # the completed, linked upload is kept
    assert list(lake.dead_letters()) == []


@pytest.mark.parametrize("lake_blocks", ["local", "s3"], indirect=True)
def test_an_upload_in_progress_is_counted_and_aborted(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address, upload = _start(links, lake, "big")
    links.upload_part(UploadTarget(lake.repository, "main", "big", address, upload), 1, b"part")
    assert _uploads_in_progress(lake.blocks, lake.namespace, address) == 1
    assert _uploads_in_progress(lake.blocks, lake.namespace, address) == 0


def _uid(address: str) -> str:
    return address.rsplit("/", 1)[-1].split(",", 1)[0]


def test_uploads_list_by_key_then_start_until_they_end(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    later, _ = _start(links, lake, "b")
    one, two = _start(links, lake, "a/x"), _start(links, lake, "a/x")
    (first, first_upload), (second, _) = sorted([one, two], key=lambda u: _uid(u[0]))
    assert [(u.key, u.address) for u in links.list_uploads(lake.repository)] == [
        ("main/a/x", first), ("main/a/x", second), ("main/b", later),
    ]  # fmt: skip
    resumed = links.list_uploads(lake.repository, start_key="main/a/x", after_uid=_uid(first))
    assert [u.address for u in resumed] == [second, later]
    links.abort_multipart(UploadTarget(lake.repository, "main", "a/x", first, first_upload))
    assert [u.address for u in links.list_uploads(lake.repository)] == [second, later]
