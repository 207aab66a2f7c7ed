"""A bulk delete removes exactly what is under its path, counts it, and reports the rest."""

from __future__ import annotations

import io
import threading

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import (
    BranchNotFoundError,
    ConflictError,
    InvalidInputError,
    LockedError,
    OperationNotFoundError,
    ProtectedBranchError,
)
from kvlake.graveler import Repository
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import (
    BatchProcessor,
    BulkDeleteDriver,
    BulkDeleteOptions,
    Filters,
    LocalBatches,
    Operation,
    Outcome,
    parse_branch_path,
    progress_of,
)
from tests.operations.helpers import listed, make_lake, populate, run, start
from tests.support import FakeClock


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Lake:
    return make_lake(MemoryStore(), lake_blocks, batch_size=4)


def _paths(n: int, prefix: str) -> list[str]:
    return [f"{prefix}{i:03d}" for i in range(n)]


def test_deletes_committed_and_staged_objects_under_the_prefix_only(lake: Lake) -> None:
    inside = _paths(9, "data/x/")
    outside = ["data/w", "data/x", "data/xy/1", "other/1"]
    repo = populate(lake, inside + outside)
    populate(lake, ["data/x/staged-1", "data/x/staged-2"], commit=False)
    head = lake.graveler.get_branch(repo, "main").commit_id
    operation = run(lake, start(lake, "lakefs://repo1/main/data/x/"))
    assert operation.status == "completed"
    counters = operation.counters
    assert counters.enumerated == 11
    assert (counters.deleted, counters.failed, counters.skipped) == (11, 0, 0)
    assert operation.batches == 3 and operation.done == 3
    assert listed(lake, repo) == sorted(outside)
    # Staged tombstones, not a commit: the branch's uncommitted diff shows the deletions.
    assert lake.graveler.get_branch(repo, "main").commit_id == head
    assert len(list(lake.graveler.diffs.diff_uncommitted(repo, "main").entries)) == 9


def test_commit_option_commits_the_deletion_with_its_metadata(lake: Lake) -> None:
    repo = populate(lake, _paths(5, "a/") + ["b"])
    options = BulkDeleteOptions(commit=True, commit_message="drop a", commit_metadata={"k": "v"})
    operation = run(lake, start(lake, "lakefs://repo1/main/a/", options=options))
    assert operation.status == "completed" and operation.commit_id
    commit = lake.graveler.get_commit(repo, operation.commit_id)
    assert commit.message == "drop a"
    assert commit.metadata["k"] == "v"
    assert commit.metadata["kvlake.bulk_delete"] == operation.id
    assert [k.decode() for k, _ in lake.graveler.list(repo, operation.commit_id)] == ["b"]


def test_dry_run_counts_and_changes_nothing(lake: Lake) -> None:
    repo = populate(lake, _paths(6, "a/"))
    operation = run(
        lake, start(lake, "lakefs://repo1/main/a/", options=BulkDeleteOptions(dry_run=True))
    )
    assert operation.status == "completed"
    assert operation.counters.deleted == 6
    assert len(listed(lake, repo)) == 6


def test_filters_select_by_name_size_and_time(lake: Lake) -> None:
    clock = lake.clock
    assert isinstance(clock, FakeClock)
    repo = populate(lake, ["a/old.tmp", "a/old.csv"], commit=False)
    clock.advance(100)
    populate(lake, ["a/new.tmp"], commit=False)
    lake.catalog.upload(repo, "main", "a/big.tmp", io.BytesIO(b"x" * 100))
    filters = Filters(glob="*.tmp", modified_before=clock.now - 50, max_size=50)
    operation = run(
        lake, start(lake, "lakefs://repo1/main/a/", options=BulkDeleteOptions(filters=filters))
    )
    assert operation.counters.deleted == 1
    assert listed(lake, repo) == ["a/big.tmp", "a/new.tmp", "a/old.csv"]


def test_a_metadata_filter_takes_only_objects_holding_every_pair(lake: Lake) -> None:
    """Committed and staged objects alike (a filter lists every object, whole ranges too)."""
    repo = populate(lake, [])
    tags = {
        "a/1": {"survey": "north", "label": "raw"},
        "a/2": {"survey": "north", "label": "final"},
        "a/3": {"survey": "south", "label": "raw"},
        "a/4": {},
        "a/5": {"survey": "north", "label": "raw", "extra": "x"},
    }
    for path, metadata in tags.items():
        lake.catalog.upload(repo, "main", path, io.BytesIO(b"x"), metadata=metadata)
        if path == "a/3":
            lake.graveler.commit(repo, "main", committer="t", message="some committed")
    wanted = Filters(metadata={"survey": "north", "label": "raw"})
    dry = run(
        lake,
        start(
            lake, "lakefs://repo1/main/a/", options=BulkDeleteOptions(filters=wanted, dry_run=True)
        ),
    )
    assert dry.counters.deleted == 2 and listed(lake, repo) == sorted(tags)
    operation = run(
        lake, start(lake, "lakefs://repo1/main/a/", options=BulkDeleteOptions(filters=wanted))
    )
    assert (operation.counters.enumerated, operation.counters.deleted) == (2, 2)
    assert listed(lake, repo) == ["a/2", "a/3", "a/4"]


@pytest.mark.parametrize(
    ("uri", "options", "error"),
    [
        ("s3://repo1/main/a", BulkDeleteOptions(), InvalidInputError),
        ("lakefs://repo1", BulkDeleteOptions(), InvalidInputError),
        ("lakefs://repo1/nobranch/a", BulkDeleteOptions(), BranchNotFoundError),
        ("lakefs://repo1/v1/a", BulkDeleteOptions(), InvalidInputError),
        (
            "lakefs://repo1/main/a",
            BulkDeleteOptions(filters=Filters(modified_after=10.0, modified_before=5.0)),
            InvalidInputError,
        ),
        (
            "lakefs://repo1/main/a",
            BulkDeleteOptions(filters=Filters(min_size=10, max_size=5)),
            InvalidInputError,
        ),
        ("lakefs://repo1/main/a", BulkDeleteOptions(engine="warp"), InvalidInputError),
        (
            "lakefs://repo1/main/a",
            BulkDeleteOptions(filters=Filters(metadata={"": "x"})),
            InvalidInputError,
        ),
    ],
)
def test_bad_input_is_refused_and_records_nothing(
    lake: Lake, uri: str, options: BulkDeleteOptions, error: type[Exception]
) -> None:
    repo = populate(lake, ["a/1"])
    lake.graveler.create_tag(repo, "v1", "main")
    with pytest.raises(error):
        start(lake, uri, options=options)
    assert list(lake.ledger.list()) == []
    assert listed(lake, repo) == ["a/1"]


def test_a_tag_is_refused_as_a_tag(lake: Lake) -> None:
    repo = populate(lake, ["a/1"])
    lake.graveler.create_tag(repo, "v1", "main")
    with pytest.raises(InvalidInputError, match="is a tag or a commit, not a branch"):
        start(lake, "lakefs://repo1/v1/a")


def test_a_protected_branch_is_refused_at_creation(lake: Lake) -> None:
    repo = populate(lake, ["a/1"])
    lake.graveler.protection.set_rule(repo, "main", ["staging_write"])
    with pytest.raises(ProtectedBranchError):
        start(lake, "lakefs://repo1/main/a/")
    assert list(lake.ledger.list()) == []


def test_a_write_locked_object_is_skipped_and_listed_with_its_reason(lake: Lake) -> None:
    repo = populate(lake, _paths(6, "a/"))
    lake.locks.acquire(repo, "a/002", owner="bob", ttl=600)
    operation = run(lake, start(lake, "lakefs://repo1/main/a/"))
    assert operation.status == "completed_with_errors"
    assert (operation.counters.deleted, operation.counters.skipped) == (5, 1)
    assert listed(lake, repo) == ["a/002"]
    page = lake.bulk_deletes.failures(operation.id, user="alice", admin=False)
    assert [(p, f.outcome) for p, f in page.failures] == [("a/002", "skipped")]
    assert "write-locked by 'bob'" in page.failures[0][1].reason


def test_an_expired_lock_does_not_protect(lake: Lake) -> None:
    repo = populate(lake, _paths(3, "a/"))
    lake.locks.acquire(repo, "a/001", owner="bob", ttl=10)
    clock = lake.clock
    assert isinstance(clock, FakeClock)
    clock.advance(11)
    operation = run(lake, start(lake, "lakefs://repo1/main/a/"))
    assert operation.counters.deleted == 3 and listed(lake, repo) == []


def test_an_upload_under_a_running_bulk_delete_is_refused_naming_it(lake: Lake) -> None:
    repo = populate(lake, _paths(3, "a/"))
    operation = start(lake, "lakefs://repo1/main/a/")
    lake.locks.take_delete_lock(repo, operation.id, "main", "a/", lake.clock() + 60)
    with pytest.raises(LockedError, match=operation.id):
        lake.catalog.upload(repo, "main", "a/new", io.BytesIO(b"x"))
    lake.catalog.upload(repo, "main", "b/new", io.BytesIO(b"x"))  # outside: allowed


def test_another_users_upload_to_a_locked_path_is_refused(lake: Lake) -> None:
    repo = populate(lake, ["a/1"])
    lake.locks.acquire(repo, "a/1", owner="bob", ttl=60)
    with pytest.raises(LockedError, match="locked by 'bob'"):
        lake.catalog.upload(repo, "main", "a/1", io.BytesIO(b"x"), owner="carol")
    lake.catalog.upload(repo, "main", "a/1", io.BytesIO(b"y"), owner="bob")


def test_only_the_creator_and_admins_see_and_cancel(lake: Lake) -> None:
    populate(lake, ["a/1"])
    operation = start(lake, "lakefs://repo1/main/a/", user="alice")
    with pytest.raises(OperationNotFoundError):
        lake.bulk_deletes.get(operation.id, user="bob", admin=False)
    with pytest.raises(OperationNotFoundError):
        lake.bulk_deletes.cancel(operation.id, user="bob", admin=False)
    assert list(lake.bulk_deletes.list(user="bob", admin=False)) == []
    assert lake.bulk_deletes.get(operation.id, user="root", admin=True).id == operation.id
    assert lake.bulk_deletes.cancel(operation.id, user="alice", admin=False).status == "cancelled"


def test_cancel_stops_at_a_batch_boundary(lake: Lake) -> None:
    repo = populate(lake, _paths(12, "a/"), commit=False)  # staged: batches of listed paths
    operation = start(lake, "lakefs://repo1/main/a/")
    engine_context = lake.engine_context(owner="s1")

    class CancelAfterFirst(BatchProcessor):
        def process(self, op: Operation, repository: Repository, number: int) -> Outcome:
            outcome = super().process(op, repository, number)
            lake.bulk_deletes.cancel(op.id, user="alice", admin=False)
            return outcome

    engine = BulkDeleteDriver(engine_context, LocalBatches(CancelAfterFirst(engine_context)))
    finished = engine.run(operation.id, threading.Event())
    assert finished.status == "cancelled"
    assert finished.done == 1 and finished.counters.deleted == 4
    assert len(listed(lake, repo)) == 8
    progress = progress_of(finished, lake.clock())
    assert progress.total_count == 12


def test_auto_picks_local_without_spark_and_estimates_from_range_counts(lake: Lake) -> None:
    repo = populate(lake, _paths(7, "a/") + ["b/1", "c/1"])
    operation = start(lake, "lakefs://repo1/main/a/", options=BulkDeleteOptions(engine="auto"))
    assert operation.options.engine == "local"
    estimate = lake.bulk_deletes.estimate(repo, parse_branch_path("lakefs://repo1/main/a/"))
    assert 7 <= estimate <= 9  # whole ranges are counted: at most the ranges' neighbours


def test_an_upload_that_outlived_its_lock_under_a_new_bulk_delete_is_refused(
    lake: Lake,
) -> None:
    """Its lock expired while it streamed, so a bulk delete may have written a blind
    tombstone over it: refused, and its blob goes to the deletion log's checked delete."""
    repo = populate(lake, ["a/1"])
    operation = start(lake, "lakefs://repo1/main/a/")
    clock = lake.clock
    assert isinstance(clock, FakeClock)
    fake: FakeClock = clock

    class SlowBody(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            if self.tell() == 0:  # mid-stream: the lease runs out, a bulk delete starts
                fake.advance(lake.locks.upload_ttl + 1)
                lake.locks.take_delete_lock(repo, operation.id, "main", "a/", fake.now + 60)
            return super().read(size)

    with pytest.raises(LockedError, match="outlived its lock"):
        lake.catalog.upload(repo, "main", "a/2", SlowBody(b"late"))
    logged = [
        due.record.address
        for number in range(lake.deletion_log.partition_count())
        for due in lake.deletion_log.scan(number)
        if due.record is not None and due.record.origin == "abandoned_upload"
    ]
    assert len(logged) == 1


def test_cancelling_a_finished_operation_is_a_conflict_naming_its_status(lake: Lake) -> None:
    populate(lake, _paths(2, "a/"))
    operation = run(lake, start(lake, "lakefs://repo1/main/a/"))
    assert operation.status == "completed"
    with pytest.raises(ConflictError, match="finished with status 'completed'"):
        lake.bulk_deletes.cancel(operation.id, user="alice", admin=False)
    assert lake.bulk_deletes.get(operation.id, user="alice", admin=False).status == "completed"


def test_an_operation_belongs_to_its_creators_principal(lake: Lake) -> None:
    """A user created again with the same id has another principal (`User.principal`):
    the old one's operations are not its to see or cancel."""
    populate(lake, _paths(1, "a/"))
    operation = lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo1/main/a/"),
        BulkDeleteOptions(),
        created_by="alice",
        creator="alice#01old",
    )
    assert operation.created_by == "alice"
    lake.bulk_deletes.get(operation.id, user="alice#01old", admin=False)
    for other in ("alice", "alice#01new"):
        with pytest.raises(OperationNotFoundError):
            lake.bulk_deletes.get(operation.id, user=other, admin=False)
        with pytest.raises(OperationNotFoundError):
            lake.bulk_deletes.cancel(operation.id, user=other, admin=False)
        assert list(lake.bulk_deletes.list(user=other, admin=False)) == []
