"""updateObjectUserMetadata at the catalog: a new entry with the same blob, and what the
deletion log makes of it (docs/deletion.md)."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import EntryNotFoundError, ProtectedBranchError
from kvlake.kv import Store
from tests.deletion.helpers import DeletionLake


def test_a_staged_object_keeps_its_blob_and_logs_nothing(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    stat = lake.upload("a", b"bytes")
    lake.catalog.update_metadata(repo, "main", "a", {"owner": "ada"})
    after = lake.catalog.stat(repo, "main", "a")
    assert (after.address, after.size, after.checksum, after.mtime) == (
        stat.address,
        stat.size,
        stat.checksum,
        stat.mtime,
    )
    assert after.metadata == {"owner": "ada"}
    assert lake.pending() == 0
    lake.settle()
    assert stat.address in lake.data_blobs()


def test_a_committed_object_gets_a_staged_entry_and_its_blob_outlives_an_overwrite(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    stat = lake.upload("a", b"committed")
    commit = lake.commit()
    lake.catalog.update_metadata(repo, "main", "a", {"k": "v"})
    assert lake.catalog.stat(repo, "main", "a").metadata == {"k": "v"}
    assert lake.catalog.stat(repo, commit, "a").metadata == {}
    lake.upload("a", b"replaced")  # logs the updated entry's blob: the committed one
    lake.settle()
    assert stat.address in lake.data_blobs()
    assert lake.catalog.stat(repo, commit, "a").address == stat.address


def test_an_update_commits_as_a_change(any_store: Store, lake_blocks: BlockStore) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    lake.upload("a", b"x")
    lake.commit()
    lake.catalog.update_metadata(repo, "main", "a", {"k": "v"})
    commit = lake.commit()
    assert lake.catalog.stat(repo, commit, "a").metadata == {"k": "v"}


def test_it_replaces_all_of_the_metadata(any_store: Store, lake_blocks: BlockStore) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    lake.upload("a", b"x")
    lake.catalog.update_metadata(repo, "main", "a", {"one": "1", "two": "2"})
    lake.catalog.update_metadata(repo, "main", "a", {"two": "3"})
    assert lake.catalog.stat(repo, "main", "a").metadata == {"two": "3"}


def test_a_missing_or_deleted_object_is_not_found_and_nothing_is_staged(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    with pytest.raises(EntryNotFoundError):
        lake.catalog.update_metadata(repo, "main", "absent", {"k": "v"})
    lake.upload("gone", b"x")
    lake.commit()
    lake.catalog.delete_object(repo, "main", "gone")
    with pytest.raises(EntryNotFoundError):
        lake.catalog.update_metadata(repo, "main", "gone", {"k": "v"})
    changes = lake.graveler.diffs.diff_uncommitted(repo, "main")
    assert [(e.path, e.type) for e in changes.entries] == [(b"gone", "removed")]


def test_a_protected_branch_refuses_it(any_store: Store, lake_blocks: BlockStore) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    lake.upload("a", b"x")
    lake.graveler.protection.set_rule(repo, "main", ["staging_write"])
    with pytest.raises(ProtectedBranchError):
        lake.catalog.update_metadata(repo, "main", "a", {"k": "v"})
    assert lake.catalog.stat(repo, "main", "a").metadata == {}
