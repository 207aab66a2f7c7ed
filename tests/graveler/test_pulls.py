"""Pull requests in graveler: records, listing filters, compare-and-swap updates, merges."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import (
    BranchNotFoundError,
    MergeConflictError,
    PullRequestClosedError,
    PullRequestIdError,
    PullRequestNotFoundError,
    SameBranchError,
)
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository
from tests.graveler.helpers import value
from tests.graveler.stepping import paused_graveler, run_paused
from tests.support import FakeClock


@pytest.fixture
def repo(any_graveler: Graveler, namespace: str) -> Repository:
    repository = any_graveler.create_repository("repo1", storage_namespace=namespace)
    any_graveler.create_branch(repository, "dev", "main")
    return repository


def _open(graveler: Graveler, repo: Repository, title: str = "t") -> str:
    return graveler.pulls.create(
        repo, title=title, description="d", author="ada", source="dev", destination="main"
    )


def test_a_pull_request_is_opened_listed_and_merged(
    any_graveler: Graveler, repo: Repository, clock: FakeClock
) -> None:
    graveler = any_graveler
    graveler.set(repo, "dev", b"k", value("v"))
    graveler.commit(repo, "dev", committer="ada", message="m")
    pull_id = _open(graveler, repo)
    pull = graveler.pulls.get(repo, pull_id)
    assert (pull.status, pull.source, pull.destination, pull.author) == (
        "open",
        "dev",
        "main",
        "ada",
    )
    clock.advance(5)
    commit_id = graveler.pulls.merge(repo, pull_id, committer="bob")
    merged = graveler.pulls.get(repo, pull_id)
    assert (merged.status, merged.merged_commit_id) == ("merged", commit_id)
    assert merged.closed_date == clock()
    assert graveler.get(repo, "main", b"k") == value("v")
    with pytest.raises(PullRequestClosedError):
        graveler.pulls.merge(repo, pull_id, committer="bob")


def test_listing_filters_by_status_in_id_order(
    any_graveler: Graveler, repo: Repository, clock: FakeClock
) -> None:
    graveler = any_graveler
    ids = []
    for title in ("a", "b", "c"):
        ids.append(_open(graveler, repo, title))
        clock.advance(1)
    ids.sort()  # creation order to the millisecond; within one, uids' random part decides
    graveler.pulls.update(repo, ids[1], status="closed")
    listed = [pull_id for pull_id, _ in graveler.pulls.list(repo)]
    assert listed == ids
    assert [p for p, _ in graveler.pulls.list(repo, status="open")] == [ids[0], ids[2]]
    assert [p for p, _ in graveler.pulls.list(repo, status="closed")] == [ids[1]]
    assert [p for p, _ in graveler.pulls.list(repo, after=ids[0])] == ids[1:]
    assert [p for p, _ in graveler.pulls.list(repo, prefix=ids[2])] == [ids[2]]


def test_updates_change_only_the_given_fields(any_graveler: Graveler, repo: Repository) -> None:
    graveler = any_graveler
    pull_id = _open(graveler, repo, "old")
    graveler.pulls.update(repo, pull_id, title="new")
    pull = graveler.pulls.get(repo, pull_id)
    assert (pull.title, pull.description, pull.status, pull.closed_date) == (
        "new",
        "d",
        "open",
        None,
    )
    graveler.pulls.update(repo, pull_id, status="closed")
    graveler.pulls.update(repo, pull_id, status="open")  # reopened: closed_date stays
    assert graveler.pulls.get(repo, pull_id).closed_date is not None


def test_racing_updates_of_one_pull_request_both_land(
    any_graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    graveler = any_graveler
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    pull_id = _open(graveler, repo)
    run_paused(
        stepping,
        lambda: paused.pulls.update(repo, pull_id, title="mine"),
        at_call=1,  # after its read, before its compare-and-swap
        intruder=lambda: graveler.pulls.update(repo, pull_id, description="theirs"),
    )
    pull = graveler.pulls.get(repo, pull_id)
    assert (pull.title, pull.description) == ("mine", "theirs")


def test_a_failed_merge_leaves_it_open(any_graveler: Graveler, repo: Repository) -> None:
    graveler = any_graveler
    graveler.set(repo, "dev", b"k", value("dev"))
    graveler.commit(repo, "dev", committer="", message="m")
    graveler.set(repo, "main", b"k", value("main"))
    graveler.commit(repo, "main", committer="", message="m")
    pull_id = _open(graveler, repo)
    with pytest.raises(MergeConflictError):
        graveler.pulls.merge(repo, pull_id, committer="")
    assert graveler.pulls.get(repo, pull_id).status == "open"


def test_bad_requests(any_graveler: Graveler, repo: Repository) -> None:
    graveler = any_graveler
    with pytest.raises(SameBranchError):
        graveler.pulls.create(
            repo, title="t", description="", author="", source="main", destination="main"
        )
    with pytest.raises(BranchNotFoundError):
        graveler.pulls.create(
            repo, title="t", description="", author="", source="nope", destination="main"
        )
    with pytest.raises(PullRequestIdError):
        graveler.pulls.get(repo, "../x")
    with pytest.raises(PullRequestNotFoundError):
        graveler.pulls.get(repo, "0" * 26)
    assert list(graveler.pulls.list(repo)) == []
