"""Walks of long histories read O(log n) commits, not n (issue 33).

Counted in KV round trips on a fresh `Refs` (empty caches), at two history
lengths; commits stored before walk fields existed (written raw here) still
resolve, one read at a time, and a history restored from a refs dump
(`Refs.add_commits`) gets its walk fields as it is written.
"""

from __future__ import annotations

import msgspec
import pytest

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.errors import RefNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.history.mergebase import find_merge_base
from kvlake.graveler.records import Repository, encode
from kvlake.graveler.refs.lineage import skip_depth, unstamped
from kvlake.graveler.refs.refexpr import RefResolver
from kvlake.graveler.refs.store import Refs, commit_id, partition_of
from kvlake.kv import CountingStore
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler
from tests.support import FakeClock

SIZES = (200, 3_000)


def test_skip_depth_is_myers_rule_as_a_function_of_depth() -> None:
    jumps = [0]  # Myers: positions from 0, the root jumping to itself
    for position in range(1, 5000):
        p = position - 1
        same = p - jumps[p] == jumps[p] - jumps[jumps[p]]
        jumps.append(jumps[jumps[p]] if same else p)
        assert skip_depth(position + 1) == jumps[position] + 1


def _line(
    graveler: Graveler, repository: Repository, base: str, length: int, tag: str, *, old: bool
) -> str:
    """`length` commits on `base`; `old` stores them as before walk fields existed."""
    refs = Refs(graveler.store)
    tip = base
    commit = refs.get_commit(repository, base)
    batch = []
    for n in range(length):
        commit = msgspec.structs.replace(
            commit, message=f"{tag}{n}", parents=(tip,), generation=commit.generation + 1
        )
        tip = refs.add_commit(repository, commit) if not old else commit_id(commit)
        batch.append((tip, commit))
    if old:  # records as kvlake wrote them before it recorded walk fields
        graveler.store.set_many(
            partition_of(repository),
            ((keys.commit_key(i), encode(unstamped(c))) for i, c in batch),
        )
    return tip


def _setup(length: int, *, old: bool = False) -> tuple[CountingStore, Repository, str, str, str]:
    store = CountingStore(MemoryStore())
    graveler = make_graveler(store, FakeClock(), MemoryBlockStore())
    repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
    root = graveler.get_branch(repository, "main").commit_id
    fork = _line(graveler, repository, root, length, "m", old=old)
    left = _line(graveler, repository, fork, length, "l", old=old)
    right = _line(graveler, repository, fork, length // 2, "r", old=old)
    return store, repository, fork, left, right


def _resolver(store: CountingStore) -> tuple[Refs, RefResolver]:
    refs = Refs(store)  # empty caches: every commit walked is a KV read
    return refs, RefResolver(refs)


def test_tilde_n_reads_log_n_commits_at_any_history_length() -> None:
    trips = []
    for length in SIZES:
        store, repository, fork, left, _ = _setup(length)
        _, resolver = _resolver(store)
        store.reset()
        assert resolver.resolve(repository, f"{left}~{length}").commit_id == fork
        trips.append(store.round_trips)
        root = resolver.resolve(repository, f"{left}~{2 * length}")
        assert not root.commit.parents
        with pytest.raises(RefNotFoundError, match="has 0 parents"):
            resolver.resolve(repository, f"{left}~{2 * length + 1}")
    assert trips[1] <= 2 * trips[0]  # 15x the history: O(log n)
    assert trips[1] * 50 < SIZES[1]


def test_a_merge_base_of_long_forks_reads_log_n_commits() -> None:
    trips = []
    for length in SIZES:
        store, repository, fork, left, right = _setup(length)
        refs, _ = _resolver(store)
        store.reset()
        assert find_merge_base(refs, repository, left, right) == fork
        trips.append(store.round_trips)
    assert trips[1] <= 2 * trips[0]  # 15x the history: O(log n)
    assert trips[1] * 50 < SIZES[1]


def test_commits_stored_without_walk_fields_still_resolve_and_meet() -> None:
    store, repository, fork, left, right = _setup(SIZES[0], old=True)
    refs, resolver = _resolver(store)
    assert refs.get_commit(repository, left).depth == 0
    store.reset()
    assert resolver.resolve(repository, f"{left}~{SIZES[0]}").commit_id == fork
    assert store.round_trips >= SIZES[0]  # one read a commit: nothing to skip by
    assert find_merge_base(refs, repository, left, right) == fork
    graveler = make_graveler(store, FakeClock(), MemoryBlockStore())
    new = _line(graveler, repository, left, 50, "n", old=False)  # new commits over old ones
    assert Refs(store).get_commit(repository, new).depth == 50
    assert RefResolver(Refs(store)).resolve(repository, f"{new}~{50 + SIZES[0]}").commit_id == fork


def test_a_log_page_reads_its_own_commits_at_any_history_length() -> None:
    trips = []
    for length in SIZES:
        store, repository, _, left, _ = _setup(length)
        graveler = make_graveler(store, FakeClock(), MemoryBlockStore())
        store.reset()
        assert len(graveler.history.log(repository, left, amount=50).commits) == 50
        trips.append(store.round_trips)
    assert trips[0] == trips[1]


def test_stamped_and_unstamped_histories_give_the_same_merge_bases() -> None:
    for old in (False, True):
        store, repository, fork, left, right = _setup(40, old=old)
        refs = Refs(store)
        resolver = RefResolver(refs)
        seventh = resolver.resolve(repository, f"{left}~7").commit_id
        third = resolver.resolve(repository, f"{left}~3").commit_id
        assert find_merge_base(refs, repository, left, right) == fork
        assert find_merge_base(refs, repository, third, right) == fork
        assert find_merge_base(refs, repository, left, seventh) == seventh
        assert find_merge_base(refs, repository, right, fork) == fork


def _tilde_trips(store: CountingStore, repository: Repository, ref: str) -> tuple[str, int]:
    """What `ref` resolves to on empty caches, and the KV round trips it took."""
    _, resolver = _resolver(store)
    store.reset()
    return resolver.resolve(repository, ref).commit_id, store.round_trips


def test_a_restored_history_walks_by_skips_as_its_source_does() -> None:
    length = 2_000
    blocks = MemoryBlockStore()
    source_store = CountingStore(MemoryStore())
    source = make_graveler(source_store, FakeClock(), blocks)
    repository = source.create_repository("repo", storage_namespace="mem://b/repo")
    root = source.get_branch(repository, "main").commit_id
    source.create_branch(
        repository, "long", _line(source, repository, root, length, "m", old=False)
    )
    manifest = source.dumps.dump(repository)

    target_store = CountingStore(MemoryStore())
    target = make_graveler(target_store, FakeClock(), blocks)
    copy = target.create_bare_repository("copy", storage_namespace="mem://b/repo")
    target.dumps.restore(copy, manifest.dump_id)

    native = _tilde_trips(source_store, repository, f"long~{length}")
    restored = _tilde_trips(target_store, copy, f"long~{length}")
    assert restored == native
    assert native[0] == root
    assert restored[1] * 50 < length  # by skips, not one read a commit
    refs = Refs(target_store)
    assert refs.get_commit(copy, target.get_branch(copy, "long").commit_id).depth == length + 1


def test_commits_restored_before_their_parents_are_stamped_in_generation_order() -> None:
    store = CountingStore(MemoryStore())
    graveler = make_graveler(store, FakeClock(), MemoryBlockStore())
    repository = graveler.create_repository("repo", storage_namespace="mem://b/repo")
    root = graveler.get_branch(repository, "main").commit_id
    tip = _line(graveler, repository, root, 40, "m", old=False)
    refs = Refs(store)
    native = dict(refs.list_commits(repository))
    bare = graveler.create_bare_repository("copy", storage_namespace="mem://b/copy")
    # children first, parents last: the order a dump in id order may well give
    refs.add_commits(bare, sorted(((i, unstamped(c)) for i, c in native.items()), reverse=True))
    assert dict(Refs(store).list_commits(bare)) == native
    assert Refs(store).get_commit(bare, tip).depth == 41


def test_a_commit_whose_parent_is_nowhere_is_stored_without_walk_fields() -> None:
    store, repository, _, left, _ = _setup(5)
    refs = Refs(store)
    commit = msgspec.structs.replace(
        refs.get_commit(repository, left), parents=("0" * 64,), message="orphan"
    )
    identifier = commit_id(commit)
    refs.add_commits(repository, [(identifier, commit)])
    assert Refs(store).get_commit(repository, identifier).depth == 0
