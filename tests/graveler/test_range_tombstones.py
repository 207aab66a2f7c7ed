"""Range tombstones: one staged record stands for a tombstone at every key of a committed
range, and every reader (get, list, diff, spans, commit, reset, conditional writes)
sees exactly those tombstones (kvlake/graveler/staging/range_tombstones.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import (
    ConflictError,
    EntryNotFoundError,
    InvalidInputError,
    PreconditionFailedError,
)
from kvlake.graveler import RangeTombstone, keys
from kvlake.graveler.committed import Chunking, CommittedManager, RangeInfo
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Commit, Repository, Value, decode_branch, encode
from kvlake.graveler.staging.range_tombstones import encode_record, record_key
from kvlake.kv import KeyValue
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler, value
from tests.support import FakeClock

TINY = Chunking(target_entries=4, max_entries=8, max_bytes=1 << 20)
KEYS = [f"d/{i:03d}".encode() for i in range(60)]


@pytest.fixture
def small(kv: MemoryStore, clock: FakeClock, lake_blocks: BlockStore) -> Graveler:
    """A graveler whose ranges hold a few keys each, so a prefix spans many of them."""
    committed = CommittedManager(lake_blocks, chunking=TINY)
    return make_graveler(kv, clock, lake_blocks, committed=committed)


@pytest.fixture
def repo(small: Graveler, namespace: str) -> Repository:
    repo = small.create_repository("repo1", storage_namespace=namespace)
    for key in [*KEYS, b"a", b"z"]:
        small.set(repo, "main", key, value(key.decode()))
    small.commit(repo, "main", committer="t", message="data")
    return repo


def ranges(graveler: Graveler, repo: Repository, ref: str = "main") -> list[RangeInfo]:
    commit = graveler.get_commit(repo, graveler.resolve_ref(repo, ref).commit_id)
    return graveler.committed.ranges(repo.storage_namespace, commit.metarange_id)


def inside(graveler: Graveler, repo: Repository) -> list[RangeInfo]:
    """The committed ranges whose keys are all under d/."""
    found = [r for r in ranges(graveler, repo) if r.min_key >= b"d/" and r.max_key < b"d0"]
    assert len(found) >= 3
    return found


def record(info: RangeInfo, keep: tuple[bytes, ...] = ()) -> RangeTombstone:
    return RangeTombstone(range_id=info.id, min_key=info.min_key, max_key=info.max_key, keep=keep)


def stage_range_tombstones(
    graveler: Graveler, repo: Repository, records: list[RangeTombstone]
) -> None:
    """Stage records of ranges of main's head commit."""
    head = graveler.get_commit(repo, graveler.resolve_ref(repo, "main").commit_id)
    graveler.stage_range_tombstones(repo, "main", records, metarange_id=head.metarange_id)


def keys_in(info: RangeInfo) -> list[bytes]:
    return [k for k in KEYS if info.min_key <= k <= info.max_key]


def listed(graveler: Graveler, repo: Repository, ref: str = "main") -> list[bytes]:
    return [key for key, _ in graveler.list(repo, ref)]


def test_every_reader_sees_the_tombstones_of_a_range_tombstone(
    small: Graveler, repo: Repository
) -> None:
    first, second, *_ = inside(small, repo)
    gone = keys_in(first)
    stage_range_tombstones(small, repo, [record(first)])
    assert small.get_branch(repo, "main").tombstone_tokens == (
        small.get_branch(repo, "main").staging_token,
    )
    for key in gone:
        with pytest.raises(EntryNotFoundError):
            small.get(repo, "main", key)
    assert small.get(repo, "main", keys_in(second)[0]) == value(keys_in(second)[0].decode())
    assert small.get(repo, "main@", gone[0]) == value(gone[0].decode())  # committed view
    expected = [k for k in [b"a", *KEYS, b"z"] if k not in gone]
    assert listed(small, repo) == expected
    page = small.diffs.diff_uncommitted(repo, "main", amount=1000)
    assert [(e.path, e.type) for e in page.entries] == [(k, "removed") for k in gone]
    spans = small.spans.split(repo, "main")
    assert [k for span in spans for k, _ in small.spans.read(span)] == expected
    with pytest.raises(Exception, match="uncommitted changes"):
        small.check_clean(repo, "main")


def test_a_commit_drops_range_tombstones_and_keeps_the_rest(
    small: Graveler, repo: Repository
) -> None:
    first, second, third, *_ = inside(small, repo)
    stage_range_tombstones(small, repo, [record(first), record(third, keep=(keys_in(third)[1],))])
    small.commit(repo, "main", committer="t", message="delete")
    gone = set(keys_in(first)) | (set(keys_in(third)) - {keys_in(third)[1]})
    assert listed(small, repo) == [k for k in [b"a", *KEYS, b"z"] if k not in gone]
    branch = small.get_branch(repo, "main")
    assert branch.tombstone_tokens == ()
    small.check_clean(repo, "main")  # the records went with their token
    kept_ids = {r.id for r in ranges(small, repo)}
    assert second.id in kept_ids and first.id not in kept_ids


def test_a_commit_drops_wholly_tombstoned_ranges_without_reading_them(
    small: Graveler, repo: Repository
) -> None:
    """Issue 26: the commit after a bulk delete costs the ranges it drops, not their keys."""
    range_tombstones = inside(small, repo)[:-1]
    stage_range_tombstones(small, repo, [record(info) for info in range_tombstones])
    stats = small.committed.stats
    lookups = stats.range_reads + stats.range_cache_hits
    small.commit(repo, "main", committer="t", message="delete")
    assert stats.range_reads + stats.range_cache_hits == lookups, "a dropped range was read"
    gone = {key for info in range_tombstones for key in keys_in(info)}
    remaining = [(k, v) for k, v in small.list(repo, "main@")]
    assert [k for k, _ in remaining] == [k for k in [b"a", *KEYS, b"z"] if k not in gone]
    head = small.get_commit(repo, small.resolve_ref(repo, "main").commit_id)
    fresh = small.committed.write_metarange(repo.storage_namespace, iter(remaining))
    assert head.metarange_id == fresh, "cut otherwise than a fresh write of what is left"


def test_entries_staged_in_the_token_win_and_new_keys_are_never_hidden(
    small: Graveler, repo: Repository
) -> None:
    first, *_ = inside(small, repo)
    old = keys_in(first)
    stage_range_tombstones(small, repo, [record(first)])
    small.set(repo, "main", old[0], value("again"))  # written after the record: newer
    between = old[0] + b"x"  # inside the range's span, but no key of the range
    small.set(repo, "main", between, value("new"))
    assert small.get(repo, "main", old[0]) == value("again")
    assert small.get(repo, "main", between) == value("new")
    small.commit(repo, "main", committer="t", message="c")
    assert [k for k in listed(small, repo) if first.min_key <= k <= first.max_key + b"x"] == [
        old[0],
        between,
    ]


def test_a_newer_token_hides_what_an_older_sealed_token_staged(
    small: Graveler, repo: Repository, kv: MemoryStore
) -> None:
    """A record in a newer token beats an entry of a sealed token, as a tombstone would."""
    first, *_ = inside(small, repo)
    key = keys_in(first)[0]
    small.set(repo, "main", key, value("sealed"))
    seal_only(small, repo)
    stage_range_tombstones(small, repo, [record(first)])
    with pytest.raises(EntryNotFoundError):
        small.get(repo, "main", key)
    assert key not in listed(small, repo)


def seal_only(graveler: Graveler, repo: Repository) -> None:
    """Seal the staging token as a commit's first step does, and stop there."""
    graveler._committer._seal(repo, "main", allow_empty=True)


def test_a_record_written_while_a_commit_seals_the_token_is_written_again(
    kv: MemoryStore, clock: FakeClock, lake_blocks: BlockStore, namespace: str
) -> None:
    """The writer flow: a commit that sealed the token may have read it before the record
    landed, so the record is written to the new token too, and listed there first."""
    store = SealingStore()
    committed = CommittedManager(lake_blocks, chunking=TINY)
    graveler = make_graveler(store, clock, lake_blocks, committed=committed)
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    for key in KEYS:
        graveler.set(repo, "main", key, value(key.decode()))
    graveler.commit(repo, "main", committer="t", message="data")
    first = inside(graveler, repo)[0]
    store.before_record = lambda: graveler.commit(
        repo, "main", committer="t", message="racer", allow_empty=True
    )
    stage_range_tombstones(graveler, repo, [record(first)])
    branch = graveler.get_branch(repo, "main")
    assert branch.tombstone_tokens == (branch.staging_token,)
    assert not set(keys_in(first)) & set(listed(graveler, repo))
    graveler.commit(repo, "main", committer="t", message="delete")
    assert not set(keys_in(first)) & set(listed(graveler, repo))


class SealingStore(MemoryStore):
    """Runs `before_record` once, just before the first range tombstone is written."""

    before_record: Callable[[], object] | None = None

    def _set_many(self, partition: bytes, items: list[KeyValue]) -> None:
        hook = self.before_record
        if hook is not None and any(key.startswith(b"\x00h") for key, _ in items):
            self.before_record = None
            hook()
        super()._set_many(partition, items)


def test_resets_lift_tombstoned_keys(small: Graveler, repo: Repository) -> None:
    first, second, *_ = inside(small, repo)
    stage_range_tombstones(small, repo, [record(first), record(second)])
    small.resets.reset_key(repo, "main", keys_in(first)[1])
    assert small.get(repo, "main", keys_in(first)[1]) == value(keys_in(first)[1].decode())
    assert keys_in(first)[0] not in listed(small, repo)
    small.resets.reset_prefix(repo, "main", b"d")
    assert listed(small, repo) == [b"a", *KEYS, b"z"]
    small.check_clean(repo, "main")  # nothing hidden, nothing staged: clean again


def test_conditional_writes_and_updates_see_hidden_keys_as_absent(
    small: Graveler, repo: Repository
) -> None:
    first, *_ = inside(small, repo)
    key = keys_in(first)[0]
    stage_range_tombstones(small, repo, [record(first)])
    with pytest.raises(EntryNotFoundError):
        small.update(repo, "main", key, lambda v: Value(identity=b"u", data=v.data))
    small.set(repo, "main", key, value("fresh"), if_absent=True)
    assert small.get(repo, "main", key) == value("fresh")
    with pytest.raises(PreconditionFailedError):
        small.set(repo, "main", keys_in(inside(small, repo)[1])[0], value("x"), if_absent=True)


def test_records_of_another_metarange_are_refused(small: Graveler, repo: Repository) -> None:
    """Issue 22 #4: ranges of two commits may overlap, so a token takes records of one
    metarange (its guard); another's are refused with nothing written."""
    first, second, *_ = inside(small, repo)
    stage_range_tombstones(small, repo, [record(first)])
    stage_range_tombstones(small, repo, [record(first)])  # the same record again: harmless
    with pytest.raises(ConflictError, match="one metarange per token"):
        small.stage_range_tombstones(repo, "main", [record(second)], metarange_id="another")
    assert keys_in(second)[0] in listed(small, repo)
    small.commit(repo, "main", committer="t", message="first range deleted")
    small.stage_range_tombstones(
        repo, "main", [record(second)], metarange_id="another"
    )  # a new token
    assert keys_in(second)[0] not in listed(small, repo)


def test_a_record_hides_its_ranges_keys_inside_its_span_only(
    small: Graveler, repo: Repository
) -> None:
    first = max(inside(small, repo), key=lambda info: len(keys_in(info)))
    assert len(keys_in(first)) > 2
    narrow = RangeTombstone(range_id=first.id, min_key=first.min_key, max_key=keys_in(first)[1])
    stage_range_tombstones(small, repo, [narrow])
    left = listed(small, repo)
    assert [k for k in keys_in(first) if k in left] == keys_in(first)[2:]
    small.commit(repo, "main", committer="t", message="a narrow record is not a whole range")
    left = listed(small, repo)
    assert [k for k in keys_in(first) if k in left] == keys_in(first)[2:]


def test_the_deletion_layer_reads_no_record_as_an_entry(small: Graveler, repo: Repository) -> None:
    first, *_ = inside(small, repo)
    stage_range_tombstones(small, repo, [record(first)])
    small.set(repo, "main", b"staged", value("s"))
    token = small.get_branch(repo, "main").staging_token
    pages: Iterator[list[tuple[bytes, Value | None]]] = small.references.staged_pages(token)
    assert [key for page in pages for key, _ in page] == [b"staged"]


def test_a_key_committed_into_a_ranges_span_later_is_not_hidden(
    small: Graveler, repo: Repository
) -> None:
    """A record names range R of an older commit; a key committed since inside R's span
    (so in the branch's committed data, but not one of R's keys) stays visible."""
    first, *_ = inside(small, repo)
    newcomer = keys_in(first)[0] + b"x"
    assert first.min_key < newcomer < first.max_key
    small.set(repo, "main", newcomer, value("new"))
    small.commit(repo, "main", committer="t", message="newcomer")
    stage_range_tombstones(small, repo, [record(first)])
    assert small.get(repo, "main", newcomer) == value("new")
    with pytest.raises(EntryNotFoundError):
        small.get(repo, "main", keys_in(first)[0])
    assert newcomer in listed(small, repo)
    small.commit(repo, "main", committer="t", message="hide")
    assert [k for k in listed(small, repo) if first.min_key <= k <= first.max_key] == [newcomer]


def test_a_publish_on_a_clean_head_keeps_the_tokens_listing(
    small: Graveler, repo: Repository, clock: FakeClock
) -> None:
    """A merge (revert, import) publishes on a clean head while a bulk delete hides a
    range in the still-listed staging token: the record must stay visible after it."""
    first, second, *_ = inside(small, repo)
    stage_range_tombstones(small, repo, [record(first)])
    small.resets.reset_prefix(repo, "main", b"d")  # empty again, the token still listed
    small.check_clean(repo, "main")
    token = small.get_branch(repo, "main").staging_token
    assert small.get_branch(repo, "main").tombstone_tokens == (token,)

    def build(head_id: str, head: Commit) -> Commit:
        stage_range_tombstones(small, repo, [record(second)])  # lands between the read and the swap
        return Commit(
            committer="t",
            message="merged",
            metarange_id=head.metarange_id,
            creation_date=int(clock()),
            parents=(head_id,),
            metadata={},
            generation=head.generation + 1,
        )

    small._committer.commit_on_clean_head(repo, "main", build)
    assert small.get_branch(repo, "main").tombstone_tokens == (token,)
    assert not set(keys_in(second)) & set(listed(small, repo))
    with pytest.raises(EntryNotFoundError):
        small.get(repo, "main", keys_in(second)[0])


def test_a_branch_wedged_by_overlapping_records_is_untangled(
    small: Graveler, repo: Repository
) -> None:
    """Issue 22 #4: overlapping records (two bulk deletes from two commits, staged before
    tokens were guarded) failed every commit. Untangling rewrites the overlapping one as
    tombstones: the branch shows what it showed, a writer's staged entry stays, and the
    branch commits again."""
    first = max(inside(small, repo), key=lambda info: len(keys_in(info)))
    assert len(keys_in(first)) > 2
    newcomer = keys_in(first)[0] + b"x"
    small.set(repo, "main", newcomer, value("new"))
    small.commit(repo, "main", committer="t", message="a range changes")
    changed = next(r for r in ranges(small, repo) if r.min_key <= newcomer <= r.max_key)
    assert changed.id != first.id
    # Each record hides a key the other does not (the newcomer; a key locked then).
    stage_range_tombstones(small, repo, [record(changed, keep=(keys_in(first)[2],))])
    token = small.get_branch(repo, "main").staging_token
    stale = record(first)  # the other delete's, from the older commit: unguarded, it landed
    small.store.set(keys.staging_partition(token), record_key(stale), encode_record(stale))
    mine = keys_in(first)[1]
    small.set(repo, "main", mine, value("mine"))  # someone's write, after both
    with pytest.raises(InvalidInputError, match="sorted strictly ascending"):
        small.commit(repo, "main", committer="t", message="wedged")

    assert small.untangle_range_tombstones(repo, "main") == 1
    assert small.untangle_range_tombstones(repo, "main") == 0  # again: nothing left to do
    gone = {*keys_in(first), *keys_in(changed), newcomer} - {mine}
    expected = [k for k in [b"a", *KEYS, b"z"] if k not in gone]
    assert listed(small, repo) == expected
    assert small.get(repo, "main", mine) == value("mine")
    small.commit(repo, "main", committer="t", message="deleted")
    assert listed(small, repo) == expected


def test_a_branch_record_stored_before_the_rename_keeps_its_tombstone_tokens() -> None:
    """Range tombstones were first called hidden ranges: a branch record stores its list
    of their tokens as "hiding", and records written then and now read the same."""
    stored = msgspec.msgpack.encode({"commit_id": "c", "staging_token": "t", "hiding": ["t"]})
    branch = decode_branch(stored)
    assert branch.tombstone_tokens == ("t",)
    assert msgspec.msgpack.decode(encode(branch))["hiding"] == ["t"]


def test_overlapping_records_are_found_pair_by_pair_in_one_forward_pass() -> None:
    """Which records `wholly_tombstoned` must leave to key-by-key reading: each overlapping
    pair is seen from its first record only (a forward look, so 12,200 records at 50M
    objects are not compared pair by pair), and both of its records are found."""
    from kvlake.graveler.staging.store import _overlapping

    def rec(range_id: str, low: bytes, high: bytes, keep: tuple[bytes, ...] = ()) -> RangeTombstone:
        return RangeTombstone(range_id=range_id, min_key=low, max_key=high, keep=keep)

    records = [
        rec("r1", b"a", b"b"),  # alone
        rec("r2", b"c", b"e"),  # shares its last key with r3's first: they overlap
        rec("r3", b"e", b"f"),
        rec("r4", b"g", b"h"),  # the same range hidden twice (two tokens): no overlap
        rec("r4", b"g", b"h"),
        rec("r5", b"i", b"j", keep=(b"i",)),  # its keep leaves it out anyway, and
        rec("r5", b"i", b"j"),  # makes this one overlapped: a key of it stays
        rec("r6", b"k", b"z"),  # a long span reaching past later records
        rec("r7", b"m", b"n"),
        rec("r8", b"x", b"y"),
    ]
    assert _overlapping(records) == {1, 2, 6, 7, 8, 9}
    assert _overlapping(records[:1]) == set()
