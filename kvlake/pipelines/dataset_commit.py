"""A Spark job's write into a branch: checked before any task starts, published in one step.

The driver checks the target first (a branch, not a tag or commit; an existing
repository; the branch's protection rules; no write lock or bulk delete over
the path), so bad input fails before a task writes a byte. The tasks' files
become visible in one atomic step, so a reader of the branch sees all of the
job's files or none:

- with a `commit_message`, their entries are written as a metarange and
  published as one commit on the branch's head (`Imports.commit_metarange`
  with `keep_staged`); what others stage on the branch meanwhile stays staged,
  outside the job's commit;
- without one, their entries fill a fresh staging token that one swap of the
  branch record publishes above what is staged (graveler's `Batches`): the
  job's files are then uncommitted changes of the branch, like uploads.

Overwrite replaces everything the branch holds under the path in that same
step: committed entries leave the commit (the blobs stay in history, garbage
collection's) or are hidden by tombstones, and staged entries are hidden by
tombstones published with the job's files, their blobs logged for deletion
first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

import msgspec

from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.deletion import DeletionLog, PendingDelete
from kvlake.errors import BranchNotFoundError, InvalidInputError, LockedError
from kvlake.graveler import Commit, ProtectedAction, Repository, Value, prefix_end
from kvlake.lake import Lake
from kvlake.operations import parse_ref_path

JOB_SECONDS: Final = 24 * 3600.0
"""How long a job may run before the blobs its tasks wrote are collected unless committed
(as long as a direct upload may stay unlinked, LINK_SECONDS)."""
PARQUET_CONTENT_TYPE: Final = "application/vnd.apache.parquet"
MODES: Final = ("append", "overwrite")


class WrittenFile(msgspec.Struct, frozen=True, array_like=True):
    """One file a task wrote: its path in the branch and its blob."""

    path: str
    address: str
    size: int
    checksum: str
    logged: float
    """When its deletion record was appended (the record's due time derives from it)."""


@dataclass(frozen=True)
class WriteTarget:
    """Where a job writes and how it commits: checked on the driver before any task."""

    repository: str
    instance_uid: str
    branch: str
    root: str
    """The path written under, ending in '/' ('' for the whole branch)."""
    partition_by: tuple[str, ...]
    schema_json: str
    """The data columns' Spark schema (partition columns left out), kept in each footer."""
    message: str
    """The job's commit message; empty: the files are staged, uncommitted."""
    metadata: tuple[tuple[str, str], ...]
    token: str
    """The staging token a staged job's files are published in (named in the tasks'
    deletion records, so the deletion worker finds the entries there)."""

    def holds_objects(self, lake: Lake) -> bool:
        """Whether the branch (staged changes included) has an object under the path."""
        repository = lake.graveler.get_repository(self.repository)
        start = self.root.encode()
        entries = lake.graveler.list(
            repository, self.branch, start=start, stop=prefix_end(start) if start else None
        )
        return next(entries, None) is not None


def unlinked_record(
    deletion: DeletionLog,
    repository: Repository,
    address: str,
    logged: float,
    *,
    token: str,
    path: str,
) -> PendingDelete:
    """The deletion record of a task's blob, due when the job has had JOB_SECONDS to commit.

    It names the job's staging token and the file's path: once a staged job's
    token is published, the worker finds the entry there and waits, and keeps the
    blob for good once a commit took the token holding it.
    """
    return deletion.new_record(
        repository,
        address,
        "unlinked_upload",
        staging_token=token,
        path=path.encode(),
        since=logged,
        record_id=address.rsplit("/", 1)[-1],
        due=logged + JOB_SECONDS + deletion.settings.send_delay,
    )


def plan_write(
    lake: Lake, uri: str, options: Mapping[str, str], *, data_schema_json: str
) -> WriteTarget:
    """Check a write of `uri` (`lakefs://repo/branch/path/`) before any task starts.

    `options` have lower-case keys: `format` (parquet), `partition_by` (or
    `partitionby`), `commit_message`, `commit_metadata` (a JSON object).

    Raises:
        InvalidInputError: a bad URI, format, option, or a ref that is not a branch.
        RepositoryNotFoundError: no such repository.
        ProtectedBranchError: the branch's rules forbid commits.
        LockedError: a write lock or a bulk delete covers the path.
    """
    parsed = parse_ref_path(uri)
    fmt = options.get("format", "parquet").lower()
    if fmt != "parquet":
        raise InvalidInputError(
            f"format {fmt!r} cannot be written by the kvlake source; write 'parquet'"
        )
    message = options.get("commit_message", "")
    if options.get("commit_metadata") and not message:
        raise InvalidInputError(
            f"writing {uri!r} with commit_metadata needs option('commit_message', ...) too:"
            " without a message the job's files are staged, uncommitted, with no metadata"
        )
    repository = lake.graveler.get_repository(parsed.repository)
    try:
        lake.graveler.get_branch(repository, parsed.branch)
    except BranchNotFoundError:
        raise InvalidInputError(
            f"{parsed.branch!r} in {uri!r} is not a branch of {parsed.repository!r}; a job"
            " writes to a branch (tags and commits never change): create one and write there"
        ) from None
    lake.graveler.protection.check(repository, parsed.branch, _action(message))
    root = parsed.prefix.rstrip("/") + "/" if parsed.prefix.strip("/") else ""
    check_unlocked(lake, repository, parsed.branch, root)
    spelled = options.get("partition_by", options.get("partitionby", ""))
    partition_by = tuple(name.strip() for name in spelled.split(",") if name.strip())
    return WriteTarget(
        repository=repository.name,
        instance_uid=repository.instance_uid,
        branch=parsed.branch,
        root=root,
        partition_by=partition_by,
        schema_json=data_schema_json,
        message=message,
        metadata=tuple(sorted(_metadata(options.get("commit_metadata", "")).items())),
        token=lake.graveler.batches.new_token(repository),
    )


def _action(message: str) -> ProtectedAction:
    """What the job does to the branch, for its protection rules: a commit, or staging."""
    return "commit" if message else "staging_write"


def check_unlocked(lake: Lake, repository: Repository, branch: str, root: str) -> None:
    """Refuse a path under another owner's write lock or a bulk delete running on `branch`.

    Raises:
        LockedError: naming the lock and what to do.
    """
    lock = next(lake.locks.list_locks(repository, prefix=root), None)
    if lock is not None:
        raise LockedError(
            f"path {lock.path!r} under {root!r} is write-locked by {lock.owner!r}; wait for"
            " the lock to be released (or expire), then run the job again"
        )
    deleting = lake.locks.deleting(repository, root, branch=branch)
    if deleting is not None:
        raise LockedError(
            f"{root!r} is being deleted by bulk delete operation {deleting.operation_id};"
            " wait for it to finish or cancel it, then run the job again"
        )


def commit_job(
    lake: Lake,
    target: WriteTarget,
    files: Iterable[WrittenFile],
    *,
    overwrite: bool,
    job_metadata: Mapping[str, str],
    precondition: Callable[[str, Commit], None] | None = None,
) -> str:
    """Publish the tasks' files in one step; return the branch's head id after it.

    With the target's `commit_message`, as one commit on the branch (see
    `_commit`); without, staged in one swap (see `_stage`). `precondition` runs
    on the head the commit is built on (see `Imports.commit_metarange`); what it
    raises aborts the commit.

    Raises:
        RepositoryNotFoundError: the repository was deleted (or re-created) during the job.
        LockedError, ProtectedBranchError: a lock or rule appeared during the job.
    """
    repository = lake.graveler.get_repository(target.repository)
    if repository.instance_uid != target.instance_uid:
        raise InvalidInputError(
            f"repository {target.repository!r} was deleted and created again while the job"
            " ran; its files will be collected: run the job again"
        )
    lake.graveler.protection.check(repository, target.branch, _action(target.message))
    check_unlocked(lake, repository, target.branch, target.root)
    written = sorted(files, key=lambda file: file.path)
    if not target.message:
        return _stage(lake, repository, target, written, overwrite=overwrite)
    return _commit(
        lake,
        repository,
        target,
        written,
        overwrite=overwrite,
        job_metadata=job_metadata,
        precondition=precondition,
    )


def _commit(
    lake: Lake,
    repository: Repository,
    target: WriteTarget,
    written: list[WrittenFile],
    *,
    overwrite: bool,
    job_metadata: Mapping[str, str],
    precondition: Callable[[str, Commit], None] | None,
) -> str:
    """The job's files as one commit of only them; an overwrite also unstages the path."""
    # The blobs become committed data: the records must never delete them (GC's from now).
    for file in written:  # marked with the time (a GC run started before keeps them)
        lake.deletion_log.mark_shared(repository.instance_uid, file.address)
    entries = _entries(written, lake.clock())
    metarange = lake.graveler.committed.write_metarange(repository.storage_namespace, entries)
    above = ""
    if overwrite:  # what is staged under the path would stay on top of the commit: hide it
        start, stop = _range(target.root)
        shadows = lake.graveler.batches.new_token(repository)
        if lake.graveler.batches.shadow_staged(repository, target.branch, shadows, start, stop):
            above = shadows
    return lake.graveler.imports.commit_metarange(
        repository,
        target.branch,
        metarange,
        prefixes=[target.root.encode()] if overwrite else [],
        objects=[],
        committer="spark",
        message=target.message,
        metadata={**dict(target.metadata), **job_metadata},
        keep_staged=True,
        precondition=precondition,
        above=above,
    )


def _stage(
    lake: Lake,
    repository: Repository,
    target: WriteTarget,
    written: list[WrittenFile],
    *,
    overwrite: bool,
) -> str:
    """The job's files staged in one swap, uncommitted; an overwrite hides the path first.

    The files' blobs are not marked shared: their deletion records name the
    job's token and paths, so the worker waits while the token is staged, keeps
    the blobs once a commit took them, and deletes them if the branch drops them.
    """
    batches = lake.graveler.batches
    if overwrite:
        start, stop = _range(target.root)
        batches.shadow_staged(repository, target.branch, target.token, start, stop)
        committed = lake.graveler.list(repository, target.branch, start=start, stop=stop)
        batches.fill(target.token, ((key, None) for key, _ in committed))
    batches.fill(target.token, _entries(written, lake.clock()))
    if batches.is_empty(target.token):
        return lake.graveler.get_branch(repository, target.branch).commit_id
    return batches.publish(repository, target.branch, target.token)


def _range(root: str) -> tuple[bytes, bytes | None]:
    """The keys under `root` ('' for the whole branch) as [start, stop)."""
    start = root.encode()
    return start, prefix_end(start) if start else None


def _entries(written: Iterable[WrittenFile], now: float) -> Iterator[tuple[bytes, Value]]:
    """The files' staged or committed entries, in the order given."""
    for file in written:
        entry = ObjectEntry(
            address=file.address,
            size=file.size,
            checksum=file.checksum,
            mtime=now,
            content_type=PARQUET_CONTENT_TYPE,
            metadata={},
        )
        yield file.path.encode(), to_value(entry)


def _metadata(text: str) -> dict[str, str]:
    if not text:
        return {}
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
        raise InvalidInputError(
            f"commit_metadata {text[:80]!r} is not a JSON object of strings; write it as"
            ' \'{"key": "value"}\''
        )
    return parsed
