"""Staging, reads and the lock-free commit, including races between commits."""

from __future__ import annotations

import threading

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import (
    ConflictError,
    DefaultBranchError,
    EntryNotFoundError,
    InvalidInputError,
    NoChangesError,
    PreconditionFailedError,
    RefNotFoundError,
)
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.cleaner import Cleaner
from kvlake.graveler.records import Repository, Value
from kvlake.graveler.refs.store import commit_id
from kvlake.kv.faults import Call
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import all_keys, value
from tests.graveler.stepping import calls_of, paused_graveler, run_paused
from tests.support import FakeClock


@pytest.fixture
def repo(graveler: Graveler, namespace: str) -> Repository:
    return graveler.create_repository("repo1", storage_namespace=namespace)


def test_staged_write_is_read_back_before_and_after_commit(
    graveler: Graveler, repo: Repository
) -> None:
    graveler.set(repo, "main", b"a", value("1"))
    assert graveler.get(repo, "main", b"a") == value("1")
    first = graveler.get_branch(repo, "main").commit_id
    with pytest.raises(EntryNotFoundError):
        graveler.get(repo, first, b"a")
    new = graveler.commit(repo, "main", committer="alice", message="add a", metadata={"k": "v"})
    commit = graveler.get_commit(repo, new)
    assert commit.parents == (first,)
    assert commit.generation == 2
    assert commit.metadata == {"k": "v"}
    assert commit_id(commit) == new
    assert graveler.get(repo, new, b"a") == value("1")
    assert graveler.get(repo, "main", b"a") == value("1")


def test_tombstone_hides_committed_entry_and_commit_removes_it(
    graveler: Graveler, repo: Repository, clock: FakeClock
) -> None:
    graveler.set(repo, "main", b"a", value("1"))
    graveler.set(repo, "main", b"b", value("2"))
    graveler.commit(repo, "main", committer="t", message="m")
    graveler.delete(repo, "main", b"a")
    with pytest.raises(EntryNotFoundError):
        graveler.get(repo, "main", b"a")
    assert [k for k, _ in graveler.list(repo, "main")] == [b"b"]
    clock.advance(1)
    second = graveler.commit(repo, "main", committer="t", message="m2")
    assert [k for k, _ in graveler.list(repo, second)] == [b"b"]


def test_commit_without_changes_is_refused_unless_allowed(
    graveler: Graveler, repo: Repository
) -> None:
    before = graveler.get_branch(repo, "main")
    with pytest.raises(NoChangesError):
        graveler.commit(repo, "main", committer="t", message="m")
    assert graveler.get_branch(repo, "main") == before  # nothing sealed
    graveler.delete(repo, "main", b"never-existed")
    with pytest.raises(NoChangesError):
        graveler.commit(repo, "main", committer="t", message="m")
    empty = graveler.commit(repo, "main", committer="t", message="m", allow_empty=True)
    assert graveler.get_commit(repo, empty).parents == (before.commit_id,)


def test_listing_merges_staging_over_commit_with_start(
    graveler: Graveler, repo: Repository
) -> None:
    for key in [b"a", b"c", b"e"]:
        graveler.set(repo, "main", key, value("c" + key.decode()))
    graveler.commit(repo, "main", committer="t", message="m")
    graveler.set(repo, "main", b"b", value("sb"))
    graveler.set(repo, "main", b"c", value("sc"))
    graveler.delete(repo, "main", b"e")
    assert list(graveler.list(repo, "main")) == [
        (b"a", value("ca")),
        (b"b", value("sb")),
        (b"c", value("sc")),
    ]
    assert [k for k, _ in graveler.list(repo, "main", start=b"b")] == [b"b", b"c"]


def test_branches_and_tags(graveler: Graveler, repo: Repository) -> None:
    graveler.set(repo, "main", b"a", value("1"))
    head = graveler.commit(repo, "main", committer="t", message="m")
    graveler.create_branch(repo, "dev", "main")
    assert graveler.get_branch(repo, "dev").commit_id == head
    with pytest.raises(ConflictError):
        graveler.create_branch(repo, "dev", "main")
    graveler.create_tag(repo, "v1", "dev")
    assert graveler.get_tag(repo, "v1") == head
    with pytest.raises(ConflictError):
        graveler.create_tag(repo, "v1", "main")
    assert graveler.get(repo, "v1", b"a") == value("1")
    assert [n for n, _ in graveler.list_branches(repo)] == ["dev", "main"]
    assert [n for n, _ in graveler.list_branches(repo, after="dev")] == ["main"]
    assert list(graveler.list_tags(repo)) == [("v1", head)]
    graveler.delete_tag(repo, "v1")
    with pytest.raises(RefNotFoundError):
        graveler.resolve_ref(repo, "v1")
    with pytest.raises(DefaultBranchError):
        graveler.delete_branch(repo, "main")
    with pytest.raises(RefNotFoundError):
        graveler.create_branch(repo, "x", "nope")


def test_deleted_branch_staging_is_dropped_by_cleaner(
    graveler: Graveler, repo: Repository, kv: MemoryStore, cleaner: Cleaner
) -> None:
    graveler.create_branch(repo, "dev", "main")
    graveler.set(repo, "dev", b"a", value("1"))
    token = graveler.get_branch(repo, "dev").staging_token
    graveler.delete_branch(repo, "dev")
    assert cleaner.clean_once().tokens_dropped == 1
    assert keys.staging_partition(token) not in all_keys(kv)


def test_committed_tokens_are_dropped_once_unreferenced(
    graveler: Graveler, repo: Repository, kv: MemoryStore, cleaner: Cleaner
) -> None:
    graveler.set(repo, "main", b"a", value("1"))
    graveler.commit(repo, "main", committer="t", message="m")
    cleaner.clean_once()
    staging = {p for p in all_keys(kv) if p.startswith(b"staging/")}
    assert staging == set()
    assert keys.DROPPED_TOKENS not in all_keys(kv)


class _RacingManager(CommittedManager):
    """A real CommittedManager that runs a callback once, in the middle of a commit."""

    def __init__(self, blocks: BlockStore) -> None:
        super().__init__(blocks)
        self.during_apply: list[object] = []

    def apply_batches(self, namespace: str, base: str, batches, **options):  # type: ignore[no-untyped-def]
        result = super().apply_batches(namespace, base, batches, **options)
        while self.during_apply:
            callback = self.during_apply.pop(0)
            callback()  # type: ignore[operator]
        return result


def _racing_graveler(clock: FakeClock, blocks: BlockStore) -> tuple[Graveler, _RacingManager]:
    manager = _RacingManager(blocks)
    graveler = Graveler(
        MemoryStore(),
        manager,
        check_namespace=blocks.check_namespace,
        clock=clock,
        token_drop_delay=0,
    )
    return graveler, manager


def test_write_during_commit_lands_in_new_token_and_is_kept(
    clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    graveler, manager = _racing_graveler(clock, lake_blocks)
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.set(repo, "main", b"a", value("1"))
    manager.during_apply.append(lambda: graveler.set(repo, "main", b"b", value("2")))
    first = graveler.commit(repo, "main", committer="t", message="m")
    assert [k for k, _ in graveler.list(repo, first)] == [b"a"]
    assert [k for k, _ in graveler.list(repo, "main")] == [b"a", b"b"]
    clock.advance(1)
    second = graveler.commit(repo, "main", committer="t", message="m2")
    assert [k for k, _ in graveler.list(repo, second)] == [b"a", b"b"]


def test_commit_that_loses_to_a_later_commit_returns_the_commit_holding_its_data(
    clock: FakeClock,
    namespace: str,
    lake_blocks: BlockStore,
) -> None:
    graveler, manager = _racing_graveler(clock, lake_blocks)
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.set(repo, "main", b"a", value("1"))
    inner: list[str] = []

    def later_commit() -> None:
        graveler.set(repo, "main", b"b", value("2"))
        inner.append(graveler.commit(repo, "main", committer="t", message="later"))

    manager.during_apply.append(later_commit)
    outer = graveler.commit(repo, "main", committer="t", message="earlier")
    # The later commit sealed our token too and published first: our data is in it.
    assert outer == inner[0]
    branch = graveler.get_branch(repo, "main")
    assert branch.commit_id == outer and branch.sealed_tokens == ()
    assert [k for k, _ in graveler.list(repo, outer)] == [b"a", b"b"]


class _PausingManager(CommittedManager):
    """A real CommittedManager whose n-th apply announces itself and waits for a go."""

    def __init__(self, blocks: BlockStore) -> None:
        super().__init__(blocks)
        self.building = [threading.Event(), threading.Event()]
        self.go = [threading.Event(), threading.Event()]
        self._calls = 0
        self._lock = threading.Lock()

    def apply_batches(self, namespace: str, base: str, batches, **options):  # type: ignore[no-untyped-def]
        result = super().apply_batches(namespace, base, batches, **options)
        with self._lock:
            n, self._calls = self._calls, self._calls + 1
        if n < 2:
            self.building[n].set()
            assert self.go[n].wait(10)
        return result


def test_commit_rebases_when_an_earlier_commit_publishes_first(
    clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    manager = _PausingManager(lake_blocks)
    graveler = Graveler(
        MemoryStore(),
        manager,
        check_namespace=lake_blocks.check_namespace,
        clock=clock,
        token_drop_delay=0,
    )
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    parent = graveler.get_branch(repo, "main").commit_id
    graveler.set(repo, "main", b"a", value("1"))
    results: dict[str, str] = {}

    def run(name: str) -> None:
        results[name] = graveler.commit(repo, "main", committer="t", message=name)

    first = threading.Thread(target=run, args=("first",))
    first.start()
    assert manager.building[0].wait(10)  # first sealed [T0] and is building
    graveler.set(repo, "main", b"b", value("2"))
    second = threading.Thread(target=run, args=("second",))
    second.start()
    assert manager.building[1].wait(10)  # second sealed [T1, T0] and is building
    manager.go[0].set()
    first.join(10)
    manager.go[1].set()
    second.join(10)
    # The first published with only its token; the second rebuilt on top of it
    # with the token still sealed, so history stays linear and nothing is lost.
    head = graveler.get_branch(repo, "main")
    assert head.commit_id == results["second"] != results["first"]
    assert head.sealed_tokens == ()
    assert graveler.get_commit(repo, results["second"]).parents == (results["first"],)
    assert graveler.get_commit(repo, results["first"]).parents == (parent,)
    assert [k for k, _ in graveler.list(repo, results["first"])] == [b"a"]
    assert [k for k, _ in graveler.list(repo, results["second"])] == [b"a", b"b"]


def test_values_survive_encoding_round_trip(graveler: Graveler, repo: Repository) -> None:
    weird = Value(identity=b"\x00\xff", data=b"")
    graveler.set(repo, "main", b"\x01k\x00\xff", weird)
    assert graveler.get(repo, "main", b"\x01k\x00\xff") == weird


def test_a_key_starting_with_nul_is_refused(graveler: Graveler, repo: Repository) -> None:
    """Staging keeps range tombstones below every key that starts with another byte."""
    with pytest.raises(InvalidInputError, match="starts with NUL"):
        graveler.set(repo, "main", b"\x00k", Value(identity=b"i", data=b""))
    with pytest.raises(InvalidInputError, match="starts with NUL"):
        graveler.delete_many(repo, "main", [b"a", b"\x00"])
    assert list(graveler.list(repo, "main")) == []


def test_a_commit_that_finds_nothing_after_sealing_leaves_the_branch_clean(
    any_graveler: Graveler,
    namespace: str,
) -> None:
    """Issue 9, defect 4: write then delete a path, commit: "no changes", and no token
    stays sealed (retries added one each; merges then refused the branch as dirty)."""
    graveler = any_graveler
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.create_branch(repo, "dev", "main")
    for _ in range(3):
        graveler.set(repo, "main", b"a", value("1"))
        graveler.delete(repo, "main", b"a")
        with pytest.raises(NoChangesError):
            graveler.commit(repo, "main", committer="t", message="m")
        branch = graveler.get_branch(repo, "main")
        assert branch.sealed_tokens == ()
    graveler.set(repo, "dev", b"b", value("2"))
    graveler.commit(repo, "dev", committer="t", message="m")
    graveler.merges.merge(repo, "dev", "main", committer="t")  # not refused as dirty
    assert graveler.get(repo, "main", b"b") == value("2")


def test_a_hard_reset_at_any_point_of_a_commit_never_makes_it_claim_the_reset_target(
    any_graveler: Graveler, clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    """Issue 9, defect 5: the commit returned the reset target's id as if it had
    committed. Now it returns a commit that holds its data, or says it was reset."""
    graveler = any_graveler
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.create_branch(repo, "other", "main")
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    graveler.set(repo, "main", b"probe", value("p"))
    total = calls_of(stepping, lambda: paused.commit(repo, "main", committer="t", message="m"))
    outcomes = set()
    for n in range(total):
        key = b"k%d" % n
        graveler.set(repo, "other", key + b"-other", value("o"))
        target = graveler.commit(repo, "other", committer="t", message=f"target {n}")
        graveler.set(repo, "main", key, value("v"))
        try:
            result = run_paused(
                stepping,
                lambda: paused.commit(repo, "main", committer="t", message=f"{n}"),  # noqa: B023
                at_call=n,
                intruder=lambda: graveler.resets.reset_hard(repo, "main", target),  # noqa: B023
            )
        except PreconditionFailedError as exc:
            assert str(exc) == "branch 'main' was reset while committing; nothing was committed"
            outcomes.add("reset")
        except NoChangesError:
            outcomes.add("reset before the seal")
        else:
            assert result != target, n
            assert graveler.get(repo, result, key) == value("v"), n  # truly committed
            outcomes.add("committed")
        assert graveler.get_branch(repo, "main").sealed_tokens == ()
    assert outcomes == {"reset before the seal", "reset", "committed"}


def test_a_commit_whose_tokens_a_racing_commit_published_returns_that_commit(
    any_graveler: Graveler, clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    graveler = any_graveler
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    graveler.set(repo, "main", b"probe", value("p"))
    total = calls_of(stepping, lambda: paused.commit(repo, "main", committer="t", message="m"))
    for n in range(total):
        key = b"k%d" % n
        graveler.set(repo, "main", key, value("v"))
        racing: list[str] = []

        def race(key: bytes = key, racing: list[str] = racing) -> None:
            graveler.set(repo, "main", key + b"+", value("w"))
            racing.append(graveler.commit(repo, "main", committer="r", message="race"))

        try:
            result = run_paused(
                stepping,
                lambda: paused.commit(repo, "main", committer="t", message=f"{n}"),  # noqa: B023
                at_call=n,
                intruder=race,
            )
        except NoChangesError:  # the racing commit ran before our seal and took it all
            result = racing[0]
        assert graveler.get(repo, result, key) == value("v"), n
        head = graveler.get_branch(repo, "main")
        assert head.sealed_tokens == () and result in (head.commit_id, *racing)


def test_a_commit_whose_tokens_a_later_empty_commit_unsealed_reports_no_changes(
    any_graveler: Graveler, clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    """A write and its revert, sealed by two commits: the later one finds nothing to commit
    and unseals both; the earlier one must say "no changes", not "reset" (there was none)."""
    graveler = any_graveler
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    paused, stepping = paused_graveler(graveler, clock, lake_blocks)
    graveler.set(repo, "main", b"a", value("1"))
    head = graveler.get_branch(repo, "main").commit_id
    later: list[BaseException] = []

    def revert_and_commit(call: Call) -> None:
        if graveler.get_branch(repo, "main").sealed_tokens and not later:
            graveler.delete(repo, "main", b"a")  # reverts the sealed write
            with pytest.raises(NoChangesError) as raised:
                graveler.commit(repo, "main", committer="t", message="later")
            later.append(raised.value)

    with pytest.raises(NoChangesError):
        run_paused(
            stepping,
            lambda: paused.commit(repo, "main", committer="t", message="earlier"),
            at_each_call=revert_and_commit,
        )
    assert later
    branch = graveler.get_branch(repo, "main")
    assert branch.commit_id == head and branch.sealed_tokens == ()
    with pytest.raises(EntryNotFoundError):
        graveler.get(repo, "main", b"a")


def test_a_commit_whose_tokens_two_racing_commits_published_in_parts_returns_the_newer(
    any_graveler: Graveler, clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    """C0 sealed Tb and runs; C1 seals Ta (so it commits Ta and Tb); C0 publishes Tb and C2
    publishes Ta before C1's publish: C1 must return C2, which holds all of its data,
    not report a reset (no single commit took both tokens)."""
    graveler = any_graveler
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    c0, s0 = paused_graveler(graveler, clock, lake_blocks)
    c1, s1 = paused_graveler(graveler, clock, lake_blocks)
    graveler.set(repo, "main", b"b", value("b"))
    sealed, resume = threading.Event(), threading.Event()
    published: list[str] = []

    def pause_after_seal(call: Call) -> None:
        if graveler.get_branch(repo, "main").sealed_tokens and not sealed.is_set():
            sealed.set()
            resume.wait(60)

    def run_c0() -> None:
        published.append(
            run_paused(
                s0,
                lambda: c0.commit(repo, "main", committer="t", message="c0"),
                at_each_call=pause_after_seal,
            )
        )

    thread = threading.Thread(target=run_c0)
    thread.start()
    assert sealed.wait(60)
    graveler.set(repo, "main", b"a", value("a"))

    def before_publish(call: Call) -> None:
        if call.op == "set_many" and call.partition == keys.DROPPED_TOKENS and not resume.is_set():
            resume.set()
            thread.join(60)  # C0 publishes the older token
            graveler.set(repo, "main", b"c", value("c"))
            published.append(graveler.commit(repo, "main", committer="t", message="c2"))

    result = run_paused(
        s1,
        lambda: c1.commit(repo, "main", committer="t", message="c1"),
        at_each_call=before_publish,
    )
    resume.set()
    thread.join(60)
    assert len(published) == 2 and result == published[1]
    for key in (b"a", b"b", b"c"):
        assert graveler.get(repo, result, key) == value(key.decode())
