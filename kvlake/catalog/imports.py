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
write respects the object locks). Progress and the
outcome are the import's status record; a cancel marks it, and the importing
thread stops at its next progress update without committing.

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
from kvlake.blockstore import BlockStore, parse_address, parse_prefix, prefix_overlaps
from kvlake.catalog.import_listing import (
    ImportSource,
    ImportUnit,
    split_sources,
    unit_entries,
    whole,
)
from kvlake.config import ImportSettings, Settings
from kvlake.errors import (
    ConflictError,
    InvalidInputError,
    KvlakeError,
    PreconditionFailedError,
    TooManyTriesError,
)
from kvlake.graveler import (
    Graveler,
    ImportStatus,
    Piece,
    Repository,
    Value,
    check_branch_name,
    check_path,
)
from kvlake.operations import ObjectLocks, engine_available, load_dotted, select_engine

log = logging.getLogger(__name__)

IMPORT_SCHEMES: Final = frozenset({"s3"})
"""Blockstores whose namespaces imports may always read (`import_support` in /config/storage);
a local one also may with `KVLAKE_IMPORTS_LOCAL_ENABLED`."""
LOCAL_SCHEME: Final = "local"
PROGRESS_EVERY: Final = 10_000
"""Entries between progress updates (and cancel checks)."""
STALE_SECONDS: Final = 3600.0
"""An import without progress this long is reported failed: its process has ended."""
MAX_SOURCES: Final = 1000
CANCELED: Final = "import canceled"
_MAX_TRIES: Final = 10
SPARK_IMPORT: Final = "kvlake.pipelines.imports:SparkImport"
"""The class writing an import's pieces on Spark (`PieceWriter`), loaded when one runs."""
SPARK_PARTS: Final = 256
"""Parts a Spark import lists in parallel, where the sources' folders allow."""


class PieceWriter(Protocol):
    """Lists an import's parts and writes its entries as committed pieces, elsewhere (Spark)."""

    def pieces(self, job: ImportJob, units: Sequence[ImportUnit]) -> Iterator[Piece]:
        """The pieces of all the parts' entries, ascending by first key and disjoint.

        Stops early (fewer entries) when the import's status says canceled.
        """
        ...


class ImportJob(NamedTuple):
    """A validated import with its status record written: what `run` needs."""

    repository: Repository
    branch: str
    import_id: str
    sources: tuple[ImportSource, ...]
    committer: str
    message: str
    metadata: dict[str, str]


class _Canceled(Exception):
    """The status says canceled: stop without committing."""


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
    ) -> None:
        self._graveler = graveler
        self._blockstore = blockstore
        self._clock = clock
        self._locks = locks
        """The lake's object locks: an import refuses destinations a bulk delete or another
        owner's write lock holds (None: no locks to respect)."""
        self._lake_settings = settings
        """The lake's settings, for Spark tasks to open the lake (None: no Spark imports)."""
        self._settings = settings.imports if settings is not None else ImportSettings()
        self._folders = self._settings.folders()

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
    ) -> ImportJob:
        """Check the request and record the import as started; then `run` it (a thread).

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
        sources = [self._canonical_source(repository, source) for source in sources]
        prefixes, objects = _destinations(sources)
        self._graveler.imports.check_destinations(prefixes, objects)
        self._graveler.check_clean(repository, branch)
        self._refuse_locked(repository, branch, sources, committer)
        now = self._clock()
        import_id = ids.new_uid()
        status = ImportStatus(id=import_id, branch=branch, created=now, updated=now)
        self._graveler.imports.create_status(repository, status)
        return ImportJob(
            repository=repository,
            branch=branch,
            import_id=import_id,
            sources=tuple(sorted(sources, key=lambda s: s.destination)),
            committer=committer,
            message=message or "Import objects",
            metadata=dict(metadata or {}),
        )

    def run(self, job: ImportJob) -> None:
        """Ingest and commit. Never raises a KvlakeError: the outcome is the status's."""
        repository = job.repository
        namespace = repository.storage_namespace
        counter = [0]
        try:
            committed = self._graveler.committed
            if self.choose_engine(job) == "spark":
                metarange_id = committed.join_pieces(namespace, self._pieces(job, counter))
            else:
                metarange_id = committed.write_metarange(namespace, self._entries(job, counter))
            self._progress(job, counter[0])  # the last chance to cancel
            # Invariant 1: the repository may have been deleted (or recreated) meanwhile.
            current = self._graveler.get_repository(repository.name)
            if current.instance_uid != repository.instance_uid:
                raise InvalidInputError(
                    f"repository {repository.name!r} was deleted during the import; nothing"
                    " was committed"
                )
            prefixes, objects = _destinations(job.sources)

            def unlocked(_head_id: str, _head: object) -> None:
                # Again before each publish attempt: a bulk delete may have started (or
                # a lock been taken) while the sources were listed.
                self._refuse_locked(repository, job.branch, job.sources, job.committer)

            commit_id = self._graveler.imports.commit_metarange(
                repository,
                job.branch,
                metarange_id,
                prefixes=prefixes,
                objects=objects,
                committer=job.committer,
                message=job.message,
                metadata=job.metadata,
                precondition=unlocked,
            )
            commit = self._graveler.get_commit(repository, commit_id)
            self._finish(
                job, counter[0], completed=True, metarange_id=commit.metarange_id, commit=commit_id
            )
        except _Canceled:
            log.info("import %s into %s canceled", job.import_id, repository.name)
        except KvlakeError as exc:
            self._finish(job, counter[0], error=str(exc))
        except Exception:  # the thread's last word: recorded for importStatus, then logged
            log.exception("import %s into %s failed", job.import_id, repository.name)
            self._finish(job, counter[0], error="internal error; see the server log")

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

    def status(self, repository: Repository, import_id: str) -> ImportStatus:
        """The import's status; one whose process stopped reporting is reported failed.

        Raises:
            ImportNotFoundError: no such import in the repository.
        """
        status, _ = self._graveler.imports.load_status(repository, import_id)
        if not status.completed and not status.error:
            if self._clock() - status.updated > STALE_SECONDS:
                return msgspec.structs.replace(
                    status,
                    error=f"the import made no progress for {STALE_SECONDS / 3600:.0f} h: its"
                    " server process has ended; start the import again",
                )
        return status

    def cancel(self, repository: Repository, import_id: str) -> None:
        """Mark the import canceled: it stops without committing. Canceling twice is fine.

        Raises:
            ImportNotFoundError: no such import in the repository.
            ConflictError: it completed already (its commit stays).
        """
        for _ in range(_MAX_TRIES):
            status, predicate = self._graveler.imports.load_status(repository, import_id)
            if status.completed:
                raise ConflictError(
                    f"import {import_id!r} completed already (commit {status.commit_id});"
                    " revert that commit to undo it"
                )
            if status.error:
                return
            canceled = msgspec.structs.replace(status, error=CANCELED, updated=self._clock())
            try:
                self._graveler.imports.save_status(repository, canceled, predicate)
            except PreconditionFailedError:
                continue  # progress was saved meanwhile: look again
            return
        raise TooManyTriesError(f"import {import_id!r} kept changing; retry the cancel")

    def keep_alive(self, repository: Repository, import_id: str) -> bool:
        """Say the import still runs (its update time) for workers that do not count it
        (Spark tasks), so it never looks stale; False once it was canceled.

        Raises:
            ImportNotFoundError: no such import in the repository.
        """
        imports = self._graveler.imports
        status, predicate = imports.load_status(repository, import_id)
        if status.error:
            return False
        refreshed = msgspec.structs.replace(status, updated=self._clock())
        try:
            imports.save_status(repository, refreshed, predicate)
        except PreconditionFailedError:
            pass  # another update (a task's, or a cancel) came first: it is as fresh
        return True

    # -- running ------------------------------------------------------------------------

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

    def _pieces(self, job: ImportJob, counter: list[int]) -> Iterator[Piece]:
        """The import's pieces from Spark, counted; a cancel stops them at the next piece."""
        for source in job.sources:  # here, not in a task, where it would be a failed job
            folder, _, rest = source.path.rpartition("/")
            if source.kind == "object" and not self._blockstore.exists(folder, rest):
                raise InvalidInputError(f"import source object {source.path!r} does not exist")
        units = split_sources(self._blockstore, job.sources, parts=SPARK_PARTS)
        writer: PieceWriter = load_dotted(SPARK_IMPORT)(self._lake_settings)
        for piece in writer.pieces(job, units):
            counter[0] += piece.count
            self._progress(job, counter[0])
            yield piece

    def _entries(self, job: ImportJob, counter: list[int]) -> Iterator[tuple[bytes, Value]]:
        for source in job.sources:
            for key, value in unit_entries(self._blockstore, whole(source)):
                yield key, value
                counter[0] += 1
                if counter[0] % PROGRESS_EVERY == 0:
                    self._progress(job, counter[0])

    def _progress(self, job: ImportJob, ingested: int) -> None:
        """Save the count; stop if the import was canceled meanwhile."""
        imports = self._graveler.imports
        for _ in range(_MAX_TRIES):
            status, predicate = imports.load_status(job.repository, job.import_id)
            if status.error:
                raise _Canceled
            updated = msgspec.structs.replace(status, ingested=ingested, updated=self._clock())
            try:
                imports.save_status(job.repository, updated, predicate)
            except PreconditionFailedError:
                continue  # a cancel raced us: look again
            return
        raise TooManyTriesError(f"import {job.import_id!r} status kept changing")

    def _finish(
        self,
        job: ImportJob,
        ingested: int,
        *,
        completed: bool = False,
        metarange_id: str = "",
        commit: str = "",
        error: str = "",
    ) -> None:
        imports = self._graveler.imports
        try:
            for _ in range(_MAX_TRIES):
                status, predicate = imports.load_status(job.repository, job.import_id)
                final = msgspec.structs.replace(
                    status,
                    ingested=ingested,
                    updated=self._clock(),
                    completed=completed,
                    metarange_id=metarange_id,
                    commit_id=commit,
                    error=error if not completed else "",
                )
                try:
                    imports.save_status(job.repository, final, predicate)
                    return
                except PreconditionFailedError:
                    continue
        except KvlakeError as exc:  # the KV is down: the status goes stale, and says so
            log.warning("import %s: its outcome could not be saved: %s", job.import_id, exc)

    # -- checks -------------------------------------------------------------------------

    def _canonical_source(self, repository: Repository, source: ImportSource) -> ImportSource:
        """The source with its folder in canonical form, once it passed every check.

        Invariant 7: the source is normalised before anything compares it, so no
        second spelling of the repository's own namespace (`s3:///lake/repo1/`,
        `local:////repo1`) passes for an external location; the entries then carry
        the canonical address, which is what every later check compares.
        """
        folder, _, rest = source.path.rpartition("/")
        if source.kind not in ("common_prefix", "object") or (source.kind == "object" and not rest):
            raise InvalidInputError(
                f"import path {source.path!r} of type {source.kind!r} is invalid; use type"
                " common_prefix with s3://bucket/prefix, or object with s3://bucket/key"
            )
        try:
            address, rest = parse_prefix(source.path, what="import path")
        except InvalidInputError as exc:
            raise InvalidInputError(f"import path {source.path!r} cannot be read: {exc}") from exc
        own = parse_address(repository.storage_namespace)
        if prefix_overlaps(address, rest, own):
            where = "is inside" if own.contains(address) else "overlaps"
            raise InvalidInputError(
                f"import source {source.path} {where} repository {repository.name}'s namespace"
                f" {own}, whose blobs kvlake deletes; import from outside it"
            )
        try:
            folder = self._blockstore.check_namespace(str(address))
        except InvalidInputError as exc:
            raise InvalidInputError(f"import path {source.path!r} cannot be read: {exc}") from exc
        if self._blockstore.scheme == LOCAL_SCHEME:
            self._check_local_source(source, folder, rest)
        if source.kind == "object":
            check_path(source.destination)
        return source._replace(path=f"{folder}/{rest}")

    def _check_local_source(self, source: ImportSource, folder: str, rest: str) -> None:
        """A local source lies in an import folder, and exists: a file, or a folder."""
        # Everything the source lists is in its folder: inside an import folder when that
        # folder is, segment-wise (`local://imports/a` as a name prefix in `local://imports`
        # lists `imports/ab` too, so the name never counts).
        address = parse_address(folder)
        if not any(parse_address(allowed).contains(address) for allowed in self._folders):
            allowed = ", ".join(self._folders)
            raise InvalidInputError(
                f"import path {source.path!r} is outside the folders local imports may read"
                f" ({allowed}); import from one of them, or add its folder to"
                " KVLAKE_IMPORTS_LOCAL_PREFIXES"
            )
        # The folder holding the named file or names (`dir/` for dir/, dir/na and dir/f),
        # reached without symbolic links: one could lead into a repository's namespace.
        parent = rest.rpartition("/")[0]
        exists = self._blockstore.folder_exists(folder, f"{parent}/" if parent else "")
        if exists and source.kind == "object":
            exists = self._blockstore.exists(folder, rest)
        if not exists:
            raise InvalidInputError(
                f"import path {source.path!r} does not exist; check the path (folders end in '/')"
            )


def _folder_and_rest(source: ImportSource) -> tuple[str, tuple[str]]:
    folder, _, rest = source.path.rpartition("/")
    return folder, (rest,)


def _destinations(sources: Sequence[ImportSource]) -> tuple[list[bytes], list[bytes]]:
    prefixes = [s.destination.encode() for s in sources if s.kind == "common_prefix"]
    objects = [s.destination.encode() for s in sources if s.kind == "object"]
    return prefixes, objects


def check_outside_import_folders(namespace: str, folders: Sequence[str]) -> None:
    """Refuse a repository's namespace in or around a folder imports read: its garbage
    collection and purges would delete the imported files as the repository's own blobs.

    Raises:
        InvalidInputError: the namespace overlaps one of `folders`.
    """
    address = parse_address(namespace, what="storage namespace")
    for folder in folders:
        if address.overlaps(parse_address(folder)):
            raise InvalidInputError(
                f"storage namespace {namespace!r} overlaps {folder!r}, a folder local imports"
                " read (KVLAKE_IMPORTS_LOCAL_PREFIXES), whose files kvlake must never delete;"
                " choose a namespace outside it"
            )
