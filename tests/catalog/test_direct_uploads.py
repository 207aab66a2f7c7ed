"""Direct uploads: only addresses handed out for the path link, and unlinked ones are collected.

The client's own upload is a `put` straight into the blockstore at the address,
as a client with its own credentials (or a presigned URL) writes it; the S3 and
HTTP side is tests/api/test_s3_lake.py.
"""

from __future__ import annotations

import httpx
import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import LINK_SECONDS, PhysicalLinks, UploadTarget, link_key
from kvlake.config import DeletionSettings
from kvlake.errors import InvalidInputError, PreconditionFailedError
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake

KEY = link_key(b"a master key for tests")


@pytest.fixture
def links(lake: DeletionLake) -> PhysicalLinks:
    return lake.catalog.direct_uploads(KEY)


def upload_directly(lake: DeletionLake, links: PhysicalLinks, path: str, body: bytes) -> str:
    """Get an address for `path` on main and put the bytes there, as a client would."""
    address, _ = links.issue(lake.repository, "main", path)
    lake.blocks.put(lake.namespace, address, body)
    return address


def link(lake: DeletionLake, links: PhysicalLinks, path: str, address: str, size: int) -> None:
    links.link(
        lake.repository,
        "main",
        path,
        address,
        size=size,
        checksum="etag",
        content_type="text/plain",
        metadata={"k": "v"},
    )


def test_a_linked_address_is_the_object_at_the_path(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address = upload_directly(lake, links, "a.txt", b"direct")
    assert address.startswith("data/")
    link(lake, links, "a.txt", address, 6)
    stat, reader = lake.catalog.open_object(lake.repository, "main", "a.txt")
    with reader:
        assert reader.read() == b"direct"
    assert (stat.address, stat.size, stat.checksum) == (address, 6, "etag")
    assert (stat.content_type, stat.metadata) == ("text/plain", {"k": "v"})


def test_an_address_links_only_to_the_path_and_branch_it_was_handed_out_for(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    lake.graveler.create_branch(lake.repository, "dev", "main")
    address = upload_directly(lake, links, "a", b"x")
    for branch, path in (("main", "b"), ("dev", "a")):
        with pytest.raises(InvalidInputError, match="was not handed out for path"):
            links.link(
                lake.repository,
                branch,
                path,
                address,
                size=1,
                checksum="e",
                content_type="",
                metadata={},
            )
    forged = address.rsplit(".", 1)[0] + ".AAAAAAAAAAAAAAAAAAAAAA"
    other_key = lake.catalog.direct_uploads(link_key(b"another installation"))
    for bad, by in ((forged, links), ("data/x/y", links), (address, other_key)):
        with pytest.raises(InvalidInputError, match="was not handed out"):
            link(lake, by, "a", bad, 1)
    with pytest.raises(InvalidInputError, match="was not handed out"):
        # Another object's blob: linking it would give it a second, unknown reference.
        link(lake, links, "a", lake.upload("other").address, 1)


def test_an_address_expires_a_day_after_it_was_handed_out(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address = upload_directly(lake, links, "a", b"x")
    lake.clock.advance(LINK_SECONDS + 1)
    with pytest.raises(InvalidInputError, match="expired 24 h after it was handed out"):
        link(lake, links, "a", address, 1)


def test_a_link_needs_the_uploaded_bytes_and_their_size(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address, _ = links.issue(lake.repository, "main", "a")
    with pytest.raises(InvalidInputError, match="nothing was uploaded to"):
        link(lake, links, "a", address, 1)
    lake.blocks.put(lake.namespace, address, b"abc")
    with pytest.raises(InvalidInputError, match="size_bytes is 2 but .* holds 3 bytes"):
        link(lake, links, "a", address, 2)
    link(lake, links, "a", address, 3)


def test_an_address_never_linked_is_deleted_once_it_expired(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address = upload_directly(lake, links, "a", b"x")
    kept = upload_directly(lake, links, "b", b"y")
    link(lake, links, "b", kept, 1)
    lake.settle()
    assert lake.data_blobs() == {kept}
    assert lake.referenced() == {kept}
    assert address not in lake.shared_addresses()


def test_a_linked_blob_is_the_writer_flows_once_linked(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    """Overwritten after the link, the blob is logged and deleted like any upload's."""
    address = upload_directly(lake, links, "a", b"x")
    link(lake, links, "a", address, 1)
    again = lake.upload("a", b"new")
    lake.settle()
    assert lake.data_blobs() == {again.address}


def test_a_committed_linked_blob_survives_its_hand_out_record(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    """Linked after a commit took the token it was handed out in: only the withdrawal
    keeps the hand-out's record from deleting committed data."""
    address = upload_directly(lake, links, "a", b"x")
    lake.upload("other")
    lake.commit()
    link(lake, links, "a", address, 1)
    lake.commit()
    lake.catalog.delete_object(lake.repository, "main", "a")
    lake.settle()
    assert address in lake.data_blobs()
    assert address not in lake.shared_addresses()


def test_linking_an_address_twice_leaves_it_to_garbage_collection(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    """The second link (a retry whose first answer was lost) may restage committed data."""
    address = upload_directly(lake, links, "a", b"x")
    link(lake, links, "a", address, 1)
    lake.commit()
    link(lake, links, "a", address, 1)
    assert address in lake.shared_addresses()
    lake.catalog.delete_object(lake.repository, "main", "a")
    lake.settle()
    assert address in lake.data_blobs()


def test_a_link_that_fails_puts_the_address_back_to_be_collected(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    lake.upload("a", b"there")
    address = upload_directly(lake, links, "a", b"x")
    with pytest.raises(PreconditionFailedError):
        links.link(
            lake.repository,
            "main",
            "a",
            address,
            size=1,
            checksum="e",
            content_type="",
            metadata={},
            if_absent=True,
        )
    assert address not in lake.shared_addresses()
    lake.settle()
    assert address not in lake.data_blobs()


def test_with_deletion_disabled_a_link_leaves_the_blob_to_garbage_collection(
    lake_blocks: BlockStore,
) -> None:
    lake = DeletionLake(MemoryStore(), lake_blocks, settings=DeletionSettings(enabled=False))
    links = lake.catalog.direct_uploads(KEY)
    address = upload_directly(lake, links, "a", b"x")
    assert lake.pending() == 0
    link(lake, links, "a", address, 1)
    assert address in lake.shared_addresses()


@pytest.mark.parametrize("lake_blocks", ["s3"], indirect=True)  # presigned parts
def test_a_completed_multipart_upload_is_linked_and_kept(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address, upload = links.start_multipart(lake.repository, "main", "big")
    url = links.part_url(
        UploadTarget(lake.repository, "main", "big", address, upload), 1, expires=60
    )
    etag = httpx.put(url, content=b"one part").headers["ETag"]
    with pytest.raises(InvalidInputError, match="was not handed out"):
        links.complete_multipart(
            UploadTarget(lake.repository, "main", "other", address, upload),
            [(1, etag)],
            content_type="",
            metadata={},
        )
    assert not lake.blocks.exists(lake.namespace, address)  # checked before assembling
    stat = links.complete_multipart(
        UploadTarget(lake.repository, "main", "big", address, upload),
        [(1, etag)],
        content_type="text/plain",
        metadata={},
    )
    assert (stat.address, stat.size) == (address, 8)
    lake.settle()
    assert lake.data_blobs() == {address}


@pytest.mark.parametrize("lake_blocks", ["s3"], indirect=True)  # presigned parts
def test_an_aborted_multipart_upload_leaves_nothing_behind(
    lake: DeletionLake, links: PhysicalLinks
) -> None:
    address, upload = links.start_multipart(lake.repository, "main", "big")
    links.abort_multipart(UploadTarget(lake.repository, "main", "big", address, upload))
    lake.settle()
    assert lake.data_blobs() == set() and list(lake.dead_letters()) == []


@pytest.mark.parametrize("lake_blocks", ["local"], indirect=True)  # S3 presigns
def test_multipart_uploads_need_presigned_urls(lake: DeletionLake, links: PhysicalLinks) -> None:
    with pytest.raises(InvalidInputError, match="pre_sign_multipart_upload is false"):
        links.start_multipart(lake.repository, "main", "big")
    assert lake.pending() == 0  # nothing handed out
