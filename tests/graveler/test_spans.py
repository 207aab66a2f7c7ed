"""Spans: a ref cut at its ranges reads, span by span, exactly what one listing reads."""

from __future__ import annotations

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import RepositoryNotFoundError, StaleReadError
from kvlake.graveler import TOKEN_DROP_DELAY, Cleaner, Span, SpanChange, keys
from kvlake.graveler.committed import Chunking, CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository, Value
from kvlake.kv import Store
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler, stage_many, value
from tests.support import FakeClock

TINY = Chunking(target_entries=8, max_entries=16, max_bytes=4096)


@pytest.fixture
def small_ranges(clock: FakeClock, lake_blocks: BlockStore) -> Graveler:
    committed = CommittedManager(lake_blocks, chunking=TINY)
    return make_graveler(MemoryStore(), clock, lake_blocks, committed)


def _lake(graveler: Graveler, namespace: str) -> Repository:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    entries = [
        (b"%s/%04d" % (d, n), value(f"{d!r}{n}")) for d in (b"a", b"b", b"c") for n in range(100)
    ]
    stage_many(graveler, repo, "main", entries)
    graveler.commit(repo, "main", committer="t", message="300")
    return repo


def _read_all(graveler: Graveler, spans: list[Span]) -> list[tuple[bytes, Value]]:
    return [entry for span in spans for entry in graveler.spans.read(span)]


def test_spans_of_a_branch_read_what_a_listing_reads_staged_changes_included(
    small_ranges: Graveler,
    namespace: str,
) -> None:
    graveler = small_ranges
    repo = _lake(graveler, namespace)
    graveler.set(repo, "main", b"b/0050", value("changed"))
    graveler.set(repo, "main", b"b/0050x", value("added between ranges"))
    graveler.delete(repo, "main", b"a/0007")
    graveler.set(repo, "main", b"z", value("added after the last range"))

    spans = graveler.spans.split(repo, "main")

    assert len(spans) == len(graveler.committed.ranges(namespace, _metarange(graveler, repo)))
    assert len(spans) > 10
    assert _read_all(graveler, spans) == list(graveler.list(repo, "main"))


def test_a_prefix_keeps_only_the_spans_under_it(small_ranges: Graveler, namespace: str) -> None:
    graveler = small_ranges
    repo = _lake(graveler, namespace)

    spans = graveler.spans.split(repo, "main", prefix=b"b/")

    assert spans[0].start == b"b/" and spans[-1].stop == b"b0"
    assert len(spans) < len(graveler.spans.split(repo, "main")) / 2
    assert [k for k, _ in _read_all(graveler, spans)] == [b"b/%04d" % n for n in range(100)]


def test_a_diff_span_gives_both_sides_of_each_change(
    small_ranges: Graveler, namespace: str
) -> None:
    graveler = small_ranges
    repo = _lake(graveler, namespace)
    graveler.create_branch(repo, "dev", "main")
    graveler.set(repo, "dev", b"a/0001", value("new"))
    graveler.delete(repo, "dev", b"c/0099")
    graveler.set(repo, "dev", b"c/0099y", value("added"))

    spans = graveler.spans.split(repo, "dev", against="main")
    changes = [c for span in spans for c in graveler.spans.diff(span)]

    assert changes == [
        SpanChange(b"a/0001", value("b'a'1"), value("new")),
        SpanChange(b"c/0099", value("b'c'99"), None),
        SpanChange(b"c/0099y", None, value("added")),
    ]


def test_a_planned_span_keeps_its_snapshot_after_the_branch_moves(
    small_ranges: Graveler, namespace: str
) -> None:
    graveler = small_ranges
    repo = _lake(graveler, namespace)
    spans = graveler.spans.split(repo, "main~0")  # a commit: no staging to go stale
    before = _read_all(graveler, spans)

    graveler.set(repo, "main", b"a/0000", value("later"))
    graveler.commit(repo, "main", committer="t", message="later")

    assert _read_all(graveler, spans) == before


def test_a_branch_committed_and_its_token_dropped_during_the_read_fails(
    small_ranges: Graveler,
    namespace: str,
) -> None:
    graveler = small_ranges
    repo = _lake(graveler, namespace)
    graveler.set(repo, "main", b"a/0000", value("staged"))
    span = graveler.spans.split(repo, "main")[0]
    graveler.commit(repo, "main", committer="t", message="meanwhile")

    with pytest.raises(StaleReadError, match="read a commit id"):
        list(graveler.spans.read(span))


def test_a_token_dropped_mid_read_after_the_real_delay_fails_the_read(
    clock: FakeClock, lake_blocks: BlockStore, namespace: str
) -> None:
    """Issue 22 #5: the span is half read when the branch is committed, the real drop
    delay passes on the fake clock and the cleaner drops the token; the rest of the
    token then reads as empty, so the read must fail rather than end short."""
    committed = CommittedManager(lake_blocks, chunking=TINY)
    graveler = make_graveler(
        MemoryStore(), clock, lake_blocks, committed, token_drop_delay=TOKEN_DROP_DELAY
    )
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    stage_many(graveler, repo, "main", [(b"s/%05d" % n, value(str(n))) for n in range(3_000)])
    span = graveler.spans.split(repo, "main")[0]
    read = graveler.spans.read(span)
    first = [next(read) for _ in range(10)]
    graveler.commit(repo, "main", committer="t", message="meanwhile")
    clock.advance(TOKEN_DROP_DELAY + 1)
    Cleaner(graveler).clean_once()
    token = span.state.tokens[0]
    with graveler.store.scan(keys.staging_partition(token)) as scan:
        assert next(scan, None) is None, "the cleaner did not drop the token"

    with pytest.raises(StaleReadError, match="read a commit id"):
        first.extend(read)
    assert len(first) < 3_000  # what it would have returned: short


def test_a_span_of_a_deleted_repository_reads_nothing(
    any_store: Store, clock: FakeClock, namespace: str, lake_blocks: BlockStore
) -> None:
    graveler = make_graveler(any_store, clock, lake_blocks)
    repo = _lake(graveler, namespace)
    span = graveler.spans.split(repo, "main")[0]
    graveler.delete_repository("repo1")
    graveler.create_repository("repo1", storage_namespace=namespace + "2")

    with pytest.raises(RepositoryNotFoundError, match="plan the read again"):
        list(graveler.spans.read(span))


def _metarange(graveler: Graveler, repo: Repository) -> str:
    return graveler.resolve_ref(repo, "main").commit.metarange_id
