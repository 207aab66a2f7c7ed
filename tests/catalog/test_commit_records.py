"""Commits over an existing metarange (`source_metarange`) and commit records built
elsewhere (createCommitRecord), with the deletion log running."""

from __future__ import annotations

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import CommitIdError, ConflictError, DirtyBranchError, InvalidInputError
from kvlake.graveler import Commit
from kvlake.graveler.refs.store import commit_id
from kvlake.kv import Store
from tests.deletion.helpers import DeletionLake


def _read(lake: DeletionLake, ref: str, path: str) -> bytes:
    _, reader = lake.catalog.open_object(lake.repository, ref, path)
    with reader:
        return reader.read()


def test_a_source_metarange_is_committed_on_the_head_and_its_blobs_stay(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    stat = lake.upload("a", b"first")
    first = lake.graveler.get_commit(repo, lake.commit())
    lake.catalog.delete_object(repo, "main", "a")
    head = lake.commit()
    again = lake.graveler.commit(
        repo,
        "main",
        committer="ada",
        message="back",
        metadata={"k": "v"},
        source_metarange=first.metarange_id,
    )
    commit = lake.graveler.get_commit(repo, again)
    assert (commit.parents, commit.metarange_id, commit.generation) == (
        (head,),
        first.metarange_id,
        lake.graveler.get_commit(repo, head).generation + 1,
    )
    assert (commit.committer, commit.message, commit.metadata) == ("ada", "back", {"k": "v"})
    lake.settle()
    assert stat.address in lake.data_blobs()
    assert _read(lake, "main", "a") == b"first"


def test_a_source_metarange_needs_a_clean_branch_and_an_existing_metarange(
    any_store: Store,
    lake_blocks: BlockStore,
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    lake.upload("a", b"x")
    head = lake.graveler.get_branch(repo, "main").commit_id
    metarange = lake.graveler.get_commit(repo, head).metarange_id
    with pytest.raises(DirtyBranchError):
        lake.graveler.commit(repo, "main", committer="", message="m", source_metarange=metarange)
    lake.commit()
    head = lake.graveler.get_branch(repo, "main").commit_id
    for missing in ("0" * 64, "not-an-id"):
        with pytest.raises(InvalidInputError):
            lake.graveler.commit(repo, "main", committer="", message="m", source_metarange=missing)
    assert lake.graveler.get_branch(repo, "main").commit_id == head


def test_a_commit_record_is_stored_under_its_content_address_only(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    repo = lake.repository
    lake.upload("a", b"x")
    head_id = lake.commit()
    head = lake.graveler.get_commit(repo, head_id)
    other = lake.graveler.create_branch(repo, "other", "main")
    commit = Commit(
        committer="restorer",
        message="restored",
        metarange_id=head.metarange_id,
        creation_date=1_700_000_000,
        parents=(head_id,),
        metadata={},
        generation=head.generation + 1,
    )
    with pytest.raises(CommitIdError):
        lake.graveler.create_commit_record(repo, head_id, commit)  # another commit's id
    identifier = commit_id(commit)
    lake.graveler.create_commit_record(repo, identifier, commit)
    stored = lake.graveler.get_commit(repo, identifier)
    # The record gains the walks' skip pointers (kept out of the id), nothing else.
    assert commit_id(stored) == identifier
    assert msgspec.structs.replace(stored, depth=0, skip="", merge_depth=0) == commit
    with pytest.raises(ConflictError):
        lake.graveler.create_commit_record(repo, identifier, commit)
    missing = msgspec.structs.replace(commit, metarange_id="0" * 64)
    with pytest.raises(InvalidInputError):
        lake.graveler.create_commit_record(repo, commit_id(missing), missing)
    assert lake.graveler.get_branch(repo, "main").commit_id == head_id  # no ref moved
    assert lake.graveler.get_branch(repo, "other") == other
    assert _read(lake, identifier, "a") == b"x"
