"""Diffs against a dict model, and their cost: only ranges that differ are read."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import BranchNotFoundError, InvalidInputError, RefNotFoundError
from kvlake.graveler.committed import Chunking, CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import DiffEntry, DiffPage, Repository, Value
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import add_commit, make_graveler, stage_many, value
from tests.support import FakeClock

PATHS = [p.encode() for p in ["a", "b", "d1/x", "d1/y", "d1/z/q", "d2/x", "e", "f/g/h"]]


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def _change(graveler: Graveler, repo: Repository, branch: str, rng: random.Random) -> None:
    for path in rng.sample(PATHS, k=rng.randrange(len(PATHS))):
        if rng.random() < 0.3:
            graveler.delete(repo, branch, path)
        else:
            graveler.set(repo, branch, path, value(rng.choice("xyz") * rng.randrange(1, 4)))


def _model_diff(
    left: dict[bytes, Value], right: dict[bytes, Value], *, staged: bool = False
) -> list[DiffEntry]:
    """A removal between commits has the size the object had; a staged one 0 (lakeFS's)."""
    entries = []
    for key in sorted(left.keys() | right.keys()):
        before, after = left.get(key), right.get(key)
        if before is not None and after is not None and before.identity == after.identity:
            continue
        kind = "added" if before is None else "removed" if after is None else "changed"
        if after is not None:
            size = len(after.data)
        else:
            size = 0 if staged or before is None else len(before.data)
        entries.append(
            DiffEntry(type=kind, path=key, path_type="object", size=size, value=after)  # type: ignore[arg-type]
        )
    return entries


def _fold(entries: list[DiffEntry], prefix: bytes, delimiter: bytes) -> list[DiffEntry]:
    """The model of a delimited diff: changes below a common prefix become one row."""
    out: list[DiffEntry] = []
    for entry in entries:
        if not entry.path.startswith(prefix):
            continue
        cut = entry.path.find(delimiter, len(prefix)) if delimiter else -1
        if cut < 0:
            out.append(entry)
            continue
        common = entry.path[: cut + 1]
        if not out or out[-1].path != common:
            out.append(
                DiffEntry(
                    type=entry.type, path=common, path_type="common_prefix", size=0, value=None
                )
            )
    return out


Fetch = Callable[..., DiffPage]


def _all_pages(fetch: Fetch, amount: int) -> list[DiffEntry]:
    entries: list[DiffEntry] = []
    after = b""
    while True:
        page = fetch(after=after, amount=amount)
        entries += page.entries
        if not page.has_more:
            assert page.next_offset == b""
            return entries
        assert page.next_offset == page.entries[-1].path
        after = page.next_offset


def _contents(graveler: Graveler, repo: Repository, ref: str) -> dict[bytes, Value]:
    return dict(graveler.list(repo, ref))


@pytest.mark.parametrize("seed", range(12))
def test_two_dot_three_dot_and_uncommitted_diffs_match_the_model(
    graveler: Graveler, repo: Repository, seed: int
) -> None:
    rng = random.Random(seed)
    _change(graveler, repo, "main", rng)
    graveler.commit(repo, "main", committer="t", message="base", allow_empty=True)
    graveler.create_branch(repo, "dev", "main")
    base = _contents(graveler, repo, "main")
    _change(graveler, repo, "main", rng)
    graveler.commit(repo, "main", committer="t", message="m", allow_empty=True)
    _change(graveler, repo, "dev", rng)
    graveler.commit(repo, "dev", committer="t", message="d", allow_empty=True)
    _change(graveler, repo, "dev", rng)  # left staged
    main, dev = _contents(graveler, repo, "main"), _contents(graveler, repo, "dev@")
    staged = _contents(graveler, repo, "dev")
    expectations: list[tuple[Fetch, list[DiffEntry]]] = [
        (partial(graveler.diffs.diff, repo, "main", "dev", mode="two_dot"), _model_diff(main, dev)),
        (partial(graveler.diffs.diff, repo, "main", "dev"), _model_diff(base, dev)),
        (
            partial(graveler.diffs.diff_uncommitted, repo, "dev"),
            _model_diff(dev, staged, staged=True),
        ),
    ]
    for fetch, expected in expectations:
        assert fetch(amount=1000).entries == expected
        assert _all_pages(fetch, 2) == expected
        for prefix, delimiter in [(b"", b"/"), (b"d1/", b"/"), (b"d1/", b""), (b"f/", b"/")]:
            folded = _fold(expected, prefix, delimiter)
            page = partial(fetch, prefix=prefix, delimiter=delimiter)
            assert page(amount=1000).entries == folded
            assert _all_pages(page, 1) == folded


def test_diff_entries_say_type_size_and_value(graveler: Graveler, repo: Repository) -> None:
    graveler.set(repo, "main", b"changed", value("1"))
    graveler.set(repo, "main", b"removed", value("22"))
    graveler.commit(repo, "main", committer="t", message="m")
    graveler.create_branch(repo, "dev", "main")
    graveler.set(repo, "dev", b"added", value("333"))
    graveler.set(repo, "dev", b"changed", value("4444"))
    graveler.delete(repo, "dev", b"removed")
    graveler.set(repo, "dev", b"same", value("s"))
    graveler.delete(repo, "dev", b"same")  # a staged add then delete: no change
    page = graveler.diffs.diff_uncommitted(repo, "dev")
    assert [(e.type, e.path, e.size, e.value) for e in page.entries] == [
        ("added", b"added", 3, value("333")),
        ("changed", b"changed", 4, value("4444")),
        ("removed", b"removed", 0, None),
    ]
    graveler.commit(repo, "dev", committer="t", message="d")
    # Between commits a removal has the size the object had (lakeFS's), staged it has none.
    assert [
        (e.type, e.path, e.size, e.value) for e in graveler.diffs.diff(repo, "main", "dev").entries
    ] == [
        ("added", b"added", 3, value("333")),
        ("changed", b"changed", 4, value("4444")),
        ("removed", b"removed", 2, None),
    ]


def test_same_content_at_another_address_is_no_change(graveler: Graveler, repo: Repository) -> None:
    graveler.set(repo, "main", b"k", Value(identity=b"id", data=b"address-1"))
    graveler.commit(repo, "main", committer="t", message="m")
    graveler.set(repo, "main", b"k", Value(identity=b"id", data=b"address-2"))
    assert graveler.diffs.diff_uncommitted(repo, "main").entries == []


def test_three_dot_diff_of_unrelated_refs_asks_for_two_dot(
    graveler: Graveler, repo: Repository
) -> None:
    root = add_commit(graveler, repo, [], message="another root")
    graveler.create_branch(repo, "other", root)
    with pytest.raises(InvalidInputError, match="two-dot"):
        graveler.diffs.diff(repo, "main", "other")
    assert graveler.diffs.diff(repo, "main", "other", mode="two_dot").entries == []


@pytest.mark.parametrize(
    "options",
    [{"amount": 0}, {"amount": 1001}, {"delimiter": b"//"}, {"mode": "one_dot"}],
)
def test_bad_diff_arguments_are_invalid_input(
    graveler: Graveler, repo: Repository, options: dict[str, object]
) -> None:
    with pytest.raises(InvalidInputError):
        graveler.diffs.diff(repo, "main", "main", **options)  # type: ignore[arg-type]


def test_diff_of_unknown_refs_is_not_found(graveler: Graveler, repo: Repository) -> None:
    with pytest.raises(RefNotFoundError):
        graveler.diffs.diff(repo, "main", "nope")
    with pytest.raises(BranchNotFoundError):
        graveler.diffs.diff_uncommitted(repo, "nope")
    with pytest.raises(InvalidInputError):
        graveler.diffs.diff_uncommitted(repo, "main~1")


def _big(count: int) -> list[tuple[bytes, Value]]:
    return [(b"data/file-%07d" % n, value(f"v{n}")) for n in range(count)]


def test_diff_of_100k_entry_branches_differing_in_10_reads_only_changed_ranges(
    lake_blocks: BlockStore, namespace: str
) -> None:
    blocks, store, clock = lake_blocks, MemoryStore(), FakeClock()
    chunking = Chunking(target_entries=1024)
    graveler = make_graveler(store, clock, blocks, CommittedManager(blocks, chunking=chunking))
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    stage_many(graveler, repo, "main", _big(100_000))
    graveler.commit(repo, "main", committer="t", message="100k")
    graveler.create_branch(repo, "dev", "main")
    rng = random.Random(1)
    changed = sorted(rng.sample(range(100_000), 10))
    for n in changed[:8]:
        graveler.set(repo, "dev", b"data/file-%07d" % n, value("new"))
    for n in changed[8:]:
        graveler.delete(repo, "dev", b"data/file-%07d" % n)
    graveler.commit(repo, "dev", committer="t", message="10 changes")

    cold = make_graveler(store, clock, blocks, CommittedManager(blocks, chunking=chunking))
    main_ranges = {r.id for r in cold.committed.ranges(namespace, _metarange(cold, repo, "main"))}
    dev_ranges = {r.id for r in cold.committed.ranges(namespace, _metarange(cold, repo, "dev"))}
    assert len(main_ranges) > 50
    page = cold.diffs.diff(repo, "main", "dev", amount=1000)
    assert [e.path for e in page.entries] == [b"data/file-%07d" % n for n in changed]
    assert cold.committed.stats.range_reads == len(main_ranges ^ dev_ranges) <= 20


def _metarange(graveler: Graveler, repo: Repository, ref: str) -> str:
    return graveler.resolve_ref(repo, ref).commit.metarange_id
