"""Branch protection rules: editing them, and every guarded action they block."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kvlake.errors import (
    BranchNotFoundError,
    InvalidInputError,
    NotFoundError,
    ProtectedBranchError,
)
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository
from tests.graveler.helpers import all_keys, contents, value


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.set(repo, "main", b"a", value("1"))
    first = graveler.commit(repo, "main", committer="t", message="one")
    for name in ("release-1", "release-2", "dev", "feature"):
        graveler.create_branch(repo, name, first)
    graveler.set(repo, "feature", b"f", value("f"))
    graveler.commit(repo, "feature", committer="t", message="f")
    return repo


def test_rules_are_created_replaced_listed_and_deleted(
    graveler: Graveler, repo: Repository
) -> None:
    assert graveler.protection.get_rules(repo) == {}
    graveler.protection.set_rule(repo, "main", ["commit", "staging_write"])
    graveler.protection.set_rule(repo, "release-*", ["delete"])
    graveler.protection.set_rule(repo, "release-*", ["delete", "commit", "commit"])
    assert graveler.protection.get_rules(repo) == {
        "main": ("commit", "staging_write"),
        "release-*": ("commit", "delete"),
    }
    graveler.protection.delete_rule(repo, "main")
    assert list(graveler.protection.get_rules(repo)) == ["release-*"]
    with pytest.raises(NotFoundError, match="no branch protection rule"):
        graveler.protection.delete_rule(repo, "main")


def test_staging_writes_are_blocked_on_matching_branches_only(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.protection.set_rule(repo, "release-*", ["staging_write"])
    before = all_keys(graveler.store)
    writes: list[Callable[[], object]] = [
        lambda: graveler.set(repo, "release-1", b"x", value("x")),
        lambda: graveler.delete(repo, "release-2", b"a"),
        lambda: graveler.resets.reset_branch(repo, "release-1"),
        lambda: graveler.resets.reset_key(repo, "release-1", b"a"),
        lambda: graveler.resets.reset_prefix(repo, "release-1", b"d"),
    ]
    for write in writes:
        with pytest.raises(ProtectedBranchError, match="cannot write to protected branch"):
            write()
    assert all_keys(graveler.store) == before
    with pytest.raises(ProtectedBranchError):
        graveler.protection.check(repo, "release-9", "staging_write")
    graveler.protection.check(repo, "release-9", "commit")
    graveler.set(repo, "dev", b"x", value("x"))  # not matched
    with pytest.raises(BranchNotFoundError):  # patterns are case-sensitive
        graveler.set(repo, "Release-1", b"x", value("x"))
    graveler.commit(repo, "release-1", committer="t", message="empty", allow_empty=True)


def test_commits_and_history_rewrites_are_blocked_but_merges_are_allowed(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.protection.set_rule(repo, "main", ["commit"])
    head = graveler.get_branch(repo, "main").commit_id
    feature = graveler.get_branch(repo, "feature").commit_id
    actions: list[Callable[[], object]] = [
        lambda: graveler.commit(repo, "main", committer="t", message="m", allow_empty=True),
        lambda: graveler.changes.revert(repo, "main", "main", committer="t"),
        lambda: graveler.changes.cherry_pick(repo, "main", "feature", committer="t"),
        lambda: graveler.resets.reset_hard(repo, "main", "main~1"),
    ]
    for action in actions:
        with pytest.raises(ProtectedBranchError):
            action()
    assert graveler.get_branch(repo, "main").commit_id == head
    graveler.set(repo, "main", b"staged", value("s"))  # staging writes are not blocked
    graveler.resets.reset_branch(repo, "main")
    merged = graveler.merges.merge(repo, "feature", "main", committer="t")
    assert graveler.get_commit(repo, merged).parents == (head, feature)
    assert contents(graveler, repo, "main")[b"f"] == value("f")


def test_deleting_a_protected_branch_is_blocked(graveler: Graveler, repo: Repository) -> None:
    graveler.protection.set_rule(repo, "dev", ["delete"])
    with pytest.raises(ProtectedBranchError):
        graveler.delete_branch(repo, "dev")
    graveler.get_branch(repo, "dev")
    graveler.delete_branch(repo, "feature")


@pytest.mark.parametrize(
    ("pattern", "blocked"),
    [
        ("", ["commit"]),
        ("a\0b", ["commit"]),
        ("x" * 257, ["commit"]),
        ("main", []),
        ("main", ["push"]),
        ("main", "commit"),
    ],
)
def test_bad_rules_are_refused_and_change_nothing(
    graveler: Graveler, repo: Repository, pattern: str, blocked: list[str]
) -> None:
    before = all_keys(graveler.store)
    with pytest.raises(InvalidInputError):
        graveler.protection.set_rule(repo, pattern, blocked)  # type: ignore[arg-type]
    assert all_keys(graveler.store) == before


def test_rules_belong_to_one_repository_instance(
    graveler: Graveler, repo: Repository, namespace: str
) -> None:
    graveler.protection.set_rule(repo, "*", ["staging_write"])
    other = graveler.create_repository("repo2", storage_namespace=namespace + "2")
    graveler.set(other, "main", b"x", value("x"))
    graveler.delete_repository("repo1")
    again = graveler.create_repository("repo1", storage_namespace=namespace + "3")
    assert graveler.protection.get_rules(again) == {}
    graveler.set(again, "main", b"x", value("x"))
