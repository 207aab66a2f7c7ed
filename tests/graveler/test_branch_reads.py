"""`Graveler.read_branch`: the repository, a branch and its rules in one round trip.

Each process remembers the instance uid of a repository name, so the record and
the branch are read together. Two gravelers over one store stand for two
processes: what one changes, the other's next read shows at once (the record is
read every time; the uid only says which partition to read beside it).
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import EntryNotFoundError, ProtectedBranchError, RepositoryNotFoundError
from kvlake.graveler import Graveler
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


def _stat(graveler: Graveler, path: str) -> object:
    """As the API's stat: the branch read with the path, handed to the entry read."""
    read = graveler.read_branch("repo1", "main", path=path)
    try:
        return graveler.get(read.repository, "main", path.encode(), read=read)
    except EntryNotFoundError:
        return None


def test_a_stat_of_a_known_branch_is_one_call(
    any_store: Store, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    """The path's staged entry is read in the branch's tokens within the statement that
    reads the record and the branch, once the process has seen the branch's tokens."""
    store = FaultyStore(any_store, [])
    graveler = make_graveler(store, clock, lake_blocks)
    repository = graveler.create_repository(
        "repo1", storage_namespace=backends.namespace(lake_blocks, "stat")
    )
    graveler.set(repository, "main", b"k", value("v"))
    assert _stat(graveler, "k") == value("v")  # learns the instance, then the tokens
    assert _stat(graveler, "k") == value("v")
    before = len(store.calls)
    assert _stat(graveler, "k") == value("v")
    assert [call.op for call in store.calls[before:]] == ["get_across"]


def test_stats_with_remembered_tokens_see_another_process_at_once(
    any_store: Store, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    """The remembered tokens only say where to read: writes, deletions and commits of
    another process (its branch moved to a new token) show on the next stat."""
    first = make_graveler(any_store, clock, lake_blocks)
    second = make_graveler(any_store, clock, lake_blocks)
    repository = first.create_repository(
        "repo1", storage_namespace=backends.namespace(lake_blocks, "tokens")
    )
    first.set(repository, "main", b"k", value("1"))
    assert _stat(second, "k") == value("1")
    assert _stat(second, "k") == value("1")  # the second process now remembers the token
    first.set(repository, "main", b"k", value("2"))
    assert _stat(second, "k") == value("2")
    first.commit(repository, "main", committer="a", message="seal the token")
    first.set(repository, "main", b"k", value("3"))
    assert _stat(second, "k") == value("3")  # the token moved: the guess is dropped
    first.commit(repository, "main", committer="a", message="seal it again")
    assert _stat(second, "k") == value("3")  # from the commit
    first.set(repository, "main", b"k", value("4"))
    assert _stat(second, "k") == value("4")
    first.delete(repository, "main", b"k")
    assert _stat(second, "k") is None  # the staged tombstone, read in the known token
    assert _stat(second, "other") is None


def test_a_guess_for_other_tokens_is_not_used(
    any_store: Store, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    """What was read in the remembered tokens is kept only if the branch, read in the same
    statement, names exactly those tokens; for another path or branch it is not used."""
    graveler = make_graveler(any_store, clock, lake_blocks)
    repository = graveler.create_repository(
        "repo1", storage_namespace=backends.namespace(lake_blocks, "guess")
    )
    graveler.set(repository, "main", b"k", value("1"))
    _stat(graveler, "k")
    _stat(graveler, "k")
    graveler.commit(repository, "main", committer="a", message="move the token")
    moved = graveler.read_branch("repo1", "main", path="k")
    assert moved.staged is None  # the remembered token is no longer the branch's
    read = graveler.read_branch("repo1", "main", path="k")
    assert read.staged is not None and read.branch is not None
    assert read.staged.tokens == read.branch.tokens()
    assert read.staged_values(b"other", read.staged.tokens) is None
    assert read.staged_values(b"k", ("another-token",)) is None
