"""The cleaner's hooks: staged blobs are logged before their token goes, purges after cleaning."""

from __future__ import annotations

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.deletion import keys as deletion_keys
from kvlake.graveler import keys
from kvlake.graveler.records import decode_dropped_token
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake


@pytest.fixture
def faulty() -> FaultyStore:
    return FaultyStore(MemoryStore())


@pytest.fixture
def lake(faulty: FaultyStore, lake_blocks: BlockStore) -> DeletionLake:
    return DeletionLake(faulty, lake_blocks)


def tokens_queued(lake: DeletionLake) -> int:
    return sum(1 for _ in lake.store.scan(keys.DROPPED_TOKENS))


def test_a_committed_tokens_entries_are_not_logged_when_it_is_dropped(lake: DeletionLake) -> None:
    stats = [lake.upload(f"p{i}") for i in range(5)]
    lake.commit()
    report = lake.cleaner.clean_once()
    assert report.tokens_dropped == 1 and lake.pending() == 0
    lake.settle()
    assert lake.data_blobs() == {s.address for s in stats}


def test_a_deleted_branchs_staged_blobs_are_logged_then_deleted_but_committed_ones_kept(
    lake: DeletionLake,
) -> None:
    lake.graveler.create_branch(lake.repository, "dev", "main")
    committed = lake.upload("kept", branch="dev")
    lake.commit("dev")
    lake.graveler.create_branch(lake.repository, "keep", "dev")
    staged = [lake.upload(f"s{i}", branch="dev") for i in range(3)]
    lake.graveler.delete_branch(lake.repository, "dev")
    lake.cleaner.clean_once()
    records = [i.record for n in range(4) for i in lake.log.scan(n) if i.record]
    assert sorted(r.address for r in records) == sorted(s.address for s in staged)
    assert {r.origin for r in records} == {"dropped_staging_token"}
    lake.settle()
    assert lake.data_blobs() == {committed.address} == lake.referenced()


def test_a_failing_hook_keeps_the_token_for_the_next_pass(
    lake: DeletionLake, faulty: FaultyStore
) -> None:
    lake.graveler.create_branch(lake.repository, "dev", "main")
    staged = lake.upload("s", branch="dev")
    token = lake.graveler.get_branch(lake.repository, "dev").staging_token
    lake.graveler.delete_branch(lake.repository, "dev")
    faulty.arm(Fault(op="set_many", times=None))
    report = lake.cleaner.clean_once()
    assert report.failures and report.tokens_dropped == 0
    assert tokens_queued(lake) == 1
    assert list(lake.store.scan(keys.staging_partition(token)))  # not dropped unlogged
    faulty.disarm()
    assert lake.cleaner.clean_once().tokens_dropped == 1
    lake.settle()
    assert staged.address not in lake.data_blobs()


def test_retrying_a_token_drop_rewrites_the_same_records(
    lake: DeletionLake, faulty: FaultyStore
) -> None:
    lake.graveler.create_branch(lake.repository, "dev", "main")
    lake.upload("s", branch="dev")
    token = lake.graveler.get_branch(lake.repository, "dev").staging_token
    lake.graveler.delete_branch(lake.repository, "dev")
    faulty.arm(Fault(op="drop_partition", partition=keys.staging_partition(token)))
    assert lake.cleaner.clean_once().failures
    assert lake.cleaner.clean_once().tokens_dropped == 1
    assert lake.pending() == 1  # logged twice, under one key


def test_tokens_of_a_deleted_repository_are_dropped_without_logging(lake: DeletionLake) -> None:
    lake.upload("a")
    lake.upload("a")
    lake.graveler.delete_repository("repo1")
    before = lake.pending()
    lake.cleaner.clean_once()
    assert lake.pending() == before == 1


def test_a_failing_purge_hook_keeps_the_deleted_instance_for_the_next_pass(
    lake: DeletionLake, faulty: FaultyStore
) -> None:
    lake.upload("a")
    uid = lake.repository.instance_uid
    lake.purges.delete_repository("repo1", purge=True)
    faulty.arm(Fault(op="set_if", partition=deletion_keys.PURGES))
    assert lake.cleaner.clean_once().failures
    assert list(lake.store.scan(keys.DELETED_REPOSITORIES))
    assert lake.cleaner.clean_once().repositories_cleaned == 1
    report = lake.purges.report("repo1", uid)
    assert report is not None and report.request.state == "logged"


def test_a_token_queued_while_a_branch_still_names_it_is_kept_and_nothing_logged(
    lake: DeletionLake,
) -> None:
    # The hook no longer re-reads the branches: the cleaner's own check is what keeps it.
    stat = lake.upload("a")
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    lake.graveler.queue_token_drops(lake.repository, [token])
    report = lake.cleaner.clean_once()
    assert report.tokens_dropped == 0 and tokens_queued(lake) == 0 and lake.pending() == 0
    assert lake.graveler.get(lake.repository, "main", b"a") is not None
    lake.settle()
    assert stat.address in lake.data_blobs()


@pytest.mark.parametrize("sealed", [False, True], ids=["staging", "sealed"])
def test_a_token_queued_from_its_branch_while_the_branch_names_it_is_kept(
    lake: DeletionLake, sealed: bool
) -> None:
    """The cleaner reads only the branch an entry names: that record must keep the token,
    whether as the staging token or as one a commit in flight sealed."""
    lake.graveler.create_branch(lake.repository, "other", "main")
    stat = lake.upload("a")
    refs = lake.graveler._refs
    branch, predicate = refs.load_branch(lake.repository, "main")
    token = branch.staging_token
    if sealed:  # as a commit's seal leaves it, the commit still running
        fresh = keys.new_staging_token(lake.repository.instance_uid)
        moved = msgspec.structs.replace(branch, staging_token=fresh, sealed_tokens=(token,))
        refs.swap_branch(lake.repository, "main", moved, predicate)
    lake.graveler.queue_token_drops(lake.repository, [token], branch="main")
    report = lake.cleaner.clean_once()
    assert report.tokens_dropped == 0 and tokens_queued(lake) == 0 and lake.pending() == 0
    assert lake.store.get(keys.staging_partition(token), b"a")
    lake.settle()
    assert stat.address in lake.data_blobs()


def _queued_from(lake: DeletionLake) -> dict[str, str]:
    """Each queued token and the branch its entry names."""
    entries = (decode_dropped_token(raw) for _, raw in lake.store.scan(keys.DROPPED_TOKENS))
    return {entry.token: entry.branch for entry in entries}


@pytest.mark.parametrize("change", ["commit", "reset", "delete"])
def test_tokens_a_branch_stops_naming_are_queued_naming_that_branch(
    lake: DeletionLake, change: str
) -> None:
    """So the cleaner reads that branch's record alone, not every branch (issue 33)."""
    lake.graveler.create_branch(lake.repository, "dev", "main")
    lake.upload("a", branch="dev")
    token = lake.graveler.get_branch(lake.repository, "dev").staging_token
    if change == "commit":
        lake.commit("dev")
    elif change == "reset":
        lake.graveler.resets.reset_branch(lake.repository, "dev")
    else:
        lake.graveler.delete_branch(lake.repository, "dev")
    assert _queued_from(lake)[token] == "dev"
