"""The visible-branch index under every interleaving of a creation with a deletion of the
same name and with a listing (kvlake/graveler/refs/visible.py): whatever the order of
their KV calls, a visible branch that exists afterwards has its key in the index, so
listings never lose it. The creation writes the key before its record and, after the
record, writes it again only if it is gone; that read must not let a key taken out in
between stay out."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.errors import ConflictError, NotFoundError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler
from tests.interleavings.scheduler import (
    Check,
    Outcome,
    Scenario,
    Scheduler,
    SteppingStore,
    explore,
)
from tests.support import FakeClock


def _lake(scheduler: Scheduler) -> tuple[MemoryStore, Graveler, Repository]:
    inner = MemoryStore()
    graveler = make_graveler(SteppingStore(inner, scheduler), FakeClock(), MemoryBlockStore())
    repo = graveler.create_repository("repo1", storage_namespace="mem://b/repo1")
    return inner, graveler, repo


def _check_keys(inner: MemoryStore, repo: Repository) -> Check:
    def check(outcomes: list[Outcome]) -> None:
        for outcome in outcomes:  # a lost race is a conflict or a not-found, nothing else
            if outcome.error is not None:
                assert isinstance(outcome.error, (ConflictError, NotFoundError)), outcome.error
        index = keys.visible_branches_partition(repo.name, repo.instance_uid)
        with inner.scan(index) as scan:
            indexed = {key.decode() for key, _ in scan}
        with inner.scan(keys.instance_partition(repo.name, repo.instance_uid)) as scan:
            branches = {
                key[len(keys.BRANCH_PREFIX) :].decode()
                for key, _ in scan
                if key.startswith(keys.BRANCH_PREFIX)
            }
        assert branches <= indexed, f"branches {branches - indexed} lost their index keys"

    return check


def _creation_and_deletion(scheduler: Scheduler) -> tuple[list[Callable[[], object]], Check]:
    inner, graveler, repo = _lake(scheduler)
    graveler.create_branch(repo, "dev", "main")
    operations: list[Callable[[], object]] = [
        lambda: graveler.delete_branch(repo, "dev"),
        lambda: graveler.create_branch(repo, "dev", "main"),
    ]
    return operations, _check_keys(inner, repo)


def _creation_and_listing(scheduler: Scheduler) -> tuple[list[Callable[[], object]], Check]:
    inner, graveler, repo = _lake(scheduler)
    graveler.list_branches(repo, visible_only=True)  # the index built before the race
    operations: list[Callable[[], object]] = [
        lambda: graveler.create_branch(repo, "dev", "main"),
        lambda: list(graveler.list_branches(repo, visible_only=True)),
    ]
    return operations, _check_keys(inner, repo)


SCENARIOS: dict[str, Scenario] = {
    "creation-and-deletion": _creation_and_deletion,
    "creation-and-listing": _creation_and_listing,
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_no_interleaving_leaves_a_visible_branch_without_its_key(name: str) -> None:
    assert explore(SCENARIOS[name], seed=3, limit=200, shuffled=40) > 20
