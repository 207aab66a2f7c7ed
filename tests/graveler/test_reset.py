"""Resetting branches: all, one key, a folder, hard; racing commits; crashes."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import BranchNotFoundError, InvalidInputError, RefNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.cleaner import Cleaner
from kvlake.graveler.records import Branch, Repository, decode_dropped_token
from kvlake.graveler.refs.store import Refs
from tests.graveler.helpers import all_keys, contents, value
from tests.graveler.test_crashes import crashes, live_partitions


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    for key in (b"a", b"d1/x", b"d1/y", b"d1x", b"d2/x"):
        graveler.set(repo, "main", key, value("committed"))
    graveler.commit(repo, "main", committer="t", message="base")
    return repo


def _stage(graveler: Graveler, repo: Repository) -> None:
    for key in (b"a", b"d1/x", b"d1/new", b"d1x", b"d2/x", b"new"):
        graveler.set(repo, "main", key, value("staged"))
    graveler.delete(repo, "main", b"d1/y")


def _queued(graveler: Graveler) -> set[str]:
    return {decode_dropped_token(raw).token for _, raw in graveler.store.scan(keys.DROPPED_TOKENS)}


def test_reset_branch_drops_all_staged_changes_and_queues_the_token(
    graveler: Graveler, repo: Repository
) -> None:
    committed = contents(graveler, repo, "main")
    _stage(graveler, repo)
    old = graveler.get_branch(repo, "main")
    graveler.resets.reset_branch(repo, "main")
    new = graveler.get_branch(repo, "main")
    assert contents(graveler, repo, "main") == committed
    assert (new.commit_id, new.sealed_tokens) == (old.commit_id, ())
    assert new.staging_token != old.staging_token
    assert old.staging_token in _queued(graveler)
    Cleaner(graveler).clean_once()
    assert keys.staging_partition(old.staging_token) not in all_keys(graveler.store)
    graveler.resets.reset_branch(repo, "main")  # a clean branch stays as it is
    assert graveler.get_branch(repo, "main") == new


def test_reset_key_and_prefix_drop_only_their_changes(graveler: Graveler, repo: Repository) -> None:
    committed = contents(graveler, repo, "main")
    _stage(graveler, repo)
    graveler.resets.reset_key(repo, "main", b"a")
    graveler.resets.reset_key(repo, "main", b"never-staged")
    graveler.resets.reset_prefix(repo, "main", b"d1")  # means the folder d1/, not d1x
    view = contents(graveler, repo, "main")
    assert view[b"a"] == committed[b"a"]
    assert view[b"d1/x"] == view[b"d1/y"] == value("committed")
    assert b"d1/new" not in view
    assert view[b"d1x"] == view[b"d2/x"] == view[b"new"] == value("staged")
    graveler.resets.reset_prefix(repo, "main", b"d2/")
    assert contents(graveler, repo, "main")[b"d2/x"] == value("committed")


def test_reset_of_keys_a_running_commit_sealed_stages_the_committed_value_over_them(
    graveler: Graveler, repo: Repository
) -> None:
    committed = contents(graveler, repo, "main")
    _stage(graveler, repo)
    branch, predicate = Refs(graveler.store).load_branch(repo, "main")
    sealed = Branch(
        commit_id=branch.commit_id,
        staging_token=keys.new_staging_token(repo.instance_uid),
        sealed_tokens=(branch.staging_token,),
    )
    Refs(graveler.store).swap_branch(repo, "main", sealed, predicate)  # as a commit's seal does
    graveler.set(repo, "main", b"d1/later", value("staged"))
    graveler.resets.reset_prefix(repo, "main", b"d1")
    graveler.resets.reset_key(repo, "main", b"new")
    expected = {**committed, b"d1x": value("staged"), b"d2/x": value("staged")}
    expected[b"a"] = value("staged")
    assert contents(graveler, repo, "main") == expected
    graveler.commit(repo, "main", committer="t", message="all")  # the sealed token and ours
    assert contents(graveler, repo, "main") == expected


def test_hard_reset_moves_the_branch_to_any_ref_and_drops_staging(
    graveler: Graveler, repo: Repository
) -> None:
    base = graveler.get_branch(repo, "main").commit_id
    graveler.set(repo, "main", b"more", value("1"))
    graveler.commit(repo, "main", committer="t", message="more")
    _stage(graveler, repo)
    old = graveler.get_branch(repo, "main")
    assert graveler.resets.reset_hard(repo, "main", "main~1") == base
    assert graveler.get_branch(repo, "main").commit_id == base
    assert contents(graveler, repo, "main") == contents(graveler, repo, base)
    assert old.staging_token in _queued(graveler)


def test_bad_resets_are_refused_and_change_nothing(graveler: Graveler, repo: Repository) -> None:
    _stage(graveler, repo)
    before = all_keys(graveler.store)
    with pytest.raises(InvalidInputError):
        graveler.resets.reset_prefix(repo, "main", b"")
    with pytest.raises(InvalidInputError):
        graveler.resets.reset_key(repo, "main", b"")
    with pytest.raises(InvalidInputError):
        graveler.resets.reset_hard(repo, "main", "main~x")
    with pytest.raises(RefNotFoundError):
        graveler.resets.reset_hard(repo, "main", "nope")
    with pytest.raises(BranchNotFoundError):
        graveler.resets.reset_hard(repo, "nope", "main")
    with pytest.raises(BranchNotFoundError):
        graveler.resets.reset_branch(repo, "nope")
    with pytest.raises(InvalidInputError):
        graveler.resets.reset_branch(repo, "main~1")
    assert all_keys(graveler.store) == before


def _staged_repository(graveler: Graveler, namespace: str) -> Repository:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.set(repo, "main", b"a", value("a"))
    graveler.commit(repo, "main", committer="t", message="one")
    graveler.create_tag(repo, "one", "main")
    graveler.set(repo, "main", b"b", value("b"))
    return repo


@pytest.mark.parametrize("hard", [False, True])
def test_crash_during_reset_leaves_no_unqueued_token_behind(
    hard: bool, lake_blocks: BlockStore
) -> None:
    def reset(graveler: Graveler, repo: Repository) -> None:
        if hard:
            graveler.resets.reset_hard(repo, "main", "one")
        else:
            graveler.resets.reset_branch(repo, "main")

    for graveler, store, repo, _ in crashes(lake_blocks, _staged_repository, reset):
        view = contents(graveler, repo, "main")
        assert view in ({b"a": value("a"), b"b": value("b")}, {b"a": value("a")})
        reset(graveler, repo)
        assert b"b" not in contents(graveler, repo, "main")
        Cleaner(graveler).clean_once()
        assert set(all_keys(store.inner)) <= live_partitions(graveler, repo)


def test_crash_during_merge_leaves_the_branch_merged_or_not(lake_blocks: BlockStore) -> None:
    def setup(graveler: Graveler, namespace: str) -> Repository:
        repo = _staged_repository(graveler, namespace)
        graveler.create_branch(repo, "feature", "main")
        graveler.set(repo, "feature", b"f", value("f"))
        graveler.commit(repo, "feature", committer="t", message="f")
        graveler.resets.reset_branch(repo, "main")
        return repo

    def merge(graveler: Graveler, repo: Repository) -> None:
        graveler.merges.merge(repo, "feature", "main", committer="t")

    for graveler, store, repo, _ in crashes(lake_blocks, setup, merge):
        head = graveler.get_commit(repo, graveler.get_branch(repo, "main").commit_id)
        assert len(head.parents) in (1, 2)
        if len(head.parents) == 1:
            merge(graveler, repo)
        assert contents(graveler, repo, "main") == {b"a": value("a"), b"f": value("f")}
        Cleaner(graveler).clean_once()
        assert set(all_keys(store.inner)) <= live_partitions(graveler, repo)
