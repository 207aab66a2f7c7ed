"""A crash at every KV call of create, delete, commit and the cleaner loses nothing.

Each scenario runs once to count its KV calls, then once per call and per side
("before": the call never happened; "after": it happened but the caller saw an
error). After the crash the state must be whole (invariant 1), acknowledged
writes must survive (invariant 2), a retry must complete, and the cleaner must
remove every leftover key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import (
    ConflictError,
    NoChangesError,
    RepositoryDeletingError,
    RepositoryNotFoundError,
    UnavailableError,
)
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.cleaner import Cleaner
from kvlake.graveler.records import Repository
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import all_keys, make_graveler, value
from tests.support import FakeClock, backends

_S = TypeVar("_S")


def crashes(
    blocks: BlockStore,
    setup: Callable[[Graveler, str], _S],
    action: Callable[[Graveler, _S], object],
) -> Iterator[tuple[Graveler, FaultyStore, _S, FakeClock]]:
    """Yield the state after `action` crashed at each of its KV calls in turn.

    Every run (the probe, then each crash point) has a fresh store and graveler over
    `blocks`, and a storage namespace of its own there, which `setup` is given: no run
    finds range files another left.
    """
    probe = FaultyStore(MemoryStore())
    graveler = make_graveler(probe, FakeClock(), blocks)
    state = setup(graveler, backends.namespace(blocks, "probe"))
    before = len(probe.calls)
    action(graveler, state)
    total = len(probe.calls) - before
    assert total > 0
    crashed = 0
    for n in range(total):
        for when in ("before", "after"):
            clock = FakeClock()
            store = FaultyStore(MemoryStore())
            graveler = make_graveler(store, clock, blocks)
            state = setup(graveler, backends.namespace(blocks, f"crash-{n}-{when}"))
            store.arm(Fault(skip=n, when=when, times=1))
            try:
                action(graveler, state)
            except UnavailableError:
                crashed += 1
            # else: the failed call was a read that raised its own error (a missing
            # key) which the action handles, or a cleanup the action retries.
            store.disarm()
            yield graveler, store, state, clock
    assert crashed >= total  # most crash points do reach the caller


def live_partitions(graveler: Graveler, repository: Repository) -> set[bytes]:
    """Partitions a healthy repository may have: its instance and its branches' tokens."""
    names = {
        keys.REPOSITORIES,
        keys.NAMESPACES,
        keys.LIVE_REPOSITORIES,
        keys.INSTANCES,
        keys.INDEXES,
        keys.TOMBSTONES,  # earlier instances' tombstones, queued to go after their grace
        keys.DROPPED_BY_TOKEN,  # an index entry a crash left before its queue entry
        keys.instance_partition(repository.name, repository.instance_uid),
        keys.visible_branches_partition(repository.name, repository.instance_uid),
        keys.open_pulls_partition(repository.name, repository.instance_uid),
    }
    for _, branch in graveler.list_branches(repository):
        for token in (branch.staging_token, *branch.sealed_tokens):
            names.add(keys.staging_partition(token))
    return names


def test_crash_during_create_never_exposes_a_half_created_repository(
    lake_blocks: BlockStore,
) -> None:
    def create(graveler: Graveler, namespace: str) -> None:
        graveler.create_repository("repo1", storage_namespace=namespace)

    for graveler, store, namespace, clock in crashes(lake_blocks, lambda g, ns: ns, create):
        try:
            repo = graveler.get_repository("repo1")
        except RepositoryNotFoundError:
            pass
        else:
            assert graveler.get_branch(repo, "main")  # active means whole
        clock.advance(121)
        try:
            graveler.create_repository("repo1", storage_namespace=namespace)
        except ConflictError:
            pass  # the crashed creation had completed
        repo = graveler.get_repository("repo1")
        assert list(graveler.list(repo, "main")) == []
        Cleaner(graveler).clean_once()
        assert set(all_keys(store.inner)) <= live_partitions(graveler, repo)
        with store.inner.scan(keys.LIVE_REPOSITORIES) as scan:  # the crashed one's key went
            assert [k for k, _ in scan] == [keys.live_repository_key("repo1", repo.instance_uid)]


def _repository_with_data(graveler: Graveler, namespace: str) -> Repository:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.create_branch(repo, "feature", "main")
    graveler.set(repo, "main", b"a", value("a"))
    graveler.commit(repo, "main", committer="t", message="one")
    graveler.set(repo, "main", b"b", value("b"))
    graveler.set(repo, "feature", b"c", value("c"))
    return repo


def test_crash_during_delete_leaves_repository_whole_or_gone_and_cleaner_removes_all(
    lake_blocks: BlockStore,
) -> None:
    def delete(graveler: Graveler, _: Repository) -> None:
        graveler.delete_repository("repo1")

    for graveler, store, created, _ in crashes(lake_blocks, _repository_with_data, delete):
        try:
            repo = graveler.get_repository("repo1")
            assert graveler.get(repo, "main", b"b") == value("b")
        except (RepositoryNotFoundError, RepositoryDeletingError):
            pass
        try:
            graveler.delete_repository("repo1")
        except RepositoryNotFoundError:
            pass  # the crashed deletion had freed the name
        with pytest.raises(RepositoryNotFoundError):
            graveler.get_repository("repo1")
        Cleaner(graveler).clean_once()
        # The live index is empty (its partition gone), its built marker kept.
        assert set(all_keys(store.inner)) == {
            keys.REPOSITORIES,
            keys.NAMESPACES,
            keys.INDEXES,
            keys.TOMBSTONES,  # the tombstone, queued to go once its grace is over
        }
        assert_data_kept(graveler, created.storage_namespace)


def assert_data_kept(graveler: Graveler, namespace: str) -> None:
    """Deleted without purge: the namespace still holds the data, so it stays claimed."""
    owner = graveler.references.namespace_owner(namespace)
    assert owner is not None and (owner.repository, owner.state) == ("repo1", "kept")


def test_crash_during_commit_loses_no_staged_write_and_retry_commits_all(
    lake_blocks: BlockStore,
) -> None:
    def setup(graveler: Graveler, namespace: str) -> Repository:
        repo = _repository_with_data(graveler, namespace)
        graveler.delete(repo, "main", b"a")
        graveler.set(repo, "main", b"d", value("d"))
        return repo

    def commit(graveler: Graveler, repo: Repository) -> None:
        graveler.commit(repo, "main", committer="t", message="two")

    expected = [(b"b", value("b")), (b"d", value("d"))]
    for graveler, store, repo, clock in crashes(lake_blocks, setup, commit):
        assert list(graveler.list(repo, "main")) == expected
        clock.advance(1)
        try:
            graveler.commit(repo, "main", committer="t", message="two")
        except NoChangesError:
            pass  # the crashed commit had been published
        branch = graveler.get_branch(repo, "main")
        assert branch.sealed_tokens == ()
        assert list(graveler.list(repo, branch.commit_id)) == expected
        Cleaner(graveler).clean_once()
        assert set(all_keys(store.inner)) <= live_partitions(graveler, repo)


def test_crash_during_cleaner_pass_is_finished_by_the_next_pass(lake_blocks: BlockStore) -> None:
    def setup(graveler: Graveler, namespace: str) -> str:
        _repository_with_data(graveler, namespace)
        graveler.delete_repository("repo1")
        return namespace

    def clean(graveler: Graveler, _: str) -> None:
        report = Cleaner(graveler).clean_once()
        if report.failures:
            raise UnavailableError("; ".join(report.failures))

    for graveler, store, namespace, _ in crashes(lake_blocks, setup, clean):
        Cleaner(graveler).clean_once()
        assert set(all_keys(store.inner)) == {
            keys.REPOSITORIES,
            keys.NAMESPACES,
            keys.INDEXES,
            keys.TOMBSTONES,  # the tombstone, queued to go once its grace is over
        }
        assert_data_kept(graveler, namespace)
