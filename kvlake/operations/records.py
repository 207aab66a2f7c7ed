"""Stored records of the operations layer: operations, their batches and failures, and locks.

Frozen msgspec structs, encoded as msgpack. The operation record is the one
place an operation's progress lives: its checkpoint (enumeration cursor,
batches written, batches done) and its counters change together, by
compare-and-swap, so a counter never moves without its batch (invariant 5).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

import msgspec

from kvlake.graveler import RangeInfo

OperationStatus = Literal[
    "not_started",
    "started",
    "in_progress",
    "completed",
    "completed_with_errors",
    "failed",
    "cancelled",
]
STATUSES: Final[tuple[OperationStatus, ...]] = get_args(OperationStatus)
FINISHED: Final = frozenset({"completed", "completed_with_errors", "failed", "cancelled"})
OperationKind = Literal["bulk-delete", "gc-run", "import", "dump", "restore", "gc-prepare-commits"]
KINDS: Final[tuple[OperationKind, ...]] = get_args(OperationKind)
LockKind = Literal["write", "delete"]


class Filters(msgspec.Struct, frozen=True, kw_only=True):
    """Which objects under the path a bulk delete takes (all set filters must match)."""

    modified_before: float | None = None
    """Only objects last modified strictly before this time (seconds since the epoch)."""
    modified_after: float | None = None
    """Only objects last modified strictly after this time."""
    min_size: int | None = None
    """Only objects of at least this many bytes."""
    max_size: int | None = None
    """Only objects of at most this many bytes."""
    glob: str = ""
    """Only objects whose name (the last path segment) matches this glob (`*.tmp`)."""
    metadata: dict[str, str] = {}
    """Only objects whose user metadata holds every one of these keys with exactly this
    value (SDMS's tags and labels)."""


class BulkDeleteOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What a bulk delete was asked to do, checked before the record is written."""

    filters: Filters = Filters()
    dry_run: bool = False
    """Count what would be deleted; change nothing."""
    commit: bool = False
    """Commit the branch when done (with `commit_message` and `commit_metadata`)."""
    commit_message: str = ""
    commit_metadata: dict[str, str] = {}
    purge: bool = True
    """Send the blobs only uncommitted data referenced to the deletion log (false: leave
    them to garbage collection)."""
    engine: str = "local"
    """The engine chosen at creation (`local`, `spark`; `auto` is resolved then)."""
    free_storage: bool = False
    """Run the repository's garbage collection once the operation completed (a `gc-run`
    operation, `Operation.follow_up`), so committed blobs no retained commit references
    are deleted; without it they wait for the next GC."""


class GcRunRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What a garbage-collection run was asked to do (kvlake/pipelines/gc/runs.py)."""

    run_id: str
    """The run's id: its folder in the storage namespace (`_lakefs/retention/gc/<id>/`).
    The operation's own id for a run or a mark; the mark's for a sweep."""
    mode: Literal["run", "mark", "sweep"] = "run"
    grace_period: float | None = None
    """Seconds a blob's hour folder must be over before it is collected (None: the
    lake's KVLAKE_GC_GRACE_PERIOD)."""
    dry_run: bool = False


class ImportLocation(msgspec.Struct, frozen=True, kw_only=True):
    """One source of an import and where it lands (lakeFS's `ImportLocation`), checked and
    in canonical form (kvlake/catalog/imports.py)."""

    path: str
    destination: str
    type: Literal["common_prefix", "object"]


class ImportRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What a zero-copy import was asked to do (kind `import`, kvlake/catalog/imports.py)."""

    sources: list[ImportLocation]
    """Sorted by destination: the order the import lists and writes them."""
    committer: str
    message: str
    metadata: dict[str, str] = {}


class Counters(msgspec.Struct, frozen=True, kw_only=True):
    """What has been done; moves only with the batch that did it."""

    enumerated: int = 0
    deleted: int = 0
    failed: int = 0
    skipped: int = 0


class Operation(msgspec.Struct, frozen=True, kw_only=True):
    """A long-running operation of any kind, under `op/<id>` in the `operations` partition.

    One record for every kind (`kind`): who created it and when, its status,
    counters, checkpoint, lease and error; a kind's request in its own field
    (`options` for a bulk delete, `gc` for a GC run, `imports` for an import). Changed only through
    `Ledger.update` (compare-and-swap), by `Driver` and the kind's engine.

    `batches` work batches have been written (numbers 0 .. batches-1), of which
    the first `done` are processed; `cursor` is the last path enumerated, so a
    resumed enumeration lists from just after it. `owner` holds the operation
    until `lease_expires`; a worker that finds it expired takes it over.
    """

    id: str
    kind: OperationKind
    repository: str
    instance_uid: str
    branch: str = ""
    """A bulk delete's branch and prefix (empty for kinds that work on a whole repository)."""
    prefix: str = ""
    options: BulkDeleteOptions = BulkDeleteOptions()
    """A bulk delete's request (the defaults, unused, for other kinds)."""
    gc: GcRunRequest | None = None
    """A garbage-collection run's request (kind `gc-run`)."""
    imports: ImportRequest | None = None
    """An import's request (kind `import`): its `enumerated` counter is the objects
    ingested, `metarange_id` the metarange written, `commit_id` its commit."""
    metarange_id: str = ""
    dump_id: str = ""
    """A refs dump's id (kinds `dump`, `restore`): the dump written, or the dump to restore."""
    created_by: str
    created_at: float
    last_updated_at: float
    status: OperationStatus = "not_started"
    counters: Counters = Counters()
    enumerated: bool = False
    cursor: str | None = None
    base_commit: str = ""
    """The branch's commit when enumeration began: its whole ranges under the prefix
    become range batches (see `Batch`), so every resumed enumeration must see the same."""
    batches: int = 0
    done: int = 0
    processing_started_at: float = 0.0
    processed_at_start: int = 0
    """Objects processed before this run took over: the rate counts only this run's."""
    cancel_requested: bool = False
    committing: bool = False
    commit_id: str = ""
    error: str = ""
    phase: str = ""
    """The last phase finished, for kinds that work in phases (a GC run: mark, sweep)."""
    follow_up: str = ""
    """The `gc-run` operation a completed bulk delete with `free_storage` started."""
    cleaned: bool = False
    """Finished, and its work partitions (batches) dropped: set by the runner's clean-up,
    so batches a crash left behind after the end are dropped exactly once."""
    owner: str = ""
    lease_expires: float = 0.0
    creator: str = ""
    """Who created it, as the owner the API names (`User.principal`: the user id and its
    creation uid), so a user created again with the same id neither sees nor cancels it.
    Empty (records from before, the command line's): `created_by` is the owner."""

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def owned_by(self, principal: str) -> bool:
        """Whether `principal` (`User.principal`) created the operation."""
        return (self.creator or self.created_by) == principal

    @property
    def processed(self) -> int:
        c = self.counters
        return c.deleted + c.failed + c.skipped


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """What processing one batch did; stored in the batch before the counters move.

    `objects` is how many objects a range batch found, never fewer than enumeration
    counted (`Batch.estimate`), so the fold corrects the count only upwards; None
    for a batch of listed paths.
    """

    deleted: int = 0
    failed: int = 0
    skipped: int = 0
    objects: int | None = None


class RangePlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a range batch does, fixed (and stored) before any of it is done, so a retry
    repeats exactly it: its own records would otherwise hide the keys it counts.

    `paths` are staged objects in the span, deleted one by one (`addresses`: their
    blobs, when kept for garbage collection); `tombstoned` keys of the ranges go with
    one range tombstone per range, `keep` (write-locked) keys stay, in key
    order; `skipped` counts the locked objects.
    """

    paths: list[str]
    addresses: list[str]
    # Stored as "hidden" (range tombstones' first name): plans on disk keep reading.
    tombstoned: int = msgspec.field(name="hidden")
    keep: list[bytes]
    skipped: int


class _Work(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """What every work batch has: once processed, its outcome (stored before it is
    folded into the operation's counters, so batches may finish in any order, on many
    executors, and a crash between the two folds it later, never twice)."""

    outcome: Outcome | None = None


class PathBatch(_Work, frozen=True, kw_only=True, tag="paths"):
    """Paths enumeration listed, in key order, each deleted with a tombstone of its own.

    `addresses` (same order) is kept only when the blobs must be marked shared
    (`purge` false).
    """

    paths: list[str]
    addresses: list[str] = []

    @property
    def objects(self) -> int:
        """How many objects enumeration counted in the batch."""
        return len(self.paths)

    @property
    def last_path(self) -> str:
        """Where enumeration stood once it wrote this batch."""
        return self.paths[-1]


class RangeBatch(_Work, frozen=True, kw_only=True, tag="ranges"):
    """Consecutive committed ranges of the operation's base commit lying wholly under
    the prefix, and the span from the first one's `min_key` to the last one's `max_key`.

    The executor that processes it reads the range files, the staged entries and
    the locks of that span (`plan`, a `RangePlan`) and stages one range tombstone
    per range instead of a tombstone per object.
    """

    ranges: list[RangeInfo]
    estimate: int = 0
    """Objects enumeration counted: the ranges' recorded sizes less the deletions
    staged in their span."""
    staged: list[str] = []
    """The span as enumeration saw it: the paths of objects staged there."""
    gone: list[str] = []
    """... and the paths deleted in staging there. With `staged`, what existed when the
    operation listed the span: only that is deleted (docs/operations.md), as a path
    batch deletes only the paths it lists."""
    plan: RangePlan | None = None

    @property
    def objects(self) -> int:
        """How many objects enumeration counted in the batch (`estimate`)."""
        return self.estimate

    @property
    def span(self) -> tuple[bytes, bytes]:
        """The batch's first and last key (inclusive)."""
        return self.ranges[0].min_key, self.ranges[-1].max_key

    @property
    def last_path(self) -> str:
        """Where enumeration stood once it wrote this batch."""
        return self.ranges[-1].max_key.decode()


Batch = PathBatch | RangeBatch
"""One work batch of a bulk delete, tagged by `kind` in the KV (`decode_batch`)."""


class _UntaggedBatch(msgspec.Struct, frozen=True, kw_only=True):
    """A batch as kvlake stored it before batches were tagged: one struct whose
    `ranges` told a range batch from a path batch. Read only by `decode_batch`."""

    paths: list[str] = []
    addresses: list[str] = []
    ranges: list[RangeInfo] = []
    estimate: int = 0
    staged: list[str] = []
    gone: list[str] = []
    plan: RangePlan | None = None
    outcome: Outcome | None = None


class _Kind(msgspec.Struct, frozen=True):
    """Just a stored batch's tag ("" for one written before batches were tagged)."""

    kind: str = ""


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """A path a bulk delete did not delete, and why (`skipped`: locked)."""

    outcome: Literal["failed", "skipped"]
    reason: str


class Lock(msgspec.Struct, frozen=True, kw_only=True):
    """A lease on an object path (`write`) or on a bulk delete's prefix (`delete`)."""

    kind: LockKind
    owner: str
    expires: float
    path: str = ""
    """The locked path (`write`) or prefix (`delete`)."""
    operation_id: str = ""
    """The bulk delete holding a `delete` lock."""
    branch: str = ""
    """The branch a `delete` lock's bulk delete deletes on: only writes to that branch are
    refused. Empty (records written before locks named their branch) covers every branch."""

    def live(self, now: float) -> bool:
        return now < self.expires

    @property
    def owner_name(self) -> str:
        """The owner as people know it: a user's id without the creation uid the API adds
        (`User.principal`, `<id>#<uid>`; no user id holds `#`)."""
        return self.owner.split("#", 1)[0]


class LeasedUpload(msgspec.Struct, frozen=True, kw_only=True):
    """An upload in flight in a process, as its upload lease publishes it: the path it
    will stage at, which a bulk delete of that path skips (kvlake/operations/leases.py)."""

    instance_uid: str
    branch: str
    path: str
    owner: str


class UploadLease(msgspec.Struct, frozen=True, kw_only=True):
    """A server process's upload lease: its uploads in flight when it was last renewed.

    `seq` grows by one a renewal, so a bulk delete can wait for two renewals after its
    delete lock was written: the second lists every upload that may have missed it."""

    holder: str
    process: str
    expires: float
    seq: int
    uploads: tuple[LeasedUpload, ...] = ()
    fixed: bool = False
    """One upload's own record (a process without the renewal thread): it lists all it
    ever will, so a bulk delete need not wait for its renewals."""

    def live(self, now: float) -> bool:
        return now < self.expires


_ENCODER: Final = msgspec.msgpack.Encoder()
_OPERATION: Final = msgspec.msgpack.Decoder(Operation)
_BATCH: Final = msgspec.msgpack.Decoder(Batch)
_BATCH_KIND: Final = msgspec.msgpack.Decoder(_Kind)
_UNTAGGED_BATCH: Final = msgspec.msgpack.Decoder(_UntaggedBatch)
_FAILURE: Final = msgspec.msgpack.Decoder(Failure)
_LOCK: Final = msgspec.msgpack.Decoder(Lock)
_LEASE: Final = msgspec.msgpack.Decoder(UploadLease)


def encode(record: Operation | PathBatch | RangeBatch | Failure | Lock | UploadLease) -> bytes:
    return _ENCODER.encode(record)


def decode_operation(raw: bytes) -> Operation:
    return _OPERATION.decode(raw)


def decode_batch(raw: bytes) -> Batch:
    """The batch stored as `raw`: the one place batches are decoded.

    Batches written before they were tagged (no `kind`) still decode: a running
    operation's batches outlive an upgrade of the process that resumes it.
    """
    if _BATCH_KIND.decode(raw).kind:
        batch: Batch = _BATCH.decode(raw)
        return batch
    old = _UNTAGGED_BATCH.decode(raw)
    if old.ranges:
        return RangeBatch(
            ranges=old.ranges,
            estimate=old.estimate,
            staged=old.staged,
            gone=old.gone,
            plan=old.plan,
            outcome=old.outcome,
        )
    return PathBatch(paths=old.paths, addresses=old.addresses, outcome=old.outcome)


def decode_failure(raw: bytes) -> Failure:
    return _FAILURE.decode(raw)


def decode_lock(raw: bytes) -> Lock:
    return _LOCK.decode(raw)


def decode_upload_lease(raw: bytes) -> UploadLease:
    return _LEASE.decode(raw)
