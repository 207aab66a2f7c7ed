"""Revert and cherry-pick, and publishing a commit on a clean head while commits race."""

from __future__ import annotations

import pytest

from kvlake.errors import (
    DirtyBranchError,
    InvalidInputError,
    MergeConflictError,
    NoChangesError,
)
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.history.commits import Committer
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import Commit, Repository
from kvlake.graveler.refs.refexpr import RefResolver
from kvlake.graveler.refs.store import Refs
from kvlake.graveler.staging.store import Staging
from tests.graveler.helpers import all_keys, contents, value
from tests.support import FakeClock


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def _commit(graveler: Graveler, repo: Repository, branch: str, changes: dict[str, str]) -> str:
    for key, text in changes.items():
        if text:
            graveler.set(repo, branch, key.encode(), value(text))
        else:
            graveler.delete(repo, branch, key.encode())
    return graveler.commit(repo, branch, committer="t", message=f"change {sorted(changes)}")


def test_revert_undoes_one_commit_and_revert_of_revert_redoes_it(
    graveler: Graveler, repo: Repository
) -> None:
    _commit(graveler, repo, "main", {"a": "1", "b": "1", "c": "1"})
    before = contents(graveler, repo, "main")
    target = _commit(graveler, repo, "main", {"a": "2", "b": "", "d": "2"})
    after = contents(graveler, repo, "main")
    _commit(graveler, repo, "main", {"e": "3"})  # a later, unrelated commit stays
    reverted = graveler.changes.revert(
        repo, "main", target, committer="bob", metadata={"why": "bad"}
    )
    commit = graveler.get_commit(repo, reverted)
    assert commit.message == f"Revert {target}"
    assert (commit.committer, commit.metadata) == ("bob", {"why": "bad"})
    assert contents(graveler, repo, "main") == {**before, b"e": value("3")}
    graveler.changes.revert(repo, "main", "main", committer="bob")  # the revert, by ref expression
    assert graveler.get_commit(repo, graveler.resolve_ref(repo, "main").commit_id).message == (
        "Revert main"
    )
    assert contents(graveler, repo, "main") == {**after, b"e": value("3")}


def test_revert_conflicting_with_later_changes_is_reported(
    graveler: Graveler, repo: Repository
) -> None:
    target = _commit(graveler, repo, "main", {"a": "1"})
    _commit(graveler, repo, "main", {"a": "2"})
    with pytest.raises(MergeConflictError) as caught:
        graveler.changes.revert(repo, "main", target, committer="t")
    assert caught.value.paths == (b"a",)


def test_reverting_a_merge_commit_needs_a_parent_number(
    graveler: Graveler, repo: Repository
) -> None:
    _commit(graveler, repo, "main", {"a": "1"})
    graveler.create_branch(repo, "feature", "main")
    _commit(graveler, repo, "feature", {"f": "1"})
    _commit(graveler, repo, "main", {"m": "1"})
    merged = graveler.merges.merge(repo, "feature", "main", committer="t")
    before = all_keys(graveler.store)
    for number in (0, 3, -1):
        with pytest.raises(InvalidInputError, match="parent"):
            graveler.changes.revert(repo, "main", merged, committer="t", parent_number=number)
    assert all_keys(graveler.store) == before
    graveler.changes.revert(
        repo, "main", merged, committer="t", parent_number=1
    )  # undo the feature
    assert contents(graveler, repo, "main") == {b"a": value("1"), b"m": value("1")}
    graveler.resets.reset_hard(repo, "main", merged)
    graveler.changes.revert(
        repo, "main", merged, committer="t", parent_number=2
    )  # undo main's side
    assert contents(graveler, repo, "main") == {b"a": value("1"), b"f": value("1")}


def test_revert_and_cherry_pick_refuse_first_commits_dirty_branches_and_empty_results(
    graveler: Graveler, repo: Repository
) -> None:
    root = graveler.get_branch(repo, "main").commit_id
    target = _commit(graveler, repo, "main", {"a": "1"})
    with pytest.raises(InvalidInputError, match="no parent"):
        graveler.changes.revert(repo, "main", root, committer="t")
    with pytest.raises(InvalidInputError, match="one parent"):
        graveler.changes.revert(repo, "main", target, committer="t", parent_number=2)
    with pytest.raises(NoChangesError):
        graveler.changes.cherry_pick(repo, "main", target, committer="t")  # already there
    graveler.set(repo, "main", b"x", value("staged"))
    before = all_keys(graveler.store)
    with pytest.raises(DirtyBranchError):
        graveler.changes.revert(repo, "main", target, committer="t")
    with pytest.raises(DirtyBranchError):
        graveler.changes.cherry_pick(repo, "main", target, committer="t")
    assert all_keys(graveler.store) == before


def test_cherry_pick_copies_the_change_message_and_records_its_origin(
    graveler: Graveler, repo: Repository, clock: FakeClock
) -> None:
    _commit(graveler, repo, "main", {"a": "1"})
    graveler.create_branch(repo, "release", "main")
    graveler.set(repo, "main", b"fix", value("1"))
    graveler.set(repo, "main", b"a", value("2"))
    fix = graveler.commit(repo, "main", committer="alice", message="fix it", metadata={"t": "1"})
    _commit(graveler, repo, "main", {"later": "1"})
    clock.advance(10)
    picked = graveler.changes.cherry_pick(repo, "release", fix, committer="bob")
    commit = graveler.get_commit(repo, picked)
    assert commit.message == "fix it"
    assert commit.committer == "bob"
    assert commit.metadata == {
        "t": "1",
        "cherry-pick-origin": fix,
        "cherry-pick-committer": "alice",
    }
    assert commit.parents == (graveler.resolve_ref(repo, "release~1").commit_id,)
    assert contents(graveler, repo, "release") == {b"a": value("2"), b"fix": value("1")}


def test_a_commit_racing_the_publish_makes_it_rebuild_on_the_new_head(
    graveler: Graveler, repo: Repository, clock: FakeClock
) -> None:
    refs = Refs(graveler.store)
    parts = Parts(
        store=graveler.store,
        refs=refs,
        staging=Staging(graveler.store, graveler.committed),
        committed=graveler.committed,
        resolver=RefResolver(refs),
        protection=graveler.protection,
        drop_tokens=graveler.queue_token_drops,
        clock=clock,
    )
    committer = Committer(parts)
    heads: list[str] = []

    def build(head_id: str, head: Commit) -> Commit:
        heads.append(head_id)
        if len(heads) == 1:  # another commit lands after we read the head
            graveler.commit(repo, "main", committer="racer", message="r", allow_empty=True)
        return Commit(
            committer="t",
            message="mine",
            metarange_id=head.metarange_id,
            creation_date=int(clock()),
            parents=(head_id,),
            metadata={},
            generation=head.generation + 1,
        )

    published = committer.commit_on_clean_head(repo, "main", build)
    assert len(heads) == 2 and heads[0] != heads[1]
    assert graveler.get_branch(repo, "main").commit_id == published
    assert graveler.get_commit(repo, published).parents == (heads[1],)
