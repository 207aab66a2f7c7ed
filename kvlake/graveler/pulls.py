"""Pull requests (lakeFS's): a proposal to merge one branch into another, with a title,
a description and a status (open, closed, merged).

Each is one record, `pulls/<id>` in the repository's instance partition, so
pull requests die with their repository; ids are uids, which sort by creation
time (to the millisecond) as lakeFS's xids do, so a listing is in creation order. Updates are
compare-and-swap, so racing edits of one pull request never lose each other.
A merge merges the source branch into the destination through the merge
engine (its checks, protection rules and conflicts apply), then records the
merge commit and the status `merged`; a merge that fails leaves it open.

Listing the open ones reads an index, `<id>` keys in the instance's
`open_pulls/<repo>-<uid>` partition, not the closed records
kept forever (issue 33). A key is written before a record becomes open (creation,
reopening) and again after; it is deleted after a record is closed, then the
record is read again and the key put back if a reopening raced in. So an open
pull request always has its key; a key may name a closed one for a moment (or
after a crash), and the listing that meets it unindexes it the same way. A
repository written before the index gets it built on first listing (a marker,
`indexes/open_pulls`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final, Literal

from kvlake import ids
from kvlake.errors import (
    PullRequestClosedError,
    PullRequestIdError,
    PullRequestNotFoundError,
    SameBranchError,
)
from kvlake.graveler import keys
from kvlake.graveler.history.merge import Merger
from kvlake.graveler.records import PullRequest, Repository, decode_pull_request, encode
from kvlake.graveler.refs.store import Refs, partition_of
from kvlake.graveler.validation import check_branch_name
from kvlake.kv import Store, get_or_none
from kvlake.kv import update as update_record

StatusFilter = Literal["open", "closed", "all"]
_PAGE: Final = 100
"""Open pull requests fetched in one `get_many`."""


class PullRequests:
    """Create, read, list, update and merge pull requests. Thread-safe."""

    def __init__(
        self, store: Store, refs: Refs, merges: Merger, clock: Callable[[], float]
    ) -> None:
        self._store = store
        self._refs = refs
        self._merges = merges
        self._clock = clock
        self._indexed: set[str] = set()
        """Instances whose open-pulls index this process saw built (it stays built)."""

    def create(
        self,
        repository: Repository,
        *,
        title: str,
        description: str,
        author: str,
        source: str,
        destination: str,
    ) -> str:
        """Open a pull request from `source` into `destination`; return its id.

        Raises:
            SameBranchError: the branches are one.
            BranchNotFoundError: either branch is missing.
        """
        check_branch_name(source)
        check_branch_name(destination)
        if source == destination:
            raise SameBranchError(
                f"a pull request merges one branch into another; {source!r} is both"
            )
        self._refs.load_branch(repository, source)
        self._refs.load_branch(repository, destination)
        pull_id = ids.new_uid()
        record = PullRequest(
            title=title,
            description=description,
            author=author,
            source=source,
            destination=destination,
            creation_date=self._clock(),
        )
        partition = partition_of(repository)
        self._build_open_index(repository)  # on a new repository: before its first record
        self._store.set(_index(partition), pull_id.encode(), b"")  # before it is open
        self._store.set_if(partition, keys.pull_key(pull_id), encode(record), None)
        return pull_id

    def get(self, repository: Repository, pull_id: str) -> PullRequest:
        """Raises PullRequestIdError (not an id), PullRequestNotFoundError."""
        return self._load(repository, pull_id)

    def list(
        self,
        repository: Repository,
        *,
        prefix: str = "",
        after: str = "",
        status: StatusFilter = "all",
    ) -> Iterator[tuple[str, PullRequest]]:
        """Pull requests in id order (creation order, to the millisecond), after `after`,
        ids starting with `prefix`; `closed` means closed or merged, as in lakeFS. The open
        ones are read through their index, past no closed record."""
        if status == "open":
            yield from self._open(repository, prefix=prefix, after=after)
            return
        start = keys.pull_key(max(prefix, after))
        with self._store.scan(partition_of(repository), start) as scan:
            for key, raw in scan:
                if not key.startswith(keys.pull_key(prefix)):
                    return
                pull_id = key[len(keys.PULL_PREFIX) :].decode()
                record = decode_pull_request(raw)
                if pull_id == after or not _wanted(record, status):
                    continue
                yield pull_id, record

    def update(
        self,
        repository: Repository,
        pull_id: str,
        *,
        title: str | None = None,
        description: str | None = None,
        status: Literal["open", "closed", "merged"] | None = None,
        merged_commit_id: str | None = None,
    ) -> PullRequest:
        """Change the given fields by compare-and-swap; return the stored record. A status
        of closed or merged sets `closed_date` (kept if reopened, as lakeFS keeps it).

        Raises:
            PullRequestIdError, PullRequestNotFoundError.
            TooManyTriesError: racing updates kept winning.
        """
        partition = partition_of(repository)
        key = _pull_key(pull_id)
        if status == "open":  # indexed before it can be open again
            self._load(repository, pull_id)
            self._store.set(_index(partition), pull_id.encode(), b"")

        def change(raw: bytes | None) -> bytes:
            # Run again on the record a racing update wrote.
            current = _found(repository, pull_id, raw)
            return encode(
                PullRequest(
                    title=current.title if title is None else title,
                    description=current.description if description is None else description,
                    author=current.author,
                    source=current.source,
                    destination=current.destination,
                    creation_date=current.creation_date,
                    status=current.status if status is None else status,
                    closed_date=self._clock()
                    if status in ("closed", "merged")
                    else current.closed_date,
                    merged_commit_id=merged_commit_id or current.merged_commit_id,
                )
            )

        what = f"updating pull request {pull_id!r}"
        changed = decode_pull_request(update_record(self._store, partition, key, change, what=what))
        if changed.status == "open":
            # Again after: a racing close may have deleted the key written before.
            self._store.set(_index(partition), pull_id.encode(), b"")
        else:
            self._unindex(partition, pull_id)
        return changed

    def merge(self, repository: Repository, pull_id: str, *, committer: str) -> str:
        """Merge an open pull request's source into its destination; return the commit id.

        Raises:
            PullRequestClosedError: it is closed or merged (nothing merged).
            PullRequestIdError, PullRequestNotFoundError.
            Whatever the merge raises (conflicts, protection, ...): it stays open.
        """
        pull = self.get(repository, pull_id)
        if pull.status != "open":
            raise PullRequestClosedError(
                f"pull request {pull_id!r} is {pull.status}; only an open one can be merged"
            )
        commit_id = self._merges.merge(
            repository, pull.source, pull.destination, committer=committer
        )
        self.update(repository, pull_id, status="merged", merged_commit_id=commit_id)
        return commit_id

    def _open(
        self, repository: Repository, *, prefix: str, after: str
    ) -> Iterator[tuple[str, PullRequest]]:
        """The open pull requests, from their index: one scan of it, one `get_many` a page."""
        partition = partition_of(repository)
        self._build_open_index(repository)
        first = prefix.encode()
        with self._store.scan(_index(partition), max(prefix, after).encode()) as scan:
            page: list[str] = []
            for key, _ in scan:
                if not key.startswith(first):
                    break
                pull_id = key.decode()
                if pull_id != after:
                    page.append(pull_id)
                if len(page) == _PAGE:
                    yield from self._open_page(partition, page)
                    page = []
            yield from self._open_page(partition, page)

    def _open_page(
        self, partition: bytes, pull_ids: Sequence[str]
    ) -> Iterator[tuple[str, PullRequest]]:
        if not pull_ids:
            return
        found = self._store.get_many(partition, [keys.pull_key(i) for i in pull_ids])
        for pull_id in pull_ids:
            raw = found.get(keys.pull_key(pull_id))
            if raw is None:
                continue  # a creation about to write its record
            record = decode_pull_request(raw)
            if record.status == "open":
                yield pull_id, record
            else:
                self._unindex(partition, pull_id)  # its close stopped before unindexing

    def _unindex(self, partition: bytes, pull_id: str) -> None:
        """Delete a closed pull request's key, then read the record again and put the key
        back if a reopening raced in (it writes the key before and after its swap)."""
        self._store.delete(_index(partition), pull_id.encode())
        loaded = get_or_none(self._store, partition, keys.pull_key(pull_id))
        if loaded is not None and decode_pull_request(loaded[0]).status == "open":
            self._store.set(_index(partition), pull_id.encode(), b"")

    def _build_open_index(self, repository: Repository) -> None:
        """Index the open pull requests of a repository written before the index, once (a
        marker in its partition says it was done; this process remembers it per instance)."""
        if repository.instance_uid in self._indexed:
            return
        partition = partition_of(repository)
        if get_or_none(self._store, partition, keys.OPEN_PULLS_BUILT) is None:
            with self._store.scan(partition, keys.PULL_PREFIX) as scan:
                open_ids = []
                for key, raw in scan:
                    if not key.startswith(keys.PULL_PREFIX):
                        break
                    if decode_pull_request(raw).status == "open":
                        open_ids.append(key[len(keys.PULL_PREFIX) :].decode())
            self._store.set_many(_index(partition), ((i.encode(), b"") for i in open_ids))
            self._store.set(partition, keys.OPEN_PULLS_BUILT, b"")
        self._indexed.add(repository.instance_uid)

    def _load(self, repository: Repository, pull_id: str) -> PullRequest:
        loaded = get_or_none(self._store, partition_of(repository), _pull_key(pull_id))
        return _found(repository, pull_id, None if loaded is None else loaded[0])


def _pull_key(pull_id: str) -> bytes:
    """The record's key. Raises PullRequestIdError when the text cannot be an id."""
    if not ids.is_uid(pull_id):
        raise PullRequestIdError(f"{pull_id!r} is not a pull request id")
    return keys.pull_key(pull_id)


def _found(repository: Repository, pull_id: str, raw: bytes | None) -> PullRequest:
    """The record read, or PullRequestNotFoundError when there was none."""
    if raw is None:
        raise PullRequestNotFoundError(
            f"no pull request {pull_id!r} in repository {repository.name!r}"
        )
    return decode_pull_request(raw)


def _index(partition: bytes) -> bytes:
    """The open-pulls index partition of an instance partition (`keys.open_pulls_partition`)."""
    return keys.OPEN_PULLS_PREFIX + partition


def _wanted(record: PullRequest, status: StatusFilter) -> bool:
    if status == "open":
        return record.status == "open"
    if status == "closed":
        return record.status != "open"
    return True
