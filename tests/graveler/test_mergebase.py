"""Merge base against a model: the best common ancestors of random histories."""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvlake.blockstore import BlockStore
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.history.mergebase import find_merge_base
from kvlake.graveler.records import Repository
from kvlake.graveler.refs.store import Refs
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import add_commit, make_graveler
from tests.support import FakeClock, backends
from tests.support.backends import examples


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def _ancestors(parents: dict[str, tuple[str, ...]], commit: str) -> set[str]:
    """The commit and everything reachable from it."""
    seen = {commit}
    stack = [commit]
    while stack:
        for parent in parents[stack.pop()]:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


def _best_common_ancestors(parents: dict[str, tuple[str, ...]], a: str, b: str) -> set[str]:
    common = _ancestors(parents, a) & _ancestors(parents, b)
    return {c for c in common if not any(c in _ancestors(parents, o) - {o} for o in common)}


def test_linear_history_base_is_the_older_commit(graveler: Graveler, repo: Repository) -> None:
    root = add_commit(graveler, repo, [])
    one = add_commit(graveler, repo, [root])
    two = add_commit(graveler, repo, [one])
    assert find_merge_base(Refs(graveler.store), repo, one, two) == one
    assert find_merge_base(Refs(graveler.store), repo, two, one) == one
    assert find_merge_base(Refs(graveler.store), repo, two, two) == two


def test_forked_history_base_is_the_fork_point_even_after_merges(
    graveler: Graveler, repo: Repository
) -> None:
    root = add_commit(graveler, repo, [])
    fork = add_commit(graveler, repo, [root])
    left = add_commit(graveler, repo, [fork], message="l")
    right = add_commit(graveler, repo, [fork], message="r")
    assert find_merge_base(Refs(graveler.store), repo, left, right) == fork
    merged = add_commit(graveler, repo, [left, right])  # right merged into left
    right2 = add_commit(graveler, repo, [right], message="r2")
    assert find_merge_base(Refs(graveler.store), repo, merged, right2) == right


def test_criss_cross_merges_have_two_best_bases_and_one_is_chosen_stably(
    graveler: Graveler, repo: Repository
) -> None:
    root = add_commit(graveler, repo, [])
    a = add_commit(graveler, repo, [root], message="a")
    b = add_commit(graveler, repo, [root], message="b")
    a2 = add_commit(graveler, repo, [a, b], message="a2")  # b merged into a
    b2 = add_commit(graveler, repo, [b, a], message="b2")  # a merged into b
    base = find_merge_base(Refs(graveler.store), repo, a2, b2)
    assert base in {a, b}
    assert find_merge_base(Refs(graveler.store), repo, b2, a2) == base
    assert base == max(a, b)  # equal generation and date: the highest id wins


def test_unrelated_roots_have_no_merge_base(graveler: Graveler, repo: Repository) -> None:
    first = add_commit(graveler, repo, [], message="1")
    second = add_commit(graveler, repo, [], message="2")
    one = add_commit(graveler, repo, [first])
    two = add_commit(graveler, repo, [second])
    assert find_merge_base(Refs(graveler.store), repo, one, two) is None


def test_merge_base_of_refs_through_the_facade(graveler: Graveler, repo: Repository) -> None:
    root = graveler.get_branch(repo, "main").commit_id
    graveler.create_branch(repo, "dev", "main")
    graveler.commit(repo, "dev", committer="t", message="d", allow_empty=True)
    graveler.commit(repo, "main", committer="t", message="m", allow_empty=True)
    assert graveler.merges.merge_base(repo, "main", "dev") == root
    assert graveler.merges.merge_base(repo, "main~1", "dev") == root


# The examples (a tenth of them on S3: `examples`) share the test's blockstore, each with a
# fresh store and a namespace of its own there: no example sees another's files.
def test_random_histories_match_the_model(lake_blocks: BlockStore) -> None:
    @settings(
        max_examples=examples(lake_blocks, 60),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(seed=st.integers(0, 2**32), size=st.integers(2, 40), roots=st.integers(1, 3))
    def check(seed: int, size: int, roots: int) -> None:
        rng = random.Random(seed)
        graveler = make_graveler(MemoryStore(), FakeClock(), lake_blocks)
        namespace = backends.namespace(lake_blocks, uuid.uuid4().hex)
        repo = graveler.create_repository("repo1", storage_namespace=namespace)
        parents: dict[str, tuple[str, ...]] = {}
        ids: list[str] = []
        for n in range(size):
            if n < roots:
                chosen: list[str] = []
            else:
                chosen = rng.sample(ids, k=min(len(ids), rng.choice([1, 1, 1, 2, 2, 3])))
            commit_id = add_commit(graveler, repo, chosen, message=str(n), date=rng.randrange(5))
            parents[commit_id] = tuple(chosen)
            ids.append(commit_id)
        for _ in range(10):
            a, b = rng.choice(ids), rng.choice(ids)
            base = find_merge_base(Refs(graveler.store), repo, a, b)
            best = _best_common_ancestors(parents, a, b)
            if not best:
                assert base is None
            else:
                assert base in best
                assert find_merge_base(Refs(graveler.store), repo, b, a) == base

    check()
