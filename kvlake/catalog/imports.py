"""Zero-copy import: objects of an external S3 location become one commit on a branch.

lakeFS's importStart / importStatus / importCancel. Nothing is copied: each
imported entry's address is the object's full URL (`s3://bucket/dir/file`),
which reads follow, and which kvlake never deletes: it does not own that data,
so `entry_ref` gives such entries no address and no deletion record (staged,
dropped or garbage-collected) can name it.

An import lists each source (S3 returns keys in order, so destinations come out
sorted), writes the entries as ranges and a metarange as it goes (memory holds
one range, however many objects), then graveler commits that metarange on the
branch in one commit (`Imports.commit_metarange`): the branch must be clean, and
each destination is replaced by what was imported there. A destination that a
bulk delete on the branch covers, or another owner's write lock holds, refuses
the import when it starts and again right before it publishes (issue 22: every
write respects the object locks).

An import is an `import` operation (kvlake/operations): `prepare` checks the
request and writes the record; a runner of any process (a server's, a `kvlake
worker`'s) claims it and runs it through the import engine
(kvlake/catalog/import_runs.py), which counts progress, reads a cancel at each
progress update and publishes; importStatus is a view of the record (`status`).

The listing and range writing run in this thread (`local`) or on Spark
(`spark`, kvlake/pipelines/imports.py): the sources are split into parts
(`split_sources`), listed by Spark tasks, range-partitioned by path and written
as committed pieces that join into the very metarange the local way writes
(`CommittedManager.join_pieces`); the commit is the same call. With `auto`
(KVLAKE_IMPORTS_ENGINE) an import whose sources hold at least
KVLAKE_IMPORTS_SPARK_THRESHOLD objects runs on Spark where PySpark is
installed, chosen by the operations' `select_engine`.

Sources must be served by the blockstore (same scheme, inside its root, an
existing bucket) and outside the repository's own namespace, whose blobs the
repository's deletion log and garbage collection delete. A local blockstore
imports only with `KVLAKE_IMPORTS_LOCAL_ENABLED`, from folders named by
`KVLAKE_IMPORTS_LOCAL_PREFIXES` (`local://...` below its root, as namespaces
are); no repository may hold its namespace in or around such a folder
(`check_outside_import_folders`, applied at repository creation), so no
garbage collection or purge ever lists an imported file as its own blob. A
local file's checksum is its MD5, as an upload's is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, islice
from typing import Final, NamedTuple, Protocol

import msgspec

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.catalog.import_listing import (
    ImportSource,
    ImportUnit,
    split_sources,
    unit_entries,
    whole,
)
from kvlake.catalog.import_sources import (
    LOCAL_SCHEME,
    ImportSources,
    destinations,
)
from kvlake.config import ImportSettings, Settings
from kvlake.errors import ConflictError, ImportNotFoundError, InvalidInputError, NotFoundError
from kvlake.graveler import (
    Graveler,
    Piece,
    Repository,
    Value,
    check_branch_name,
)
from kvlake.operations import (
    ImportLocation,
    ImportRequest,
    Ledger,
    ObjectLocks,
    Operation,
    engine_available,
    load_dotted,
    select_engine,
)

log = logging.getLogger(__name__)

IMPORT_SCHEMES: Final = frozenset({"s3"})
"""Blockstores whose namespaces imports may always read (`import_support` in /config/storage);
a local one also may with `KVLAKE_IMPORTS_LOCAL_ENABLED`."""
PROGRESS_EVERY: Final = 10_000
"""Entries between a Spark listing task's cancel checks (a local import checkpoints every
KVLAKE_IMPORTS_PROGRESS_EVERY)."""
MAX_SOURCES: Final = 1000
CANCELED: Final = "import canceled"
SPARK_IMPORT: Final = "kvlake.pipelines.imports:SparkImport"
"""The class writing an import's pieces on Spark (`PieceWriter`), loaded when one runs."""
SPARK_PARTS: Final = 256
"""Parts a Spark import lists in parallel, where the sources' folders allow."""


class PieceWriter(Protocol):
    """Lists an import's parts and writes its entries as committed pieces, elsewhere (Spark)."""

    def pieces(self, job: ImportJob, units: Sequence[ImportUnit]) -> Iterator[Piece]:
        """The pieces of all the parts' entries, ascending by first key and disjoint.

        Stops early (fewer entries) once the import's operation record asks it to cancel.
        """
        ...  # a Protocol method: the Spark import (kvlake/pipelines/imports.py) implements it


class ImportJob(NamedTuple):
    """A validated import with its status record written: what `run` needs."""

    repository: Repository
    branch: str
    import_id: str
    sources: tuple[ImportSource, ...]
    committer: str
    message: str
    metadata: dict[str, str]


Progress = Callable[[int], None]
"""Told the objects ingested so far; raises to stop the import (a cancel, a stop)."""


class ImportStatus(msgspec.Struct, frozen=True, kw_only=True):
    """An import as importStatus shows it: a view of its `import` operation record."""

    id: str
    branch: str
    created: float
    updated: float
    ingested: int = 0
    completed: bool = False
    metarange_id: str = ""
    commit_id: str = ""
    error: str = ""


def job_of(repository: Repository, operation: Operation) -> ImportJob:
    """What running the `import` operation needs, from its record."""
    request = operation.imports
    assert request is not None, "an import record carries its request"
    return ImportJob(
        repository=repository,
        branch=operation.branch,
        import_id=operation.id,
        sources=tuple(ImportSource(s.path, s.destination, s.type) for s in request.sources),
        committer=request.committer,
        message=request.message,
        metadata=dict(request.metadata),
    )


class Importer:
    """Starts, runs, reports and cancels imports. Thread-safe; state lives in the KV."""

    def __init__(
        self,
        graveler: Graveler,
        blockstore: BlockStore,
        *,
        clock: Callable[[], float] = time.time,
        settings: Settings | None = None,
        locks: ObjectLocks | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self._graveler = graveler
        self._ledger = ledger or Ledger(graveler.store)
        """Where imports live: one `import` operation record each (kvlake/operations)."""
        self._blockstore = blockstore
        self._clock = clock
        self._locks = locks
        """The lake's object locks: an import refuses destinations a bulk delete or another
        owner's write lock holds (None: no locks to respect)."""
        self._lake_settings = settings
        """The lake's settings, for Spark tasks to open the lake (None: no Spark imports)."""
        self._settings = settings.imports if settings is not None else ImportSettings()
        self._sources = ImportSources(blockstore, self._settings.folders())

    @property
    def supported(self) -> bool:
        scheme = self._blockstore.scheme
        return scheme in IMPORT_SCHEMES or (scheme == LOCAL_SCHEME and self._settings.local_enabled)

    def prepare(
        self,
        repository: Repository,
        branch: str,
        sources: Sequence[ImportSource],
        *,
        committer: str,
        message: str = "",
        metadata: dict[str, str] | None = None,
        creator: str = "",
    ) -> ImportJob:
        """Check the request and record the import as an `import` operation, which a runner
        (kvlake/catalog/import_runs.py's engine) then claims and runs; `creator` is the
        owner the operations API names (`User.principal`).

        Raises:
            InvalidInputError: no sources, an unreadable or overlapping source or
                destination, a source in the repository's namespace, or a blockstore
                without imports.
            DirtyBranchError: the branch has uncommitted changes (lakeFS: at commit).
            BranchNotFoundError: no such branch.
        """
        if not self.supported:
            hint = (
                "set KVLAKE_IMPORTS_LOCAL_ENABLED=true and KVLAKE_IMPORTS_LOCAL_PREFIXES to import"
                " local:// folders"
                if self._blockstore.scheme == LOCAL_SCHEME
                else "imports read s3:// locations on an s3 blockstore"
            )
            raise InvalidInputError(
                f"the {self._blockstore.scheme} blockstore does not import (import_support is"
                f" false); {hint}"
            )
        check_branch_name(branch)
        self._check_engine()
        if not 1 <= len(sources) <= MAX_SOURCES:
            raise InvalidInputError(f"{len(sources)} import paths given; give 1 to {MAX_SOURCES}")
        sources = [self._sources.canonical(repository, source) for source in sources]
        prefixes, objects = destinations(sources)
        self._graveler.imports.check_destinations(prefixes, objects)
        self._graveler.check_clean(repository, branch)
        self._refuse_locked(repository, branch, sources, committer)
        now = self._clock()
        ordered = sorted(sources, key=lambda s: s.destination)
        request = ImportRequest(
            sources=[
                ImportLocation(path=s.path, destination=s.destination, type=s.kind) for s in ordered
            ],
            committer=committer,
            message=message or "Import objects",
            metadata=dict(metadata or {}),
        )
        operation = Operation(
            id=ids.new_uid(),
            kind="import",
            repository=repository.name,
            instance_uid=repository.instance_uid,
            branch=branch,
            imports=request,
            created_by=committer,
            creator=creator,
            created_at=now,
            last_updated_at=now,
        )
        self._ledger.create(operation)
        return job_of(repository, operation)

    def status(self, repository: Repository, import_id: str) -> ImportStatus:
        """The import's status, as importStatus shows it, read from its operation record.

        A cancel asked for reads as canceled at once (lakeFS's answer), though the
        importing runner stops only at its next progress update.

        Raises:
            ImportNotFoundError: no such import in the repository.
        """
        operation = self.operation(repository, import_id)
        completed = operation.status == "completed"
        cancelled = operation.status == "cancelled" or operation.cancel_requested
        return ImportStatus(
            id=operation.id,
            branch=operation.branch,
            created=operation.created_at,
            updated=operation.last_updated_at,
            ingested=operation.counters.enumerated,
            completed=completed,
            metarange_id=operation.metarange_id if completed else "",
            commit_id=operation.commit_id,
            error="" if completed else CANCELED if cancelled else operation.error,
        )

    def operation(self, repository: Repository, import_id: str) -> Operation:
        """The import's operation record, if it is an import into this repository instance.

        Raises:
            ImportNotFoundError: no such import in the repository.
        """
        try:
            operation = self._ledger.load(import_id)[0]
        except NotFoundError:
            operation = None
        if (
            operation is None
            or operation.kind != "import"
            or (operation.repository, operation.instance_uid)
            != (repository.name, repository.instance_uid)
        ):
            raise ImportNotFoundError(
                f"no import {import_id!r} in repository {repository.name!r}; check the id"
                " importStart returned"
            )
        return operation

    def cancel(self, repository: Repository, import_id: str) -> None:
        """Ask the import to stop without committing. Canceling twice, or a failed import,
        is fine.

        Raises:
            ImportNotFoundError: no such import in the repository.
            ConflictError: it completed already (its commit stays).
        """
        self.operation(repository, import_id)
        now = self._clock()

        def change(current: Operation) -> Operation | None:
            if current.status == "completed":
                raise ConflictError(
                    f"import {import_id!r} completed already (commit {current.commit_id});"
                    " revert that commit to undo it"
                )
            if current.finished or current.cancel_requested:
                return None
            # Not yet claimed: nothing runs it, so it ends here (as a bulk delete's cancel).
            status = "cancelled" if current.status == "not_started" else current.status
            return msgspec.structs.replace(
                current, status=status, cancel_requested=True, last_updated_at=now
            )

        self._ledger.update(import_id, change)

    def running(self, import_id: str) -> bool:
        """Whether the import is still to go on: for workers that do not hold its record
        (Spark tasks), so a cancel stops them too."""
        operation = self._ledger.load(import_id)[0]
        return not operation.finished and not operation.cancel_requested

    # -- running (kvlake/catalog/import_runs.py drives these) --------------------------

    def _refuse_locked(
        self, repository: Repository, branch: str, sources: Sequence[ImportSource], owner: str
    ) -> None:
        """Refuse destinations that a running bulk delete on `branch`, or another owner's
        write lock, holds: the import would replace what they guard (issue 22)."""
        if self._locks is None:
            return
        for source in sources:
            prefix = source.kind == "common_prefix"
            self._locks.refuse_import(
                repository, branch, source.destination, owner=owner, prefix=prefix
            )

    def write_metarange(self, job: ImportJob, progress: Progress) -> str:
        """List the sources and write their entries as one metarange (here or on Spark);
        `progress(ingested)` is told the count as it grows, and once at the end, and may
        raise to stop. Returns the metarange's id."""
        counter = [0]
        committed = self._graveler.committed
        namespace = job.repository.storage_namespace
        if self.choose_engine(job) == "spark":
            metarange_id = committed.join_pieces(namespace, self._pieces(job, counter, progress))
        else:
            entries = self._entries(job, counter, progress)
            metarange_id = committed.write_metarange(namespace, entries)
        progress(counter[0])  # the last chance to cancel
        return metarange_id

    def publish(
        self, job: ImportJob, metarange_id: str, precondition: Callable[[str], None]
    ) -> str:
        """Commit the written metarange on the branch in one commit; return its id.

        `precondition(head_id)` runs before each publish attempt, after the lock checks.
        """
        prefixes, objects = destinations(job.sources)

        def unlocked(head_id: str, _head: object) -> None:
            # Again before each publish attempt: a bulk delete may have started (or
            # a lock been taken) while the sources were listed.
            self._refuse_locked(job.repository, job.branch, job.sources, job.committer)
            precondition(head_id)

        return self._graveler.imports.commit_metarange(
            job.repository,
            job.branch,
            metarange_id,
            prefixes=prefixes,
            objects=objects,
            committer=job.committer,
            message=job.message,
            metadata=job.metadata,
            precondition=unlocked,
        )

    def _check_engine(self) -> None:
        """Refuse an engine that cannot run here, before anything is recorded."""
        engine = self._settings.engine
        select_engine(engine, threshold=self._settings.spark_threshold)
        if engine == "spark" and self._lake_settings is None:
            raise InvalidInputError(
                "KVLAKE_IMPORTS_ENGINE is spark, but this importer has no lake settings to give"
                " Spark tasks; build it as kvlake.lake.Lake does, or use engine local"
            )

    def choose_engine(self, job: ImportJob) -> str:
        """`local` or `spark`; `auto` lists up to the threshold to count the sources' objects.

        Raises:
            InvalidInputError: the configured engine is not installed here.
        """
        settings = self._settings
        if settings.engine != "auto":
            return select_engine(settings.engine, threshold=settings.spark_threshold)
        if self._lake_settings is None or not engine_available("spark"):
            return "local"
        listings = (self._blockstore.list_blobs(*_folder_and_rest(s)) for s in job.sources)
        estimate = sum(1 for _ in islice(chain.from_iterable(listings), settings.spark_threshold))
        return select_engine("auto", threshold=settings.spark_threshold, estimate=estimate)

    def _pieces(self, job: ImportJob, counter: list[int], progress: Progress) -> Iterator[Piece]:
        """The import's pieces from Spark, counted; a cancel stops them at the next piece."""
        for source in job.sources:  # here, not in a task, where it would be a failed job
            folder, _, rest = source.path.rpartition("/")
            if source.kind == "object" and not self._blockstore.exists(folder, rest):
                raise InvalidInputError(f"import source object {source.path!r} does not exist")
        units = split_sources(self._blockstore, job.sources, parts=SPARK_PARTS)
        writer: PieceWriter = load_dotted(SPARK_IMPORT)(self._lake_settings)
        for piece in writer.pieces(job, units):
            counter[0] += piece.count
            progress(counter[0])
            yield piece

    def _entries(
        self, job: ImportJob, counter: list[int], progress: Progress
    ) -> Iterator[tuple[bytes, Value]]:
        for source in job.sources:
            for key, value in unit_entries(self._blockstore, whole(source)):
                yield key, value
                counter[0] += 1
                if counter[0] % self._settings.progress_every == 0:
                    progress(counter[0])


def _folder_and_rest(source: ImportSource) -> tuple[str, tuple[str]]:
    folder, _, rest = source.path.rpartition("/")
    return folder, (rest,)
