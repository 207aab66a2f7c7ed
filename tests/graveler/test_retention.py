"""Retained commits: which commits garbage collection rules keep, on histories of known ages.

The history below is built with real graveler operations (commits, branches, a
merge, a deleted branch, a hard reset) while a fake clock moves a day at a
time, so each commit's age is known exactly. Generated histories are checked
against a plain reference walk that has none of the engine's shortcuts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler import DAY, GarbageCollectionRules, make_rules
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Commit, Repository
from kvlake.kv import Store
from tests.graveler.helpers import add_commit, make_graveler, value
from tests.graveler.stepping import paused_graveler, run_paused
from tests.support import FakeClock


@dataclass
class History:
    repo: Repository
    ids: dict[str, str]
    """Commit label -> commit id."""
    now: float

    def labels(self, commit_ids: set[str]) -> set[str]:
        by_id = {commit_id: label for label, commit_id in self.ids.items()}
        return {by_id[commit_id] for commit_id in commit_ids}


def _commit(graveler: Graveler, repo: Repository, branch: str, text: str) -> str:
    graveler.set(repo, branch, text.encode(), value(text))
    return graveler.commit(repo, branch, committer="t", message=text)


def build_history(graveler: Graveler, clock: FakeClock, namespace: str) -> History:
    """Day 0 is the repository's creation; `now` is day 20. Labels and days:

        r(0) <- c1(1) <- c2(2) <------ m(5) <- c3(10)         main = c3
                  \\                   /   \\      \\
                   f1(3) <- f2(4) ----'     e1(7)  k1(11)     keep = k1
                   (feature, deleted)        \\
                                              e2(8)           exp hard-reset to m

    First parents run right to left; m's second parent is f2. Dangling: f2 (a
    merged, deleted branch's tip) and e2 (left behind by the hard reset).
    """
    start = clock.now
    ids: dict[str, str] = {}

    def at(day: int) -> None:
        clock.now = start + day * DAY

    repo = graveler.create_repository("retained", storage_namespace=namespace)
    ids["r"] = graveler.get_branch(repo, "main").commit_id
    at(1)
    ids["c1"] = _commit(graveler, repo, "main", "c1")
    at(2)
    graveler.create_branch(repo, "feature", "main")
    ids["c2"] = _commit(graveler, repo, "main", "c2")
    at(3)
    ids["f1"] = _commit(graveler, repo, "feature", "f1")
    at(4)
    ids["f2"] = _commit(graveler, repo, "feature", "f2")
    at(5)
    ids["m"] = graveler.merges.merge(repo, "feature", "main", committer="t", message="m")
    at(6)
    graveler.delete_branch(repo, "feature")
    at(7)
    graveler.create_branch(repo, "exp", "main")
    ids["e1"] = _commit(graveler, repo, "exp", "e1")
    at(8)
    ids["e2"] = _commit(graveler, repo, "exp", "e2")
    at(9)
    graveler.resets.reset_hard(repo, "exp", ids["m"])
    at(10)
    ids["c3"] = _commit(graveler, repo, "main", "c3")
    at(11)
    graveler.create_branch(repo, "keep", "main")
    ids["k1"] = _commit(graveler, repo, "keep", "k1")
    at(20)
    return History(repo=repo, ids=ids, now=clock.now)


def retained(graveler: Graveler, history: History, rules: GarbageCollectionRules) -> set[str]:
    found = list(graveler.retention.retained_commits(history.repo, history.now, rules=rules))
    commit_ids = [r.commit_id for r in found]
    assert len(commit_ids) == len(set(commit_ids)), "each commit is yielded once"
    for record in found:
        commit = graveler.get_commit(history.repo, record.commit_id)
        assert record.metarange_id == commit.metarange_id
    return history.labels(set(commit_ids))


HEADS = {"c3", "m", "k1"}

CASES = [
    pytest.param(make_rules(0), HEADS, id="0 days: only heads"),
    pytest.param(
        make_rules(12), HEADS, id="12 days: e2 exactly at the threshold expires, c3's parent m"
    ),
    pytest.param(make_rules(13), HEADS | {"e2", "e1"}, id="13 days: dangling e2 and its parent"),
    pytest.param(
        make_rules(0, {"main": 17}),
        HEADS | {"c2"},
        id="main 17 days: first parents only, f1 f2 not kept",
    ),
    pytest.param(
        make_rules(17),
        HEADS | {"c2", "e2", "e1", "f2", "f1"},
        id="17 days: dangling f2's line until and including f1",
    ),
    pytest.param(
        make_rules(17, {"main": 0, "exp": 0}),
        HEADS | {"c2", "e2", "e1", "f2", "f1"},
        id="a shorter branch rule loses to a longer one on a shared line",
    ),
    pytest.param(
        make_rules(0, {"keep": 10}), HEADS, id="keep 10 days: k1 at day 11 is young, c3 kept"
    ),
    pytest.param(
        make_rules(18), HEADS | {"c2", "c1", "e2", "e1", "f2", "f1"}, id="18 days: c1 too"
    ),
    pytest.param(make_rules(100), HEADS | {"r", "c1", "c2", "e1", "e2", "f1", "f2"}, id="all"),
]


@pytest.mark.parametrize(("rules", "expected"), CASES)
def test_retained_commits_follow_the_rules(
    any_graveler: Graveler,
    clock: FakeClock,
    rules: GarbageCollectionRules,
    expected: set[str],
    namespace: str,
) -> None:
    history = build_history(any_graveler, clock, namespace)
    assert retained(any_graveler, history, rules) == expected


def test_a_branch_rule_keeps_its_line_back_to_the_first_old_commit(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    history = build_history(graveler, clock, namespace)
    # keep: 10 days, threshold day 10: k1 (day 11) is young, so c3 is kept as the first
    # commit at or before the threshold, and the walk stops there (m is only a head).
    rules = make_rules(0, {"keep": 10})
    assert retained(graveler, history, rules) == HEADS
    rules = make_rules(0, {"keep": 11})  # threshold day 9: c3 (day 10) is young, so m
    assert retained(graveler, history, rules) == HEADS
    rules = make_rules(0, {"keep": 16})  # threshold day 4: k1, c3, m young; c2 is the first old
    assert retained(graveler, history, rules) == HEADS | {"c2"}


def test_heads_are_kept_whatever_their_age(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    repo = graveler.create_repository("old-heads", storage_namespace=namespace)
    first = graveler.get_branch(repo, "main").commit_id
    graveler.create_branch(repo, "hidden-one", "main", hidden=True)
    clock.advance(1)
    hidden = _commit(graveler, repo, "hidden-one", "h")
    clock.advance(400 * DAY)
    found = graveler.retention.retained_commits(repo, clock.now, rules=make_rules(0))
    assert {r.commit_id for r in found} == {first, hidden}


def test_stored_rules_are_used_and_missing_rules_refuse(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    history = build_history(graveler, clock, namespace)
    with pytest.raises(NotFoundError, match="no garbage collection rules"):
        list(graveler.retention.retained_commits(history.repo, history.now))
    graveler.retention.set_rules(history.repo, make_rules(13))
    found = graveler.retention.retained_commits(history.repo, history.now)
    assert history.labels({r.commit_id for r in found}) == HEADS | {"e2", "e1"}


def test_now_may_be_an_aware_datetime_but_not_a_naive_one(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    history = build_history(graveler, clock, namespace)
    rules = make_rules(13)
    moment = datetime.fromtimestamp(history.now, tz=timezone(timedelta(hours=5)))
    found = graveler.retention.retained_commits(history.repo, moment, rules=rules)
    assert history.labels({r.commit_id for r in found}) == HEADS | {"e2", "e1"}
    naive = datetime.fromtimestamp(history.now, tz=UTC).replace(tzinfo=None)
    with pytest.raises(InvalidInputError, match="no timezone"):
        graveler.retention.retained_commits(history.repo, naive, rules=rules)
    with pytest.raises(InvalidInputError, match="not a time"):
        graveler.retention.retained_commits(history.repo, float("nan"), rules=rules)


def test_list_commits_streams_every_commit_record(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    history = build_history(graveler, clock, namespace)
    listed = list(graveler.retention.list_commits(history.repo))
    assert [r.id for r in listed] == sorted(history.ids.values())
    for record in listed:
        assert record.commit == graveler.get_commit(history.repo, record.id)


def test_a_commit_published_before_the_walk_reads_the_branches_is_retained(
    graveler: Graveler, clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    """Whatever KV call up to the commit and branch scans a commit lands before, the new head
    is retained (once both are read, a new commit is the mark phase's: its data was staged)."""
    history = build_history(graveler, clock, namespace)
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    rules = make_rules(0)

    def walk() -> set[str]:
        found = paused.retention.retained_commits(history.repo, history.now, rules=rules)
        return {r.commit_id for r in found}

    first = len(stepping.calls)
    run_paused(stepping, walk)
    keys = [c.key or b"" for c in stepping.calls[first:]]
    scans = [i for i, key in enumerate(keys) if key in (b"branches/", b"commits/")]
    assert len(scans) == 2
    for index in range(max(scans) + 1):
        made: list[str] = []

        def intruder(made: list[str] = made, text: str = f"x{index}") -> None:
            made.append(_commit(graveler, history.repo, "main", text))

        kept = run_paused(stepping, walk, at_call=index, intruder=intruder)
        assert made[0] in kept, f"new head expired when committed before call {index}"


# -- generated histories against a reference walk -------------------------------------


def reference(
    commits: dict[str, Commit], heads: dict[str, str], rules: GarbageCollectionRules, now: float
) -> set[str]:
    """Every starting point walked on its own, no shortcuts: the rule as the docs state it."""
    first_parents = {c.parents[0] for c in commits.values() if c.parents}
    kept: set[str] = set()

    def walk(start: str, threshold: float, *, head: bool) -> None:
        if not head and commits[start].creation_date <= threshold:
            return
        kept.add(start)
        current = start
        while commits[current].creation_date > threshold and commits[current].parents:
            current = commits[current].parents[0]
            kept.add(current)

    for branch, commit_id in heads.items():
        days = rules.branch_retention_days.get(branch, rules.default_retention_days)
        walk(commit_id, now - days * DAY, head=True)
    for commit_id in commits:
        if commit_id not in first_parents and commit_id not in heads.values():
            walk(commit_id, now - rules.default_retention_days * DAY, head=False)
    return kept


def generate(
    graveler: Graveler, seed: int, namespace: str
) -> tuple[Repository, dict[str, str], float]:
    """A random history: commits on random parents (some merges), dates that mostly grow."""
    rng = random.Random(seed)
    repo = graveler.create_repository(f"gen-{seed}", storage_namespace=f"{namespace}-{seed}")
    root = graveler.get_branch(repo, "main").commit_id
    ids = [root]
    dates = {root: 1_750_000_000}
    for _ in range(rng.randint(5, 60)):
        parents = [rng.choice(ids[-8:]) if rng.random() < 0.7 else rng.choice(ids)]
        if rng.random() < 0.2:
            parents.append(rng.choice(ids))
        newest = max(dates[p] for p in parents)
        date = newest + rng.randint(-1, 3) * DAY // 2  # sometimes older than a parent
        commit_id = add_commit(graveler, repo, list(dict.fromkeys(parents)), date=date)
        if commit_id not in dates:
            ids.append(commit_id)
            dates[commit_id] = date
    heads = {"main": graveler.get_branch(repo, "main").commit_id}
    for n in range(rng.randint(0, 5)):
        heads[f"b{n}"] = rng.choice(ids)
        graveler.create_branch(repo, f"b{n}", heads[f"b{n}"], hidden=rng.random() < 0.3)
    return repo, heads, max(dates.values()) + rng.randint(0, 10) * DAY


@pytest.mark.parametrize("seed", range(40))
def test_generated_histories_match_the_reference_walk(
    graveler: Graveler, seed: int, namespace: str
) -> None:
    repo, heads, now = generate(graveler, seed, namespace)
    commits = {r.id: r.commit for r in graveler.retention.list_commits(repo)}
    rng = random.Random(seed * 7919)
    for _ in range(4):
        branch_days = {b: rng.randint(0, 12) for b in heads if rng.random() < 0.5}
        rules = make_rules(rng.randint(0, 12), branch_days)
        found = [r.commit_id for r in graveler.retention.retained_commits(repo, now, rules=rules)]
        assert len(found) == len(set(found))
        assert set(found) == reference(commits, heads, rules, now), rules


def test_retained_commits_on_every_store(
    any_store: Store, clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    graveler = make_graveler(any_store, clock, lake_blocks)
    repo, heads, now = generate(graveler, 1234, namespace)
    commits = {r.id: r.commit for r in graveler.retention.list_commits(repo)}
    rules = make_rules(3, {"main": 1})
    found = {r.commit_id for r in graveler.retention.retained_commits(repo, now, rules=rules)}
    assert found == reference(commits, heads, rules, now)
