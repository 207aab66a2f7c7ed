"""Deep copies (lakeFS's default copyObject): a blob of its own, copied inside the blockstore.

A shallow copy shares its source's blob and marks it shared (test_deletion_hooks);
a deep one is an upload like any other, whose blob the deletion log may delete.
The S3 side (CopyObject, UploadPartCopy) is tests/blockstore/test_s3.py.
"""

from __future__ import annotations

import pytest

from kvlake.catalog import ObjectStat
from kvlake.errors import EntryNotFoundError, PreconditionFailedError
from tests.deletion.helpers import DeletionLake


def test_a_deep_copy_is_a_blob_of_its_own_that_the_log_may_delete(lake: DeletionLake) -> None:
    source = lake.upload("a", b"bytes")
    copy = lake.catalog.copy_object(lake.repository, "main", "a", "main", "b", shallow=False)
    assert copy.address != source.address and copy.checksum == source.checksum
    assert lake.shared_addresses() == set()
    lake.upload("a", b"new")  # the source's blob is logged and deleted: the copy stays
    lake.settle()
    assert source.address not in lake.data_blobs()
    assert lake.catalog.open_object(lake.repository, "main", "b")[1].read() == b"bytes"
    lake.upload("b", b"newer")  # the copy's own blob goes the same way
    lake.settle()
    assert copy.address not in lake.data_blobs()


def test_a_deep_copy_of_a_blob_deleted_meanwhile_asks_for_a_retry(lake: DeletionLake) -> None:
    source = lake.upload("a", b"bytes")
    lake.blocks.delete(lake.namespace, source.address)
    with pytest.raises(PreconditionFailedError, match="changed while being copied"):
        lake.catalog.copy_object(lake.repository, "main", "a", "main", "b", shallow=False)
    assert lake.data_blobs() == set()


@pytest.mark.parametrize("shallow", [True, False])
def test_a_source_check_judges_the_entry_copied_even_if_the_source_changes_after(
    lake: DeletionLake, shallow: bool
) -> None:
    lake.upload("a", b"old")
    checked: list[str] = []

    def check(source: ObjectStat) -> None:
        checked.append(source.checksum)
        lake.upload("a", b"new")  # a writer replaces the source right after the check

    def copy() -> ObjectStat:
        return lake.catalog.copy_object(
            lake.repository, "main", "a", "main", "b", shallow=shallow, check_source=check
        )

    if shallow:  # the re-read after marking the blob shared sees the change: a retry
        with pytest.raises(PreconditionFailedError, match="changed while being copied"):
            copy()
        return
    assert copy().checksum == checked[0]  # the checked entry's blob, never the new one
    assert lake.catalog.open_object(lake.repository, "main", "b")[1].read() == b"old"


def test_a_source_check_that_refuses_stages_nothing(lake: DeletionLake) -> None:
    lake.upload("a", b"bytes")

    def refuse(source: ObjectStat) -> None:
        raise PreconditionFailedError(f"{source.path} refused")

    for shallow in (True, False):
        with pytest.raises(PreconditionFailedError, match="refused"):
            lake.catalog.copy_object(
                lake.repository, "main", "a", "main", "b", shallow=shallow, check_source=refuse
            )
    with pytest.raises(EntryNotFoundError):
        lake.catalog.stat(lake.repository, "main", "b")
    assert len(lake.data_blobs()) == 1
