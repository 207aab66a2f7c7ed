"""Staged batches: a filled token published on a branch in one swap, above what was staged."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import ProtectedBranchError
from kvlake.graveler import Graveler, Repository, Value
from kvlake.kv.faults import Call
from tests.graveler.helpers import contents, value
from tests.graveler.stepping import calls_of, paused_graveler, run_paused
from tests.support import FakeClock


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    repository = graveler.create_repository("repo", storage_namespace=namespace)
    for key in ("t/committed", "t/kept", "u/other"):
        graveler.set(repository, "main", key.encode(), value(f"head {key}"))
    graveler.commit(repository, "main", committer="t", message="head")
    graveler.set(repository, "main", b"t/staged", value("staged"))
    return repository


def _batch(graveler: Graveler, repo: Repository) -> str:
    """A token that replaces t/staged, deletes t/committed and adds t/new."""
    token = graveler.batches.new_token(repo)
    graveler.batches.fill(
        token,
        [(b"t/committed", None), (b"t/new", value("batch")), (b"t/staged", value("batch"))],
    )
    return token


BEFORE = {b"t/committed", b"t/kept", b"t/staged", b"u/other"}
AFTER = {b"t/kept", b"t/new", b"t/staged", b"u/other"}


def test_a_published_batch_appears_in_one_swap_above_what_was_staged(
    graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    head = graveler.get_branch(repo, "main").commit_id
    token = _batch(graveler, repo)
    assert set(contents(graveler, repo, "main")) == BEFORE  # filled, not yet visible
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    seen: list[dict[bytes, Value]] = []

    def read(call: Call) -> None:
        seen.append(contents(graveler, repo, "main"))

    assert (
        run_paused(stepping, lambda: paused.batches.publish(repo, "main", token), at_each_call=read)
        == head
    )  # no commit: the batch is staged
    seen.append(contents(graveler, repo, "main"))

    assert {frozenset(state) for state in seen} == {frozenset(BEFORE), frozenset(AFTER)}
    after = contents(graveler, repo, "main")
    assert after[b"t/staged"] == value("batch")  # the batch wins over what was staged
    graveler.set(repo, "main", b"t/new", value("later"))  # a later write wins over it
    graveler.commit(repo, "main", committer="t", message="all")
    committed = contents(graveler, repo, "main")
    assert set(committed) == AFTER and committed[b"t/new"] == value("later")
    assert graveler.get_branch(repo, "main").sealed_tokens == ()


def test_a_commit_racing_a_publish_at_any_call_loses_nothing(
    graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    total = calls_of(stepping, lambda: paused.batches.publish(repo, "main", _batch(graveler, repo)))
    graveler.commit(repo, "main", committer="t", message="reset the scene")
    for n in range(total):
        graveler.set(repo, "main", b"t/staged", value("staged"))
        graveler.set(repo, "main", b"t/committed", value("again"))
        token = _batch(graveler, repo)
        run_paused(
            stepping,
            lambda: paused.batches.publish(repo, "main", token),  # noqa: B023
            at_call=n,
            intruder=lambda: graveler.commit(repo, "main", committer="t", message=f"{n}"),  # noqa: B023
        )
        state = contents(graveler, repo, "main")
        assert set(state) == AFTER and state[b"t/staged"] == value("batch"), n
        graveler.commit(repo, "main", committer="t", message=f"after {n}")
        assert contents(graveler, repo, "main") == state, n  # committed as it was staged
        assert graveler.get_branch(repo, "main").sealed_tokens == (), n


def test_a_write_racing_a_publish_at_any_call_wins_over_the_batch(
    graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    # A write still running when the batch lands is acknowledged after it: it must win.
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    total = calls_of(stepping, lambda: paused.set(repo, "main", b"t/new", value("probe")))
    for n in range(total):
        token = _batch(graveler, repo)
        run_paused(
            stepping,
            lambda: paused.set(repo, "main", b"t/new", value(f"write {n}")),  # noqa: B023
            at_call=n,
            intruder=lambda: graveler.batches.publish(repo, "main", token),  # noqa: B023
        )
        assert contents(graveler, repo, "main")[b"t/new"] == value(f"write {n}"), n


def test_shadow_staged_hides_every_staged_value_under_the_range(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.set(repo, "main", b"t/kept", value("staged over a committed one"))
    graveler.set(repo, "main", b"u/staged", value("outside"))
    token = graveler.batches.new_token(repo)

    shadowed = graveler.batches.shadow_staged(repo, "main", token, b"t/", b"t0")
    graveler.batches.publish(repo, "main", token)

    assert shadowed == 2
    assert set(contents(graveler, repo, "main")) == {b"t/committed", b"u/other", b"u/staged"}


def test_a_protected_branch_refuses_a_batch_before_the_swap(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.protection.set_rule(repo, "main", ["staging_write"])
    token = _batch(graveler, repo)
    with pytest.raises(ProtectedBranchError):
        graveler.batches.publish(repo, "main", token)
    assert set(contents(graveler, repo, "main")) == BEFORE
