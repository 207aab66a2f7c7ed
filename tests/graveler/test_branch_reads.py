"""`Graveler.read_branch`: the repository, a branch and its rules in one round trip.

Each process remembers the instance uid of a repository name, so the record and
the branch are read together. Two gravelers over one store stand for two
processes: what one changes, the other's next read shows at once (the record is
read every time; the uid only says which partition to read beside it).
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import ProtectedBranchError, RepositoryNotFoundError
from kvlake.kv import Store
from kvlake.kv.faults import FaultyStore
from tests.graveler.helpers import make_graveler, value
from tests.support import FakeClock, backends


def test_a_name_recreated_by_another_process_is_read_from_its_new_instance(
    any_store: Store, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    first = make_graveler(any_store, clock, lake_blocks)
    second = make_graveler(any_store, clock, lake_blocks)
    namespace = backends.namespace(lake_blocks, "reads")
    old = first.create_repository("repo1", storage_namespace=namespace)
    first.set(old, "main", b"k", value("old"))
    read = second.read_branch("repo1", "main")  # the second process now knows the old uid
    assert second.get(read.repository, "main", b"k", read=read) == value("old")
    first.delete_repository("repo1")  # the old instance's partition stays until the cleaner
    new = first.create_repository("repo1", storage_namespace=f"{namespace}-new")
    first.set(new, "main", b"k", value("new"))
    read = second.read_branch("repo1", "main")
    assert read.repository.instance_uid == new.instance_uid
    assert read.repository.storage_namespace == f"{namespace}-new"
    assert second.get(read.repository, "main", b"k", read=read) == value("new")


def test_a_repository_deleted_by_another_process_is_gone_at_once(
    any_store: Store, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    first = make_graveler(any_store, clock, lake_blocks)
    second = make_graveler(any_store, clock, lake_blocks)
    first.create_repository("repo1", storage_namespace=backends.namespace(lake_blocks, "gone"))
    second.read_branch("repo1", "main")
    first.delete_repository("repo1")
    with pytest.raises(RepositoryNotFoundError):
        second.read_branch("repo1", "main")


def test_rules_and_branch_moves_by_another_process_show_on_the_next_read(
    any_store: Store, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    first = make_graveler(any_store, clock, lake_blocks)
    second = make_graveler(any_store, clock, lake_blocks)
    repository = first.create_repository(
        "repo1", storage_namespace=backends.namespace(lake_blocks, "rules")
    )
    assert second.read_branch("repo1", "main").protection.rules == {}
    first.protection.set_rule(repository, "main", ["staging_write"])
    read = second.read_branch("repo1", "main")
    assert read.protection.rules == {"main": ("staging_write",)}
    with pytest.raises(ProtectedBranchError):
        second.set(read.repository, "main", b"k", value("v"), protection=read.protection)


def test_a_known_instance_reads_record_branch_and_rules_in_one_call(
    any_store: Store, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    store = FaultyStore(any_store, [])
    graveler = make_graveler(store, clock, lake_blocks)
    graveler.create_repository("repo1", storage_namespace=backends.namespace(lake_blocks, "one"))
    graveler.read_branch("repo1", "main")
    before = len(store.calls)
    read = graveler.read_branch("repo1", "main")
    assert [call.op for call in store.calls[before:]] == ["get_across"]
    assert read.branch is not None
