"""Repository lifecycle: states, names, tombstones, abandoned creations (invariant 1)."""

from __future__ import annotations

import msgspec
import pytest

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.errors import (
    BranchNotFoundError,
    ConflictError,
    InvalidInputError,
    RepositoryDeletingError,
    RepositoryNotFoundError,
    UnavailableError,
)
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.cleaner import Cleaner
from kvlake.graveler.records import Repository, encode
from kvlake.kv.faults import Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import all_keys, lifecycle, make_graveler, value
from tests.support import FakeClock


def test_create_makes_an_active_repository_with_first_commit_and_default_branch(
    graveler: Graveler,
    namespace: str,
) -> None:
    repo = graveler.create_repository("repo1", storage_namespace=namespace, default_branch="main")
    assert repo.state == "active"
    assert graveler.get_repository("repo1") == repo
    branch = graveler.get_branch(repo, "main")
    commit = graveler.get_commit(repo, branch.commit_id)
    assert commit.message == "Repository created"
    assert commit.parents == ()
    assert commit.generation == 1
    assert commit.metadata == {}
    assert list(graveler.list(repo, "main")) == []


def test_create_with_taken_name_is_a_conflict(graveler: Graveler, namespace: str) -> None:
    graveler.create_repository("repo1", storage_namespace=namespace)
    with pytest.raises(ConflictError, match="already exists"):
        graveler.create_repository("repo1", storage_namespace=namespace)


@pytest.mark.parametrize("name", ["", "ab", "Repo", "-abc", "a" * 64, "a_b", "a/b", "ab\0c"])
def test_invalid_repository_name_is_rejected_and_writes_nothing(
    graveler: Graveler, kv: MemoryStore, name: str, namespace: str
) -> None:
    with pytest.raises(InvalidInputError, match="repository name"):
        graveler.create_repository(name, storage_namespace=namespace)
    assert all_keys(kv) == {}


@pytest.mark.parametrize(
    "bad",  # {scheme}: the run's blockstore's; {other}: another adapter's
    [
        "",
        "s3x://bucket",
        "{scheme}://",
        "{other}://x",
        "{scheme}://lake/" + "a" * 300,  # a segment too long
        "{scheme}://lake/" + "b/" * 300,  # a path too long
    ],
)
def test_invalid_namespace_is_rejected_and_writes_nothing(
    graveler: Graveler, kv: MemoryStore, lake_blocks: BlockStore, bad: str
) -> None:
    other = "s3" if lake_blocks.scheme == "local" else "local"
    with pytest.raises(InvalidInputError):
        graveler.create_repository(
            "repo1", storage_namespace=bad.format(scheme=lake_blocks.scheme, other=other)
        )
    assert all_keys(kv) == {}


@pytest.mark.parametrize("branch", ["", "a/b", "-x", "a b", "x~1"])
def test_invalid_default_branch_is_rejected(
    graveler: Graveler, kv: MemoryStore, branch: str, namespace: str
) -> None:
    with pytest.raises(InvalidInputError, match="branch name"):
        graveler.create_repository("repo1", storage_namespace=namespace, default_branch=branch)
    assert all_keys(kv) == {}


def test_list_shows_only_active_repositories_in_name_order(
    graveler: Graveler, kv: MemoryStore, namespace: str
) -> None:
    for name in ["ccc", "aaa", "bbb"]:
        graveler.create_repository(name, storage_namespace=f"{namespace}-{name}")
    graveler.delete_repository("bbb")
    initial = Repository(
        name="ddd",
        storage_namespace=namespace,
        default_branch="main",
        creation_date=0,
        state="initial",
        instance_uid=ids.new_uid(),
    )
    kv.set(keys.REPOSITORIES, keys.repository_key("ddd"), encode(initial))
    assert [r.name for r in graveler.list_repositories()] == ["aaa", "ccc"]
    assert [r.name for r in graveler.list_repositories(after="aaa")] == ["ccc"]


def test_deleted_name_is_free_at_once_and_new_repository_sees_nothing_old(
    graveler: Graveler,
    namespace: str,
) -> None:
    old = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.create_branch(old, "feature", "main")
    graveler.set(old, "main", b"a", value("old"))
    graveler.delete_repository("repo1")
    with pytest.raises(RepositoryNotFoundError):
        graveler.get_repository("repo1")
    new = graveler.create_repository("repo1", storage_namespace=f"{namespace}-new")
    assert new.instance_uid != old.instance_uid
    assert list(graveler.list(new, "main")) == []
    with pytest.raises(BranchNotFoundError):
        graveler.get_branch(new, "feature")


def test_deleting_missing_repository_is_not_found(graveler: Graveler, namespace: str) -> None:
    with pytest.raises(RepositoryNotFoundError):
        graveler.delete_repository("nope")
    graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.delete_repository("repo1")
    with pytest.raises(RepositoryNotFoundError):
        graveler.delete_repository("repo1")


def test_repository_left_deleting_reads_as_being_deleted_and_retry_finishes(
    graveler: Graveler, kv: MemoryStore, namespace: str
) -> None:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    deleting = msgspec.structs.replace(repo, state="deleting")
    kv.set(keys.REPOSITORIES, keys.repository_key("repo1"), encode(deleting))
    with pytest.raises(RepositoryDeletingError, match="being deleted"):
        graveler.get_repository("repo1")
    with pytest.raises(RepositoryDeletingError):
        graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.delete_repository("repo1")
    with pytest.raises(RepositoryNotFoundError):
        graveler.get_repository("repo1")
    graveler.create_repository("repo1", storage_namespace=namespace)


def test_fresh_initial_record_reads_as_not_found_and_blocks_the_name(
    graveler: Graveler, kv: MemoryStore, clock: FakeClock, namespace: str
) -> None:
    repositories, _ = lifecycle(graveler)
    repositories.begin_create("repo1", storage_namespace=namespace, default_branch="main")
    with pytest.raises(RepositoryNotFoundError):
        graveler.get_repository("repo1")
    with pytest.raises(ConflictError):
        graveler.create_repository("repo1", storage_namespace=namespace)
    clock.advance(121)
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    assert graveler.get_repository("repo1") == repo


def test_stale_initial_record_is_abandoned_on_access_and_cleaned(
    graveler: Graveler, kv: MemoryStore, clock: FakeClock, cleaner: Cleaner, namespace: str
) -> None:
    repositories, _ = lifecycle(graveler)
    stale, _ = repositories.begin_create(
        "repo1", storage_namespace=namespace, default_branch="main"
    )
    clock.advance(121)
    with pytest.raises(RepositoryNotFoundError):
        graveler.get_repository("repo1")
    assert repositories.load("repo1")[0].state == "deleted"
    report = cleaner.clean_once()
    assert report.repositories_cleaned == 1
    assert keys.instance_partition("repo1", stale.instance_uid) not in all_keys(kv)


def test_bare_repository_is_active_without_branches(graveler: Graveler, namespace: str) -> None:
    repo = graveler.create_bare_repository("repo1", storage_namespace=namespace)
    assert graveler.get_repository("repo1").state == "active"
    assert list(graveler.list_branches(repo)) == []


@pytest.mark.parametrize("skip", [1, 2])
def test_a_creation_that_fails_midway_frees_the_name_at_once(
    clock: FakeClock, lake_blocks: BlockStore, skip: int, namespace: str
) -> None:
    """Issue 10 item 7: the name was blocked for 120 s ("already exists" while GET said 404)."""
    kv = FaultyStore(MemoryStore())
    graveler = make_graveler(kv, clock, lake_blocks)
    # After the record (the first compare-and-swap), a write of the first commit or of
    # the default branch fails.
    kv.arm(Fault(op="set_if", skip=skip, times=1))
    with pytest.raises(UnavailableError):
        graveler.create_repository("repo1", storage_namespace=namespace)
    repository = graveler.create_repository("repo1", storage_namespace=namespace)
    assert graveler.get_repository("repo1").instance_uid == repository.instance_uid
    report = Cleaner(graveler).clean_once()
    assert report.repositories_cleaned == 1  # the half-made instance, handed to the cleaner
