"""What lakeFS's own garbage collector asks the server for: the commits to keep and the
addresses only staging references, written as files in the storage namespace.

lakeFS's Spark GC client does not read the KV. It asks the server to prepare
two inputs and reads them from the namespace (kvlake runs its own GC too,
kvlake/pipelines/gc/collector.py, from the same two sources):

- **Commits** (`prepareGarbageCollectionCommits`): every commit the repository's
  GC rules retain now, the graveler's retention walk (kvlake/graveler/lifecycle/retention.py),
  as a CSV at `_lakefs/retention/gc/commits/run_id=<run id>/commits.csv` with
  lakeFS's header `commit_id,expired,metarange_id`. As in lakeFS, only retained
  commits are listed (`expired` is always `false`); a commit missing from the
  file is expired. A repository without rules is refused before anything is
  written (lakeFS's client then keeps every commit).
- **Uncommitted** (`prepareGarbageCollectionUncommitted`): the address and
  creation time (whole seconds) of every staged entry of every branch, the
  staging token and the sealed ones, as Parquet files (`physical_address`,
  `creation_date`) under `_lakefs/retention/gc/uncommitted/<run id>/uncommitted/`.
  Tombstones and imported entries (data kvlake does not own) have no address
  and are left out. One call writes at most `page_size` rows in one file and
  answers a mark for the next entry; the client calls again with it until no
  mark comes back. Entries are read in (branch, token, path) order, so a mark
  names where the next call starts; an entry staged meanwhile before the mark is
  not listed, as in lakeFS (the client's grace period covers recent uploads).

Files are written through the blockstore (spooled to local disk first, so memory
holds one batch), so local and s3 namespaces work alike; the locations answered
are the namespace URL plus the key.
"""

from __future__ import annotations

import base64
import binascii
import csv
import io
import tempfile
from collections.abc import Iterator
from typing import Final

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.catalog.references import entry_ref
from kvlake.errors import BranchNotFoundError, InvalidInputError
from kvlake.graveler import Graveler, Repository, check_branch_name

GC_PREFIX: Final = "_lakefs/retention/gc/"
ADDRESSES_PREFIX: Final = GC_PREFIX + "addresses/"
"""Where lakeFS's client writes the addresses it marks (answered, never written here)."""
COMMITS_HEADER: Final = ("commit_id", "expired", "metarange_id")
UNCOMMITTED_SCHEMA: Final = pa.schema(
    [("physical_address", pa.string()), ("creation_date", pa.int64())]
)
PAGE_SIZE: Final = 500_000
"""Rows one uncommitted call writes (about 20 MB of Parquet, lakeFS's file size)."""
PRESIGN_SECONDS: Final = 900
"""How long the commits file's presigned URL is valid (lakeFS's default, 15 minutes)."""
_BATCH: Final = 10_000
_SPOOL_BYTES: Final = 8 << 20


def commits_key(run_id: str) -> str:
    return f"{GC_PREFIX}commits/run_id={run_id}/commits.csv"


def uncommitted_prefix(run_id: str) -> str:
    return f"{GC_PREFIX}uncommitted/{run_id}/uncommitted/"


def location(repository: Repository, key: str) -> str:
    """The full URL of `key` in the repository's namespace, as lakeFS answers locations."""
    return f"{repository.storage_namespace.rstrip('/')}/{key}"


class PreparedCommits(msgspec.Struct, frozen=True, kw_only=True):
    """A commits file written: lakeFS's GarbageCollectionPrepareResponse."""

    run_id: str
    commits_location: str
    addresses_location: str
    presigned_url: str | None = None


class UncommittedMark(msgspec.Struct, frozen=True, kw_only=True):
    """Where the next uncommitted call starts: an entry not yet listed.

    The field names are lakeFS's (its client only passes the token back).
    """

    run_id: str
    branch: str
    token: str
    path: str


class PreparedUncommitted(msgspec.Struct, frozen=True, kw_only=True):
    """One uncommitted call's answer: lakeFS's PrepareGCUncommittedResponse."""

    run_id: str
    location: str
    """The run's folder, once any call of the run wrote rows; "" while none did."""
    mark: UncommittedMark | None = None


_encode_mark = msgspec.json.Encoder().encode
_decode_mark = msgspec.json.Decoder(UncommittedMark).decode


def encode_mark(mark: UncommittedMark) -> str:
    return base64.b64encode(_encode_mark(mark)).decode()


def decode_mark(token: str) -> UncommittedMark:
    """A continuation token back to its mark.

    Raises:
        InvalidInputError: not a token a previous call answered (lakeFS's text).
    """
    try:
        mark = _decode_mark(base64.b64decode(token, validate=True))
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise InvalidInputError("invalid continuation token") from None
    # The run id and branch become keys and listing bounds: only well-formed ones.
    try:
        check_branch_name(mark.branch)
    except InvalidInputError:
        raise InvalidInputError("invalid continuation token") from None
    if not ids.is_uid(mark.run_id):
        raise InvalidInputError("invalid continuation token")
    return mark


class GcPreparation:
    """Writes the files lakeFS's GC client reads. Thread-safe; no state of its own."""

    def __init__(
        self, graveler: Graveler, blockstore: BlockStore, *, page_size: int = PAGE_SIZE
    ) -> None:
        self._graveler = graveler
        self._blockstore = blockstore
        self._page_size = page_size

    def prepare_commits(self, repository: Repository, run_id: str = "") -> PreparedCommits:
        """Write the commits the rules retain now as the run's commits.csv (`run_id`:
        the run's id, a uid; '' for a new one).

        Raises:
            NotFoundError: the repository has no GC rules; nothing is written.
        """
        retention = self._graveler.retention
        rules = retention.get_rules(repository)
        run_id = run_id or ids.new_uid()
        key = commits_key(run_id)
        retained = retention.retained_commits(repository, self._graveler.clock(), rules=rules)
        with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
            text = io.TextIOWrapper(spool, encoding="utf-8", newline="")
            rows = csv.writer(text, lineterminator="\n")
            rows.writerow(COMMITS_HEADER)
            rows.writerows((kept.commit_id, "false", kept.metarange_id) for kept in retained)
            text.flush()
            spool.seek(0)
            self._blockstore.put(repository.storage_namespace, key, spool)  # type: ignore[arg-type]
            text.detach()
        return PreparedCommits(
            run_id=run_id,
            commits_location=location(repository, key),
            addresses_location=location(repository, ADDRESSES_PREFIX),
            presigned_url=self.presign(repository, run_id),
        )

    def check_rules(self, repository: Repository) -> None:
        """Refuse a repository without GC rules before anything is recorded or written.

        Raises:
            NotFoundError: the repository has no GC rules.
        """
        self._graveler.retention.get_rules(repository)

    def commits_of(self, repository: Repository, run_id: str) -> PreparedCommits:
        """The answer for a run whose commits were written (an async task's result)."""
        return PreparedCommits(
            run_id=run_id,
            commits_location=location(repository, commits_key(run_id)),
            addresses_location=location(repository, ADDRESSES_PREFIX),
            presigned_url=self.presign(repository, run_id),
        )

    def presign(self, repository: Repository, run_id: str) -> str | None:
        """A URL to download the commits file, where the blockstore signs URLs."""
        if not self._blockstore.presigns:
            return None
        return self._blockstore.presign_read(
            repository.storage_namespace, commits_key(run_id), expires=PRESIGN_SECONDS
        )

    def prepare_uncommitted(
        self, repository: Repository, mark: UncommittedMark | None = None
    ) -> PreparedUncommitted:
        """Write the next page of staged addresses, from `mark` (None: a new run).

        Returns the run id, the run's folder, and the mark of the next call (None:
        the run is complete).
        """
        run_id = mark.run_id if mark is not None else ids.new_uid()
        prefix = uncommitted_prefix(run_id)
        rows = 0
        next_mark: UncommittedMark | None = None
        with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
            writer = pq.ParquetWriter(spool, UNCOMMITTED_SCHEMA)
            addresses: list[str] = []
            dates: list[int] = []
            for branch, token, path, address, mtime in self._staged(repository, mark):
                if rows == self._page_size:
                    next_mark = UncommittedMark(
                        run_id=run_id, branch=branch, token=token, path=path
                    )
                    break
                addresses.append(address)
                dates.append(int(mtime))
                rows += 1
                if len(addresses) == _BATCH:
                    writer.write_batch(_batch(addresses, dates))
                    addresses, dates = [], []
            if addresses:
                writer.write_batch(_batch(addresses, dates))
            writer.close()
            if rows:
                spool.seek(0)
                name = prefix + ids.new_uid()
                self._blockstore.put(repository.storage_namespace, name, spool)  # type: ignore[arg-type]
        # A mark is answered only after a page with rows: a later call's run has data.
        written = rows > 0 or mark is not None
        return PreparedUncommitted(
            run_id=run_id,
            location=location(repository, prefix) if written else "",
            mark=next_mark,
        )

    def _staged(
        self, repository: Repository, mark: UncommittedMark | None
    ) -> Iterator[tuple[str, str, str, str, float]]:
        """(branch, token, path, address, mtime) of staged entries with an address, from
        `mark` on, in (branch, token, path) order."""
        after = ""
        if mark is not None:
            after = mark.branch
            try:
                branch = self._graveler.get_branch(repository, mark.branch)
            except BranchNotFoundError:
                pass  # deleted since the last call: its entries are no longer staged
            else:
                tokens = [branch.staging_token, *branch.sealed_tokens]
                start = b""
                if mark.token in tokens:  # else committed since: list the branch's tokens
                    tokens, start = tokens[tokens.index(mark.token) :], mark.path.encode()
                yield from self._entries(mark.branch, tokens, start)
        for name, branch in self._graveler.list_branches(repository, after=after):
            yield from self._entries(name, [branch.staging_token, *branch.sealed_tokens], b"")

    def _entries(
        self, branch: str, tokens: list[str], start: bytes
    ) -> Iterator[tuple[str, str, str, str, float]]:
        references = self._graveler.references
        for token in tokens:
            for page in references.staged_pages(token, batch_size=_BATCH, start=start):
                for key, value in page:
                    ref = entry_ref(value) if value is not None else None
                    if ref is not None and ref.address:
                        yield branch, token, key.decode(), ref.address, ref.since
            start = b""  # only the mark's token starts past its first path


def _batch(addresses: list[str], dates: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(addresses, pa.string()), pa.array(dates, pa.int64())],
        schema=UNCOMMITTED_SCHEMA,
    )
