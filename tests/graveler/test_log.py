"""Commit logs against a model: order, pages, first parent, since, paths, and the cache."""

from __future__ import annotations

import random

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import InvalidInputError, RefNotFoundError
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository
from kvlake.kv.faults import FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import add_commit, make_graveler, value
from tests.support import FakeClock


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def _random_dag(
    graveler: Graveler, repo: Repository, rng: random.Random, size: int
) -> dict[str, tuple[tuple[str, ...], int, int]]:
    """Commits with random parents and dates, three to a date to exercise ties."""
    model: dict[str, tuple[tuple[str, ...], int, int]] = {}
    ids: list[str] = []
    for n in range(size):
        chosen = [] if not ids else rng.sample(ids, k=min(len(ids), rng.choice([1, 1, 2])))
        date = 1000 + n // 3
        commit_id = add_commit(graveler, repo, chosen, message=str(n), date=date)
        generation = 1 + max((model[p][2] for p in chosen), default=0)
        model[commit_id] = (tuple(chosen), date, generation)
        ids.append(commit_id)
    return model


def _expected(
    model: dict[str, tuple[tuple[str, ...], int, int]], head: str, *, first_parent: bool = False
) -> list[str]:
    seen = {head}
    stack = [head]
    while stack:
        parents = model[stack.pop()][0]
        for parent in parents[:1] if first_parent else parents:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return sorted(seen, key=lambda c: (model[c][1], model[c][2], c), reverse=True)


@pytest.mark.parametrize("seed", range(5))
def test_log_lists_reachable_commits_newest_first_then_by_generation_then_id(
    graveler: Graveler, repo: Repository, seed: int
) -> None:
    rng = random.Random(seed)
    model = _random_dag(graveler, repo, rng, 60)
    head = list(model)[-1]
    page = graveler.history.log(repo, head, amount=1000)
    assert [r.id for r in page.commits] == _expected(model, head)
    assert not page.has_more
    first = graveler.history.log(repo, head, amount=1000, first_parent=True)
    assert [r.id for r in first.commits] == _expected(model, head, first_parent=True)


def test_a_commit_comes_before_its_parent_when_both_share_a_second(
    graveler: Graveler, repo: Repository
) -> None:
    root = add_commit(graveler, repo, [], date=5)
    children = [add_commit(graveler, repo, [root], message=str(n), date=5) for n in range(6)]
    head = add_commit(graveler, repo, children, date=5)
    got = [r.id for r in graveler.history.log(repo, head).commits]
    assert got == [head, *sorted(children, reverse=True), root]


def test_pages_chain_through_next_offset_and_limit_stops_paging(
    graveler: Graveler, repo: Repository
) -> None:
    model = _random_dag(graveler, repo, random.Random(7), 45)
    head = list(model)[-1]
    expected = _expected(model, head)
    got: list[str] = []
    after = ""
    while True:
        page = graveler.history.log(repo, head, after=after, amount=10)
        got += [r.id for r in page.commits]
        if not page.has_more:
            break
        assert page.next_offset.split("-")[0] == got[-1]  # a cursor starting at the last id
        after = page.next_offset
    assert got == expected
    limited = graveler.history.log(repo, head, amount=10, limit=True)
    assert [r.id for r in limited.commits] == expected[:10]
    assert (limited.has_more, limited.next_offset) == (False, "")
    exact = graveler.history.log(repo, head, amount=len(expected))
    assert not exact.has_more  # exactly as many as there are: no empty last page


def test_since_stops_at_the_first_older_commit(graveler: Graveler, repo: Repository) -> None:
    root = add_commit(graveler, repo, [], date=100)
    one = add_commit(graveler, repo, [root], date=200)
    two = add_commit(graveler, repo, [one], date=300)
    assert [r.id for r in graveler.history.log(repo, two, since=200).commits] == [two, one]
    assert [r.id for r in graveler.history.log(repo, two, since=301).commits] == []


def test_paths_and_prefixes_keep_only_commits_that_touched_them(
    graveler: Graveler, repo: Repository, clock: FakeClock
) -> None:
    commits = {}
    for name, key in [("a", b"docs/a"), ("b", b"src/b"), ("c", b"docs/c"), ("d", b"src/b")]:
        clock.advance(1)
        graveler.set(repo, "main", key, value(name))
        commits[name] = graveler.commit(repo, "main", committer="t", message=name)
    clock.advance(1)
    graveler.set(repo, "main", b"src/b", value("d"))  # same content again
    graveler.set(repo, "main", b"other", value("e"))
    commits["e"] = graveler.commit(repo, "main", committer="t", message="e")

    def ids(**options: list[bytes]) -> list[str]:
        return [r.commit.message for r in graveler.history.log(repo, "main", **options).commits]  # type: ignore[arg-type]

    assert ids(paths=[b"src/b"]) == ["d", "b"]
    assert ids(prefixes=[b"docs/"]) == ["c", "a"]
    assert ids(paths=[b"src/b"], prefixes=[b"docs/"]) == ["d", "c", "b", "a"]
    assert ids(paths=[b"nothing"]) == []
    graveler.delete(repo, "main", b"docs/a")
    clock.advance(1)
    graveler.commit(repo, "main", committer="t", message="f")
    assert ids(prefixes=[b"docs/"], amount=1) == ["f"]  # type: ignore[arg-type]


def _counted_line(
    count: int, blocks: BlockStore, namespace: str
) -> tuple[FaultyStore, Repository, str]:
    """A line of `count` commits over a store that records its calls; the head's id."""
    store = FaultyStore(MemoryStore())
    graveler = make_graveler(store, FakeClock(), blocks)
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    head = graveler.get_branch(repo, "main").commit_id
    for n in range(count):
        head = add_commit(graveler, repo, [head], message=str(n))
    return store, repo, head


def _commit_reads(store: FaultyStore) -> int:
    """Commit records asked for, one by one or in batches (only commits are batched here)."""
    one_by_one = sum(1 for c in store.calls if c.key and c.key.startswith(b"commits/"))
    return one_by_one + sum(c.size or 0 for c in store.calls if c.op == "get_many")


def test_a_second_log_reads_commits_from_the_cache(lake_blocks: BlockStore, namespace: str) -> None:
    store, repo, head = _counted_line(30, lake_blocks, namespace)
    fresh = make_graveler(store, FakeClock(), lake_blocks)  # an empty cache
    before = _commit_reads(store)
    assert len(fresh.history.log(repo, head, amount=1000).commits) == 31
    assert _commit_reads(store) - before == 31
    assert len(fresh.history.log(repo, head, amount=1000).commits) == 31
    assert _commit_reads(store) - before == 31


@pytest.mark.parametrize(
    "options",
    [
        {"amount": 0},
        {"amount": 1001},
        {"after": "not-a-commit"},
        {"after": "a" * 64 + "-notacommit"},
        {"paths": [b""]},
        {"prefixes": [""]},
        {"paths": b"single"},
    ],
)
def test_bad_log_arguments_are_invalid_input(
    graveler: Graveler, repo: Repository, options: dict[str, object]
) -> None:
    with pytest.raises(InvalidInputError):
        graveler.history.log(repo, "main", **options)  # type: ignore[arg-type]


def test_log_of_unknown_ref_is_not_found(graveler: Graveler, repo: Repository) -> None:
    with pytest.raises(RefNotFoundError):
        graveler.history.log(repo, "nope")


def _backbone_dag(graveler: Graveler, repo: Repository, size: int, seed: int) -> list[str]:
    """A line of commits, each also merging a random older one now and then."""
    rng = random.Random(seed)
    ids = [graveler.get_branch(repo, "main").commit_id]
    root_date = graveler.get_commit(repo, ids[0]).creation_date
    for n in range(size):
        parents = [ids[-1]]
        if len(ids) > 3 and rng.random() < 0.3:
            parents.append(rng.choice(ids[:-1]))
        date = root_date + 1 + n // 3  # three to a second: ties broken by generation and id
        ids.append(add_commit(graveler, repo, parents, message=str(n), date=date))
    return ids


def _pages(
    graveler: Graveler, repo: Repository, head: str, amount: int, **options: object
) -> list[str]:
    got: list[str] = []
    after = ""
    while True:
        page = graveler.history.log(repo, head, after=after, amount=amount, **options)  # type: ignore[arg-type]
        got += [r.id for r in page.commits]
        if not page.has_more:
            return got
        after = page.next_offset


@pytest.mark.parametrize("first_parent", [False, True])
def test_cursor_pages_list_exactly_what_one_walk_lists(
    graveler: Graveler, repo: Repository, first_parent: bool
) -> None:
    head = _backbone_dag(graveler, repo, 120, seed=3)[-1]
    whole = graveler.history.log(repo, head, amount=1000, first_parent=first_parent)
    expected = [r.id for r in whole.commits]
    for amount in (1, 7, 50):
        assert _pages(graveler, repo, head, amount, first_parent=first_parent) == expected


def test_a_plain_commit_id_still_pages_after_it(graveler: Graveler, repo: Repository) -> None:
    ids = _backbone_dag(graveler, repo, 30, seed=4)
    expected = [r.id for r in graveler.history.log(repo, ids[-1], amount=1000).commits]
    page = graveler.history.log(repo, ids[-1], after=expected[9], amount=5)
    assert [r.id for r in page.commits] == expected[10:15]


def test_each_page_reads_its_own_commits_not_the_history_before_it(
    lake_blocks: BlockStore, namespace: str
) -> None:
    """Issue 9 item 8: paging with `after` re-walked the history from the ref."""
    store, repo, head = _counted_line(400, lake_blocks, namespace)
    reads: list[int] = []
    after = ""
    for _ in range(7):
        fresh = make_graveler(
            store, FakeClock(), lake_blocks
        )  # a cold cache: every read is counted
        before = _commit_reads(store)
        page = fresh.history.log(repo, head, after=after, amount=50)
        reads.append(_commit_reads(store) - before)
        after = page.next_offset
    assert max(reads) <= 50 + 3, reads  # the page, its frontier and the previous last


@pytest.mark.parametrize("later", ["left", "right"])
def test_commits_made_in_one_second_log_in_the_order_they_were_made(
    graveler: Graveler, repo: Repository, clock: FakeClock, later: str
) -> None:
    """lakeFS orders a log by sub-second commit times: two branches' commits made in one
    second and then merged log newest first, whichever id sorts higher. Both orders are
    tried with the same contents (so the same ids): whole seconds would log one wrongly."""
    for name in ("left", "right"):
        graveler.create_branch(repo, name, "main")
    clock.now = 1_750_000_100.0
    made = {}
    for name in ("right", "left") if later == "left" else ("left", "right"):
        clock.advance(0.25)
        graveler.set(repo, name, name.encode(), value(name))
        made[name] = graveler.commit(repo, name, committer="t", message=name)
    clock.advance(0.25)
    merge = graveler.merges.merge(repo, "right", "left", committer="t")
    earlier = "right" if later == "left" else "left"
    logged = [record.id for record in graveler.history.log(repo, "left").commits]
    assert logged[:3] == [merge, made[later], made[earlier]]
