"""Once committed, a blob is garbage collection's alone (docs/deletion.md): a commit stays
readable by its id after a hard reset left it behind or its branch was deleted, so the
deletion workers must keep every blob such a commit holds, whatever the refs say now."""

from __future__ import annotations

from kvlake.blockstore import BlockStore
from kvlake.kv import Store
from tests.deletion.helpers import DeletionLake


def test_a_commit_a_hard_reset_left_behind_stays_readable(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    stat = lake.upload("a", b"committed")
    commit = lake.commit()
    lake.graveler.resets.reset_hard(repo, "main", "main~1")
    lake.settle()
    assert lake.catalog.stat(repo, commit, "a").address == stat.address
    assert stat.address in lake.data_blobs()


def test_a_commit_of_a_deleted_branch_stays_readable(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    lake.graveler.create_branch(repo, "dev", "main")
    stat = lake.upload("a", b"committed", branch="dev")
    commit = lake.commit("dev")
    lake.graveler.delete_branch(repo, "dev")  # within the token drop delay of the commit
    lake.settle()
    assert lake.catalog.stat(repo, commit, "a").address == stat.address
    assert stat.address in lake.data_blobs()


def test_an_entry_overwritten_before_its_token_was_committed_is_still_deleted(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    """The consumed token hands only what its commit holds to garbage collection."""
    lake = DeletionLake(any_store, lake_blocks)
    old = lake.upload("a", b"1")
    new = lake.upload("a", b"2")
    lake.commit()
    lake.settle()
    assert lake.data_blobs() == {new.address}
    assert old.address not in lake.data_blobs()
