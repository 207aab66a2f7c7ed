"""The writer flow against commits, step by step (invariants 2 and 3).

Each test pauses one operation at every KV call it makes and runs the other
there, inline, so every interleaving point is tried and nothing depends on
thread timing.
"""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import NoChangesError
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository, Value
from kvlake.kv.faults import Call
from tests.graveler.helpers import value
from tests.graveler.stepping import calls_of, paused_graveler, run_paused
from tests.support import FakeClock


@pytest.fixture
def repo(any_graveler: Graveler, namespace: str) -> Repository:
    return any_graveler.create_repository("repo1", storage_namespace=namespace)


def _commit(graveler: Graveler, repo: Repository) -> None:
    try:
        graveler.commit(repo, "main", committer="t", message="m")
    except NoChangesError:
        pass


def test_a_commit_at_any_point_of_a_write_loses_nothing(
    any_graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    """Invariant 2: the write re-reads the branch and writes again after a seal."""
    graveler = any_graveler
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    graveler.set(repo, "main", b"base", value("0"))
    total = calls_of(stepping, lambda: paused.set(repo, "main", b"probe", value("p")))
    for n in range(total):
        key = b"k%d" % n
        graveler.set(repo, "main", b"filler", value(str(n)))  # so the commit has work to do
        written = value(str(n))
        run_paused(
            stepping,
            lambda key=key, written=written: paused.set(repo, "main", key, written),  # type: ignore[misc]
            at_call=n,
            intruder=lambda: _commit(graveler, repo),
        )
        assert graveler.get(repo, "main", key) == value(str(n)), n
        _commit(graveler, repo)
        branch = graveler.get_branch(repo, "main")
        assert graveler.get(repo, branch.commit_id, key) == value(str(n)), n
        assert branch.sealed_tokens == ()


def test_a_write_finishes_while_a_commit_is_paused_at_any_call(
    any_graveler: Graveler, repo: Repository, clock: FakeClock, lake_blocks: BlockStore
) -> None:
    """Invariant 3: a paused commit never holds a writer up; a write costs at most
    two single-key updates (its write, and one more after a seal)."""
    graveler = any_graveler
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    writer, counting = paused_graveler(graveler, clock, lake_blocks)
    acknowledged: dict[bytes, str] = {}

    def write_now(call: Call) -> None:
        key = b"w%d" % call.index
        before = len(counting.calls)
        writer.set(repo, "main", key, value(key.decode()))
        acknowledged[key] = key.decode()
        writes = [
            c
            for c in counting.calls[before:]
            if c.op in ("set", "set_if") and c.partition and c.partition.startswith(b"staging/")
        ]
        assert len(writes) <= 2, (call, writes)

    graveler.set(repo, "main", b"base", value("0"))
    head = run_paused(
        stepping,
        lambda: paused.commit(repo, "main", committer="t", message="m"),
        at_each_call=write_now,
    )
    assert len(acknowledged) >= 5  # the commit was paused at each of its calls
    final = graveler.commit(repo, "main", committer="t", message="rest", allow_empty=True)
    assert head in _ancestry(graveler, repo, final)
    for key, text in acknowledged.items():
        assert graveler.get(repo, final, key) == value(text), key
    assert graveler.get_branch(repo, "main").sealed_tokens == ()


def _ancestry(graveler: Graveler, repo: Repository, head: str) -> list[str]:
    found = [head]
    while parents := graveler.get_commit(repo, found[-1]).parents:
        found.append(parents[0])
    return found


def _suffixed(old: Value) -> Value:
    """Idempotent, as an update's change must be: a seal may make it run on its own result."""
    return value(old.data.decode().removesuffix("+u") + "+u")


@pytest.mark.parametrize("intruder", ["write", "commit"])
def test_an_update_changes_whatever_a_racing_write_left_at_any_call(
    any_graveler: Graveler,
    repo: Repository,
    clock: FakeClock,
    lake_blocks: BlockStore,
    intruder: str,
) -> None:
    """An update is a compare-and-swap on what it read: a write racing it is changed, never
    replaced by a change of the value it overwrote (lakeFS's `Update`); a commit racing it
    leaves the change staged."""
    graveler = any_graveler
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    graveler.set(repo, "main", b"probe", value("p"))
    total = calls_of(stepping, lambda: paused.update(repo, "main", b"probe", _suffixed))
    for n in range(total):
        key = b"k%d" % n
        graveler.set(repo, "main", key, value("old"))
        if intruder == "commit":
            run = lambda: _commit(graveler, repo)  # noqa: E731
        else:
            run = lambda key=key: graveler.set(repo, "main", key, value("new"))  # type: ignore[misc]  # noqa: E731
        run_paused(
            stepping,
            lambda key=key: paused.update(repo, "main", key, _suffixed),  # type: ignore[misc]
            at_call=n,
            intruder=run,
        )
        got = graveler.get(repo, "main", key).data
        if intruder == "commit":
            assert got == b"old+u", n
        else:
            assert got in (b"new+u", b"new"), (n, got)
