"""A storage namespace belongs to one repository instance at a time, and never nests."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import RepositoryNotFoundError, StorageNamespaceInUseError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import encode
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import lifecycle, make_graveler, value
from tests.interleavings.scheduler import Check, Outcome, Scheduler, SteppingStore, explore
from tests.support import FakeClock


def test_a_live_repositorys_namespace_is_refused_to_any_other_creation(
    graveler: Graveler,
    namespace: str,
) -> None:
    graveler.create_repository("repo1", storage_namespace=namespace)
    for create in (graveler.create_repository, graveler.create_bare_repository):
        with pytest.raises(StorageNamespaceInUseError, match="belongs to repository 'repo1'"):
            create("repo2", storage_namespace=namespace)
    with pytest.raises(RepositoryNotFoundError):
        graveler.get_repository("repo2")
    # The refused creations freed their name at once and claim nothing.
    graveler.create_repository("repo2", storage_namespace=namespace + "2")
    owner = graveler.references.namespace_owner(namespace)
    assert owner is not None and owner.repository == "repo1"


@pytest.mark.parametrize(
    ("first", "second"),  # paths after the blockstore's scheme
    [
        ("lake/repo", "lake/repo/inner"),
        ("lake/repo", "lake/repo/a/b/c"),
        ("lake/repo/inner", "lake/repo"),
        ("lake/top/repo/a/b", "lake/top"),  # an ancestor some levels up
    ],
)
def test_namespaces_may_not_nest_either_way(
    graveler: Graveler, lake_blocks: BlockStore, first: str, second: str
) -> None:
    first, second = (f"{lake_blocks.scheme}://{path}" for path in (first, second))
    graveler.create_repository("repo1", storage_namespace=first)
    for create in (graveler.create_repository, graveler.create_bare_repository):
        with pytest.raises(StorageNamespaceInUseError, match=f"overlaps '{first}'"):
            create("repo2", storage_namespace=second)


def test_a_namespace_that_only_shares_a_name_prefix_is_another_namespace(
    graveler: Graveler,
    namespace: str,
) -> None:
    graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.create_repository("repo2", storage_namespace=namespace + "2")
    graveler.create_repository("repo3", storage_namespace=namespace + "-x/inner")


def test_deleting_without_purge_keeps_the_namespace_for_a_bare_restore_only(
    graveler: Graveler,
    namespace: str,
) -> None:
    old = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.delete_repository("repo1")
    with pytest.raises(StorageNamespaceInUseError, match="deleted without purge"):
        graveler.create_repository("repo1", storage_namespace=namespace)
    with pytest.raises(StorageNamespaceInUseError, match="overlaps"):
        graveler.create_bare_repository("inner", storage_namespace=namespace + "/inner")
    bare = graveler.create_bare_repository("repo1", storage_namespace=namespace)
    owner = graveler.references.namespace_owner(namespace)
    assert owner is not None and owner.instance_uid == bare.instance_uid != old.instance_uid
    with pytest.raises(StorageNamespaceInUseError, match="belongs to repository 'repo1'"):
        graveler.create_bare_repository("repo2", storage_namespace=namespace)


def test_a_namespace_being_purged_is_free_only_once_released(
    graveler: Graveler, namespace: str
) -> None:
    old = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.delete_repository("repo1", purge=True)
    for create in (graveler.create_repository, graveler.create_bare_repository):
        with pytest.raises(StorageNamespaceInUseError, match="being purged"):
            create("repo2", storage_namespace=namespace)
    graveler.release_namespace(namespace, "someone else's uid")
    with pytest.raises(StorageNamespaceInUseError, match="being purged"):
        graveler.create_repository("repo2", storage_namespace=namespace)
    graveler.release_namespace(namespace, old.instance_uid)
    graveler.create_repository("repo2", storage_namespace=namespace)


def test_a_deletion_retried_with_purge_settles_the_namespace_as_purging(
    graveler: Graveler,
    namespace: str,
) -> None:
    graveler.create_repository("repo1", storage_namespace=namespace)
    repository = graveler.get_repository("repo1")
    _, namespaces = lifecycle(graveler)
    namespaces.settle(repository, purge=False)  # a first deletion crashed here
    graveler.delete_repository("repo1", purge=True)
    owner = graveler.references.namespace_owner(namespace)
    assert owner is not None and owner.state == "purging"
    namespaces.settle(repository, purge=False)
    assert graveler.references.namespace_owner(namespace) == owner


def test_a_crashed_creations_claim_holds_nothing_once_it_is_abandoned(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    repositories, namespaces = lifecycle(graveler)
    repository, _ = repositories.begin_create(
        "repo1", storage_namespace=namespace, default_branch="main"
    )
    namespaces.claim(repository, bare=False)  # then the creator crashed
    with pytest.raises(StorageNamespaceInUseError, match="belongs to repository 'repo1'"):
        graveler.create_repository("repo2", storage_namespace=namespace)
    clock.advance(121)
    repo2 = graveler.create_repository("repo2", storage_namespace=namespace)
    graveler.set(repo2, "main", b"a", value("a"))
    with pytest.raises(RepositoryNotFoundError):
        graveler.get_repository("repo1")


def _racing(
    blocks: BlockStore,
    setup: Callable[[Graveler], None],
    *operations: Callable[[Graveler], object],
) -> Callable[[Scheduler], tuple[Sequence[Callable[[], object]], Check]]:
    """A scenario: after `setup`, the operations race on one graveler, step by step.

    Every run has a fresh store; they share `blocks`, where they write nothing but empty
    metaranges (content-addressed, so identical whoever writes them): these races are
    about who owns a namespace, which the store alone records."""

    def scenario(scheduler: Scheduler) -> tuple[Sequence[Callable[[], object]], Check]:
        graveler = make_graveler(SteppingStore(MemoryStore(), scheduler), FakeClock(), blocks)
        setup(graveler)

        def check(outcomes: list[Outcome]) -> None:
            created = [o.value for o in outcomes if o.acknowledged and o.value is not None]
            for outcome in outcomes:
                if not outcome.acknowledged:
                    assert isinstance(outcome.error, StorageNamespaceInUseError), outcome.error
            live = [r for r in graveler.list_repositories()]
            for repository in live:
                owner = graveler.references.namespace_owner(repository.storage_namespace)
                assert owner is not None and owner.instance_uid == repository.instance_uid
            for first in live:
                for second in live:
                    if first is not second:
                        assert not overlaps(first.storage_namespace, second.storage_namespace)
            assert len(created) <= len(live)

        return [lambda op=op: op(graveler) for op in operations], check

    return scenario


def overlaps(first: str, second: str) -> bool:
    return (
        first == second
        or f"{first}/".startswith(f"{second}/")
        or (f"{second}/".startswith(f"{first}/"))
    )


def _create(name: str, namespace: str, *, bare: bool = False) -> Callable[[Graveler], object]:
    def create(graveler: Graveler) -> object:
        if bare:
            return graveler.create_bare_repository(name, storage_namespace=namespace)
        return graveler.create_repository(name, storage_namespace=namespace)

    return create


@pytest.mark.parametrize(
    ("first", "second"),  # paths after the blockstore's scheme
    [("lake/repo", "lake/repo"), ("lake/repo", "lake/repo/inner"), ("lake/repo/a/b", "lake/repo")],
)
def test_racing_creations_never_share_or_nest_a_namespace(
    lake_blocks: BlockStore, first: str, second: str
) -> None:
    first, second = (f"{lake_blocks.scheme}://{path}" for path in (first, second))
    ran = explore(
        _racing(lake_blocks, lambda g: None, _create("repo1", first), _create("repo2", second))
    )
    assert ran > 20


@pytest.mark.parametrize("purge", [False, True])
def test_a_creation_racing_a_deletion_never_gets_the_data_it_keeps_or_purges(
    purge: bool, lake_blocks: BlockStore, namespace: str
) -> None:
    def setup(graveler: Graveler) -> None:
        graveler.create_repository("repo1", storage_namespace=namespace)

    def delete(graveler: Graveler) -> None:
        graveler.delete_repository("repo1", purge=purge)

    def check_refused(outcomes: list[Outcome]) -> None:
        assert isinstance(outcomes[1].error, StorageNamespaceInUseError), outcomes[1]

    scenario = _racing(lake_blocks, setup, delete, _create("repo2", namespace))

    def refused(scheduler: Scheduler) -> tuple[Sequence[Callable[[], object]], Check]:
        operations, check = scenario(scheduler)

        def both(outcomes: list[Outcome]) -> None:
            check(outcomes)
            check_refused(outcomes)

        return operations, both

    explore(refused)


def test_repositories_older_than_namespace_owners_are_adopted_once(
    graveler: Graveler, kv: MemoryStore, namespace: str
) -> None:
    old = graveler.create_repository("old", storage_namespace=namespace)
    shares = graveler.create_repository("shares", storage_namespace=namespace + "2")
    kv.drop_partition(keys.NAMESPACES)  # as a store written before namespaces had owners
    legacy = msgspec.structs.replace(shares, storage_namespace=namespace + "/inner")
    kv.set(keys.REPOSITORIES, keys.repository_key("shares"), encode(legacy))
    problems = graveler.adopt_namespaces()
    assert len(problems) == 1 and "repository 'shares'" in problems[0]
    owner = graveler.references.namespace_owner(namespace)
    assert owner is not None and owner.instance_uid == old.instance_uid
    assert graveler.adopt_namespaces() == problems  # idempotent
    with pytest.raises(StorageNamespaceInUseError):
        graveler.create_repository("new", storage_namespace=namespace)
