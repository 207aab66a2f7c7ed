"""Bulk delete requests: checked and recorded here, run by an engine (engines.py).

`BulkDeletes.create` checks everything a request can get wrong before it
writes the operation record (invariant 6): the path, the branch (a tag or a
commit id is refused as such), branch protection, the filters and the engine.
After that the record is the operation: any server's runner picks it up and
resumes it from its checkpoint after a crash (invariant 5).
"""

from __future__ import annotations

import fnmatch
import importlib.util
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import msgspec

from kvlake import ids
from kvlake.errors import (
    BranchNotFoundError,
    ConflictError,
    InvalidInputError,
    NotFoundError,
)
from kvlake.graveler import Graveler, Repository
from kvlake.operations import events, keys
from kvlake.operations.engines import ObjectInfo, select_engine
from kvlake.operations.ledger import FailurePage, Ledger
from kvlake.operations.paths import BranchPath
from kvlake.operations.records import (
    KINDS,
    STATUSES,
    BulkDeleteOptions,
    Filters,
    Operation,
)


def check_filters(filters: Filters) -> Filters:
    """Refuse filters no object can match together (invariant 6: nothing is recorded)."""
    before, after = filters.modified_before, filters.modified_after
    if before is not None and after is not None and after >= before:
        raise InvalidInputError(
            f"modified_after ({after}) is not before modified_before ({before}): no object"
            " can match both; widen the window"
        )
    low, high = filters.min_size, filters.max_size
    if (low is not None and low < 0) or (high is not None and high < 0):
        raise InvalidInputError("min_size and max_size must be 0 or more bytes")
    if low is not None and high is not None and low > high:
        raise InvalidInputError(
            f"min_size ({low}) is above max_size ({high}): no object can match both"
        )
    if "\0" in filters.glob or "/" in filters.glob:
        raise InvalidInputError(
            f"glob {filters.glob!r} matches the name (last path segment); drop '/' and NUL"
        )
    if any(not key for key in filters.metadata):
        raise InvalidInputError("a metadata filter's keys must not be empty")
    return filters


def _check_free_storage(graveler: Graveler, repository: Repository) -> None:
    """`free_storage` runs the repository's garbage collection afterwards: refuse it now,
    not after the delete, where that cannot run (no rules, or no Spark here)."""
    try:
        graveler.retention.get_rules(repository)
    except NotFoundError:
        raise InvalidInputError(
            f"free_storage runs garbage collection, and repository {repository.name!r} has no"
            " garbage collection rules; set them (setGCRules, `kvlake gc rules set`) or drop"
            " free_storage"
        ) from None
    if importlib.util.find_spec("pyspark") is None:
        raise InvalidInputError(
            "free_storage runs garbage collection on Spark, which is not installed here;"
            " install kvlake's spark extra or drop free_storage"
        )


def matches(filters: Filters, path: str, info: ObjectInfo) -> bool:
    """Whether an object passes every filter that is set."""
    if filters.modified_before is not None and not info.mtime < filters.modified_before:
        return False
    if filters.modified_after is not None and not info.mtime > filters.modified_after:
        return False
    if filters.min_size is not None and info.size < filters.min_size:
        return False
    if filters.max_size is not None and info.size > filters.max_size:
        return False
    if filters.glob and not fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], filters.glob):
        return False
    wanted = filters.metadata
    return all(info.metadata.get(key) == value for key, value in wanted.items())


@dataclass(frozen=True)
class Progress:
    """An operation's status as the API reports it (counters, rate, ETA)."""

    operation: Operation
    total_count: int | None
    rate_per_second: float
    eta_seconds: float | None


def progress_of(operation: Operation, now: float) -> Progress:
    total = operation.counters.enumerated if operation.enumerated else None
    processed = operation.processed - operation.processed_at_start
    elapsed = now - operation.processing_started_at if operation.processing_started_at else 0.0
    if operation.finished:
        elapsed = operation.last_updated_at - operation.processing_started_at
    rate = processed / elapsed if elapsed > 0 and processed > 0 else 0.0
    eta: float | None = None
    if operation.finished:
        eta = 0.0
    elif total is not None and rate > 0:
        eta = (total - operation.processed) / rate
    return Progress(operation, total, round(rate, 1), None if eta is None else round(eta, 1))


class BulkDeletes:
    """Creates, lists, reads and cancels bulk deletes. Thread-safe; no in-process state."""

    def __init__(
        self,
        graveler: Graveler,
        ledger: Ledger,
        *,
        default_engine: str = "local",
        spark_threshold: int = 10_000_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.graveler = graveler
        self.ledger = ledger
        self.default_engine = default_engine
        self.spark_threshold = spark_threshold
        self.clock = clock

    def create(
        self, path: BranchPath, options: BulkDeleteOptions, *, created_by: str, creator: str = ""
    ) -> Operation:
        """Record a bulk delete of everything under `path` that the filters match, by the
        user `created_by` (its id), owned by `creator` (its `User.principal`; default: the id).

        Raises:
            InvalidInputError: contradictory filters, a tag or commit for a branch,
                an unknown engine (nothing recorded).
            RepositoryNotFoundError, BranchNotFoundError: no such repository or branch.
            ProtectedBranchError: a rule forbids writes to the branch.
            HookAbortedError: a `pre-bulk-delete` hook of the branch's actions failed.
        """
        check_filters(options.filters)
        repository = self.graveler.get_repository(path.repository)
        self._check_branch(repository.name, path.branch)
        if not options.dry_run:
            self.graveler.protection.check(repository, path.branch, "staging_write")
            if options.commit:
                self.graveler.protection.check(repository, path.branch, "commit")
        if options.free_storage:
            _check_free_storage(self.graveler, repository)
        requested = options.engine or self.default_engine
        estimate = self.estimate(repository, path) if requested == "auto" else None
        engine = select_engine(requested, threshold=self.spark_threshold, estimate=estimate)
        if self.graveler.events is not None:
            # kvlake's `pre-bulk-delete` gate (docs/actions.md): the branch's action files
            # may refuse the request (HookAbortedError) before anything is recorded.
            # Its payload names the prefix and filters, so a hook can refuse by path.
            event = events.pre_bulk_delete(
                repository, path.branch, path.prefix, options, created_by
            )
            self.graveler.events.pre(repository, event)
        now = self.clock()
        operation = Operation(
            id=ids.new_uid(),
            kind="bulk-delete",
            repository=repository.name,
            instance_uid=repository.instance_uid,
            branch=path.branch,
            prefix=path.prefix,
            options=msgspec.structs.replace(options, engine=engine),
            created_by=created_by,
            creator=creator,
            created_at=now,
            last_updated_at=now,
        )
        self.ledger.create(operation)
        return operation

    def estimate(self, repository: Repository, path: BranchPath) -> int:
        """Committed objects under the path, from the metarange's range counts (no range is
        opened): what `auto` compares with the Spark threshold."""
        head = self.graveler.get_branch(repository, path.branch).commit_id
        metarange = self.graveler.get_commit(repository, head).metarange_id
        low = path.prefix.encode()
        total = 0
        for info in self.graveler.committed.ranges(repository.storage_namespace, metarange):
            if info.max_key < low:
                continue
            if not info.min_key.startswith(low) and info.min_key > low:
                break
            total += info.count
        return total

    def _check_branch(self, repository_name: str, branch: str) -> None:
        repository = self.graveler.get_repository(repository_name)
        try:
            self.graveler.get_branch(repository, branch)
        except BranchNotFoundError:
            try:
                self.graveler.resolve_ref(repository, branch)
            except (NotFoundError, InvalidInputError):
                raise BranchNotFoundError(
                    f"branch {branch!r} not found in repository {repository_name!r}"
                ) from None
            raise InvalidInputError(
                f"{branch!r} is a tag or a commit, not a branch; bulk delete stages deletions"
                " on a branch: create one from it first"
            ) from None

    def get(self, operation_id: str, *, user: str, admin: bool) -> Operation:
        """The operation, if `user` (a `User.principal`) created it or is an admin; otherwise
        it does not exist (for a user created again with the same id too)."""
        operation, _ = self.ledger.load(operation_id)
        if not admin and not operation.owned_by(user):
            raise keys.not_found(operation_id)
        return operation

    def list(
        self,
        *,
        user: str,
        admin: bool,
        status: str = "",
        kind: str = "",
        repository: str = "",
        creator: str = "",
    ) -> Iterator[Operation]:
        """Operations of every kind `user` may see, oldest first, filtered by status, kind,
        repository and creator (a user id); an empty filter takes all.

        Raises:
            InvalidInputError: an unknown status or kind (before anything is listed).
        """
        if status and status not in STATUSES:
            raise InvalidInputError(
                f"status {status!r} is unknown; use one of {', '.join(STATUSES)}"
            )
        if kind and kind not in KINDS:
            raise InvalidInputError(f"kind {kind!r} is unknown; use one of {', '.join(KINDS)}")
        for operation in self.ledger.list():
            if not admin and not operation.owned_by(user):
                continue
            if status and operation.status != status:
                continue
            if kind and operation.kind != kind:
                continue
            if repository and operation.repository != repository:
                continue
            if creator and operation.created_by != creator:
                continue
            yield operation

    def failures(
        self, operation_id: str, *, user: str, admin: bool, after: str = "", amount: int = 100
    ) -> FailurePage:
        self.get(operation_id, user=user, admin=admin)
        return self.ledger.failures(operation_id, after=after, amount=amount)

    def cancel(self, operation_id: str, *, user: str, admin: bool) -> Operation:
        """Ask the operation to stop at its next batch boundary; what is done stays done.

        An operation no runner has started is cancelled at once; asking again while
        a cancel is pending changes nothing.

        Raises:
            ConflictError: the operation has finished (its final status is named):
                there is nothing left to cancel.
        """
        self.get(operation_id, user=user, admin=admin)
        now = self.clock()

        def change(current: Operation) -> Operation | None:
            if current.finished:
                raise ConflictError(
                    f"operation {operation_id} has already finished with status"
                    f" {current.status!r}; there is nothing left to cancel"
                )
            if current.cancel_requested:
                return None
            if current.status == "not_started":
                return msgspec.structs.replace(
                    current, status="cancelled", cancel_requested=True, last_updated_at=now
                )
            return msgspec.structs.replace(current, cancel_requested=True, last_updated_at=now)

        return self.ledger.update(operation_id, change)
