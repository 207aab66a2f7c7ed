"""Commits record the staging tokens they consume; `references.token_states` reports them.

The deletion worker decides from these states alone whether a staged blob may
go: a consumed token's blobs are committed data (garbage collection's), a
sealed token's may be read by a running commit. So each state must be exact.
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository, decode_consumed_token
from kvlake.graveler.refs.store import Refs, partition_of
from tests.graveler.helpers import value
from tests.graveler.stepping import paused_graveler, run_paused
from tests.support import FakeClock


@pytest.fixture
def repo(any_graveler: Graveler, namespace: str) -> Repository:
    return any_graveler.create_repository("repo1", storage_namespace=namespace)


def test_each_state_is_reported(any_graveler: Graveler, repo: Repository) -> None:
    graveler = any_graveler
    graveler.set(repo, "main", b"a", value("1"))
    consumed = graveler.get_branch(repo, "main").staging_token
    commit = graveler.commit(repo, "main", committer="t", message="m")
    graveler.create_branch(repo, "dev", "main")
    dev = graveler.get_branch(repo, "dev").staging_token
    graveler.set(repo, "dev", b"b", value("2"))
    graveler.delete_branch(repo, "dev")
    staging = graveler.get_branch(repo, "main").staging_token
    states = graveler.references.token_states(repo, [consumed, dev, staging, "no-such-token"])
    assert states == {
        consumed: "consumed",
        dev: "dropped",
        staging: "staging",
        "no-such-token": "dropped",
    }
    raw, _ = graveler.store.get(partition_of(repo), keys.consumed_token_key(consumed))
    assert decode_consumed_token(raw).commit_ids == (commit,)
    assert graveler.references.token_states(repo, []) == {}


def test_a_token_reads_sealed_from_its_seal_until_its_commit_publishes(
    any_graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    """Paused at every KV call of a commit: staging, then sealed, then consumed; never dropped."""
    graveler = any_graveler
    graveler.set(repo, "main", b"a", value("1"))
    token = graveler.get_branch(repo, "main").staging_token
    seen: list[str] = []
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)

    def observe(call: object = None) -> None:
        seen.append(graveler.references.token_states(repo, [token])[token])

    run_paused(
        stepping,
        lambda: paused.commit(repo, "main", committer="t", message="m"),
        at_each_call=observe,
    )
    observe()
    # staging until the seal, sealed until the publish, consumed after: never "dropped".
    assert "dropped" not in seen
    states = [s for i, s in enumerate(seen) if i == 0 or s != seen[i - 1]]
    assert states == ["staging", "sealed", "consumed"]


def test_a_commit_that_loses_to_a_hard_reset_leaves_a_stale_record_only(
    any_graveler: Graveler, repo: Repository
) -> None:
    """The record is written before the publish; losing it makes the token consumed-looking."""
    graveler = any_graveler
    graveler.set(repo, "main", b"a", value("1"))
    token = graveler.get_branch(repo, "main").staging_token
    Refs(graveler.store).record_consumed(repo, [token], "0" * 64)
    graveler.resets.reset_hard(repo, "main", "main")
    assert graveler.references.token_states(repo, [token]) == {token: "consumed"}
