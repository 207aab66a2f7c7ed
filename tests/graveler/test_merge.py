"""Three-way merges: every kind of overlap, strategies, merge commits, and their cost."""

from __future__ import annotations

import random

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import (
    BranchNotFoundError,
    DirtyBranchError,
    InvalidInputError,
    MergeConflictError,
    NoChangesError,
    RefNotFoundError,
)
from kvlake.graveler.committed import Chunking, CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository, Value
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import (
    add_commit,
    all_keys,
    contents,
    make_graveler,
    stage_many,
    value,
)
from tests.support import FakeClock


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def _commit(graveler: Graveler, repo: Repository, branch: str, changes: dict[str, str]) -> str:
    """Apply changes ("" deletes) and commit."""
    for key, text in changes.items():
        if text:
            graveler.set(repo, branch, key.encode(), value(text))
        else:
            graveler.delete(repo, branch, key.encode())
    return graveler.commit(repo, branch, committer="t", message="c", allow_empty=True)


# base value, source change, destination change ("" deletes, None leaves alone)
OVERLAPS = {
    "both add different": (None, "s", "d", True),
    "both add the same": (None, "x", "x", False),
    "both change differently": ("b", "s", "d", True),
    "both change the same": ("b", "x", "x", False),
    "change vs delete": ("b", "s", "", True),
    "delete vs change": ("b", "", "d", True),
    "both delete": ("b", "", "", False),
    "source only changes": ("b", "s", None, False),
    "destination only changes": ("b", None, "d", False),
    "source only adds": (None, "s", None, False),
    "source only deletes": ("b", "", None, False),
}


def _overlap(graveler: Graveler, repo: Repository) -> None:
    """One key per overlap kind, changed on `src` and `main` from a common base."""
    _commit(graveler, repo, "main", {k: b for k, (b, _, _, _) in OVERLAPS.items() if b})
    graveler.create_branch(repo, "src", "main")
    _commit(graveler, repo, "src", {k: s for k, (_, s, _, _) in OVERLAPS.items() if s is not None})
    _commit(graveler, repo, "main", {k: d for k, (_, _, d, _) in OVERLAPS.items() if d is not None})


def test_every_kind_of_overlapping_change_is_a_conflict_unless_both_agree(
    graveler: Graveler, repo: Repository
) -> None:
    _overlap(graveler, repo)
    head = graveler.get_branch(repo, "main").commit_id
    before = all_keys(graveler.store)
    with pytest.raises(MergeConflictError) as caught:
        graveler.merges.merge(repo, "src", "main", committer="t")
    conflicting = {k.encode() for k, (*_, conflict) in OVERLAPS.items() if conflict}
    assert set(caught.value.paths) == conflicting
    assert "both add different" in str(caught.value)
    assert graveler.get_branch(repo, "main").commit_id == head
    assert all_keys(graveler.store) == before  # no KV change (range files may be written)


@pytest.mark.parametrize("strategy", ["source-wins", "dest-wins"])
def test_strategies_settle_conflicts_and_keep_agreed_changes(
    graveler: Graveler, repo: Repository, strategy: str
) -> None:
    _overlap(graveler, repo)
    graveler.merges.merge(repo, "src", "main", committer="t", strategy=strategy)  # type: ignore[arg-type]
    expected: dict[bytes, Value] = {}
    for key, (base, source, dest, conflict) in OVERLAPS.items():
        if conflict:
            final = source if strategy == "source-wins" else dest
        elif source is not None and source != base:
            final = source
        elif dest is not None:
            final = dest
        else:
            final = base
        if final:
            expected[key.encode()] = value(final)
    assert contents(graveler, repo, "main") == expected


def test_merge_commit_has_both_parents_metadata_and_a_lakefs_message(
    graveler: Graveler, repo: Repository, clock: FakeClock
) -> None:
    _commit(graveler, repo, "main", {"a": "1"})
    graveler.create_branch(repo, "feature", "main")
    source = _commit(graveler, repo, "feature", {"b": "2"})
    head = _commit(graveler, repo, "main", {"c": "3"})
    clock.advance(5)
    merged = graveler.merges.merge(repo, "feature", "main", committer="alice", metadata={"k": "v"})
    commit = graveler.get_commit(repo, merged)
    assert commit.parents == (head, source)
    assert commit.message == "Merge 'feature' into 'main'"
    assert (commit.committer, commit.metadata) == ("alice", {"k": "v"})
    assert commit.creation_date == int(clock.now)
    assert commit.generation == 4
    assert contents(graveler, repo, "main") == {
        b"a": value("1"),
        b"b": value("2"),
        b"c": value("3"),
    }
    with pytest.raises(NoChangesError):  # already merged
        graveler.merges.merge(repo, "feature", "main", committer="t")
    again = graveler.merges.merge(repo, "feature", "main", committer="t", allow_empty=True)
    assert graveler.get_commit(repo, again).parents == (merged, source)


def test_squash_merge_has_only_the_destination_as_parent(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.create_branch(repo, "feature", "main")
    _commit(graveler, repo, "feature", {"a": "1"})
    _commit(graveler, repo, "feature", {"b": "2"})
    head = graveler.get_branch(repo, "main").commit_id
    merged = graveler.merges.merge(
        repo, "feature", "main", committer="t", squash=True, message="sq"
    )
    commit = graveler.get_commit(repo, merged)
    assert (commit.parents, commit.message) == ((head,), "sq")
    assert contents(graveler, repo, "main") == {b"a": value("1"), b"b": value("2")}


def test_fast_forward_shaped_merge_takes_the_source_contents(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.create_branch(repo, "feature", "main")
    source = _commit(graveler, repo, "feature", {"a": "1"})
    merged = graveler.merges.merge(repo, f"{source[:8]}", "main", committer="t")
    assert graveler.get_commit(repo, merged).metarange_id == (
        graveler.get_commit(repo, source).metarange_id
    )


def test_merge_into_a_dirty_branch_is_refused_and_changes_nothing(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.create_branch(repo, "feature", "main")
    _commit(graveler, repo, "feature", {"a": "1"})
    graveler.set(repo, "main", b"staged", value("x"))
    before = all_keys(graveler.store)
    with pytest.raises(DirtyBranchError, match=r"uncommitted changes \(dirty branch\)"):
        graveler.merges.merge(repo, "feature", "main", committer="t")
    assert all_keys(graveler.store) == before


def test_merge_into_a_tag_or_commit_or_nothing_is_refused(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.create_branch(repo, "feature", "main")
    _commit(graveler, repo, "feature", {"a": "1"})
    graveler.create_tag(repo, "v1", "main")
    head = graveler.get_branch(repo, "main").commit_id
    before = all_keys(graveler.store)
    for destination in ("v1", head, "main~0", "main@"):
        with pytest.raises(InvalidInputError, match="not a branch|only a branch"):
            graveler.merges.merge(repo, "feature", destination, committer="t")
    with pytest.raises(BranchNotFoundError):
        graveler.merges.merge(repo, "feature", "nope", committer="t")
    with pytest.raises(RefNotFoundError):
        graveler.merges.merge(repo, "nope", "main", committer="t")
    with pytest.raises(InvalidInputError):
        graveler.merges.merge(repo, "feature", "main", committer="t", strategy="ours")  # type: ignore[arg-type]
    assert all_keys(graveler.store) == before


def test_merge_of_unrelated_histories_is_refused(graveler: Graveler, repo: Repository) -> None:
    root = add_commit(graveler, repo, [], message="another root")
    with pytest.raises(InvalidInputError, match="share no history"):
        graveler.merges.merge(repo, root, "main", committer="t")


@pytest.mark.parametrize("seed", range(15))
def test_random_non_conflicting_merges_match_the_model(
    graveler: Graveler, repo: Repository, seed: int
) -> None:
    rng = random.Random(seed)
    keys = [f"k{n:02d}" for n in range(30)]
    _commit(graveler, repo, "main", {k: f"b{k}" for k in rng.sample(keys, 15)})
    base = contents(graveler, repo, "main")
    graveler.create_branch(repo, "src", "main")
    mine = rng.sample(keys, 20)
    source_keys, dest_keys = mine[:10], mine[10:]
    source = {k: rng.choice(["", f"s{k}"]) for k in source_keys}
    dest = {k: rng.choice(["", f"d{k}"]) for k in dest_keys}
    _commit(graveler, repo, "src", source)
    _commit(graveler, repo, "main", dest)
    expected = dict(base)
    for key, text in {**source, **dest}.items():
        if text:
            expected[key.encode()] = value(text)
        else:
            expected.pop(key.encode(), None)
    try:
        graveler.merges.merge(repo, "src", "main", committer="t")
    except NoChangesError:
        assert contents(graveler, repo, "main") == expected
    assert contents(graveler, repo, "main") == expected


def test_merge_of_100k_entry_branches_differing_in_10_reads_only_changed_ranges(
    lake_blocks: BlockStore, namespace: str
) -> None:
    blocks, store, clock = lake_blocks, MemoryStore(), FakeClock()
    chunking = Chunking(target_entries=1024)
    graveler = make_graveler(store, clock, blocks, CommittedManager(blocks, chunking=chunking))
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    stage_many(graveler, repo, "main", ((b"f%06d" % n, value(str(n))) for n in range(100_000)))
    graveler.commit(repo, "main", committer="t", message="100k")
    graveler.create_branch(repo, "dev", "main")
    rng = random.Random(3)
    touched = rng.sample(range(100_000), 15)
    for n in touched[:10]:
        graveler.set(repo, "dev", b"f%06d" % n, value("dev"))
    graveler.commit(repo, "dev", committer="t", message="dev")
    for n in touched[10:]:
        graveler.set(repo, "main", b"f%06d" % n, value("main"))
    graveler.commit(repo, "main", committer="t", message="main")

    committed = CommittedManager(blocks, chunking=chunking)
    cold = make_graveler(store, clock, blocks, committed)
    ids = {ref: _range_ids(cold, repo, ref) for ref in ("main~1", "dev", "main")}
    assert len(ids["main"]) > 50
    cold.merges.merge(repo, "dev", "main", committer="t")
    # Read: the base and source ranges that differ, and destination ranges the changes land in.
    changed = (ids["main~1"] ^ ids["dev"]) | (ids["main"] - ids["main~1"])
    assert 0 < committed.stats.range_reads <= len(changed) <= 30
    assert len(_range_ids(cold, repo, "main") - ids["main~1"]) <= 15
    for n in touched:
        assert cold.get(repo, "main", b"f%06d" % n) == value("dev" if n in touched[:10] else "main")


def test_a_change_made_on_both_sides_is_skipped_by_range_id_without_reading(
    lake_blocks: BlockStore, namespace: str
) -> None:
    blocks, store = lake_blocks, MemoryStore()
    graveler = make_graveler(store, FakeClock(), blocks)
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    stage_many(graveler, repo, "main", ((b"f%05d" % n, value(str(n))) for n in range(5000)))
    graveler.commit(repo, "main", committer="t", message="base")
    graveler.create_branch(repo, "dev", "main")
    graveler.set(repo, "dev", b"f00042", value("same"))
    graveler.commit(repo, "dev", committer="t", message="dev")
    graveler.set(repo, "main", b"f00042", value("same"))
    graveler.set(repo, "main", b"f04999", value("other"))
    graveler.commit(repo, "main", committer="t", message="main")
    assert _range_ids(graveler, repo, "dev") - _range_ids(graveler, repo, "main~1")  # it changed
    committed = CommittedManager(blocks)
    cold = make_graveler(store, FakeClock(), blocks, committed)
    head = graveler.resolve_ref(repo, "main").commit
    # The source has a change since the base, so the merge is recorded (lakeFS's rule) though
    # its tree is the destination's.
    merged = cold.merges.merge(repo, "dev", "main", committer="t")
    assert cold.get_commit(repo, merged).metarange_id == head.metarange_id
    assert committed.stats.range_reads == 0


def test_merging_an_older_commit_whose_tree_is_the_destinations_records_a_merge(
    graveler: Graveler, repo: Repository
) -> None:
    """The lakeFS wrapper's test_reference_merge_into: add then delete on a branch, and merge
    the commit after the delete (same tree as main) into a branch of main."""
    graveler.create_branch(repo, "work", "main")
    added = _commit(graveler, repo, "work", {"test1": "data"})
    deleted = _commit(graveler, repo, "work", {"test1": ""})
    latest = _commit(graveler, repo, "work", {"test1": "data"})
    graveler.create_branch(repo, "other", "main")
    head = graveler.get_branch(repo, "other").commit_id
    first = graveler.merges.merge(repo, deleted, "other", committer="t", message="Merge1")
    commit = graveler.get_commit(repo, first)
    assert (commit.parents, commit.message) == ((head, deleted), "Merge1")
    assert commit.metarange_id == graveler.get_commit(repo, head).metarange_id
    assert graveler.merges.merge_base(repo, "work", "other") == deleted  # the ancestry is kept
    second = graveler.merges.merge(repo, "work", "other", committer="t", message="Merge2")
    assert contents(graveler, repo, "other") == {b"test1": value("data")}
    assert graveler.get_commit(repo, second).parents == (first, latest)
    assert graveler.get_commit(repo, added).metarange_id != commit.metarange_id


def test_a_source_with_nothing_new_since_the_base_is_refused_unless_allowed(
    graveler: Graveler, repo: Repository
) -> None:
    _commit(graveler, repo, "main", {"a": "1"})
    graveler.create_branch(repo, "left", "main")
    graveler.create_branch(repo, "right", "main")
    head = graveler.get_branch(repo, "right").commit_id
    with pytest.raises(NoChangesError, match="no changes"):  # source is the merge base
        graveler.merges.merge(repo, "left", "right", committer="t")
    assert graveler.get_branch(repo, "right").commit_id == head
    # Commits that leave the tree as the base had it bring nothing either (lakeFS compares trees).
    _commit(graveler, repo, "left", {"b": "2"})
    _commit(graveler, repo, "left", {"b": ""})
    with pytest.raises(NoChangesError):
        graveler.merges.merge(repo, "left", "right", committer="t")
    assert graveler.get_branch(repo, "right").commit_id == head
    merged = graveler.merges.merge(repo, "left", "right", committer="t", allow_empty=True)
    assert graveler.get_commit(repo, merged).parents[0] == head


def _range_ids(graveler: Graveler, repo: Repository, ref: str) -> set[str]:
    metarange_id = graveler.resolve_ref(repo, ref).commit.metarange_id
    return {r.id for r in graveler.committed.ranges(repo.storage_namespace, metarange_id)}
