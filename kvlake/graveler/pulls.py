"""Pull requests (lakeFS's): a proposal to merge one branch into another, with a title,
a description and a status (open, closed, merged).

Each is one record, `pulls/<id>` in the repository's instance partition, so
pull requests die with their repository; ids are uids, which sort by creation
time (to the millisecond) as lakeFS's xids do, so a listing is in creation order. Updates are
compare-and-swap, so racing edits of one pull request never lose each other.
A merge merges the source branch into the destination through the merge
engine (its checks, protection rules and conflicts apply), then records the
merge commit and the status `merged`; a merge that fails leaves it open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final, Literal

from kvlake import ids
from kvlake.errors import (
    KeyNotFoundError,
    PreconditionFailedError,
    PullRequestClosedError,
    PullRequestIdError,
    PullRequestNotFoundError,
    SameBranchError,
    TooManyTriesError,
)
from kvlake.graveler import keys
from kvlake.graveler.merge import Merger
from kvlake.graveler.records import PullRequest, Repository, decode_pull_request, encode
from kvlake.graveler.refs import Refs, partition_of
from kvlake.graveler.validation import check_branch_name
from kvlake.kv import Predicate, Store

StatusFilter = Literal["open", "closed", "all"]
_TRIES: Final = 10


class PullRequests:
    """Create, read, list, update and merge pull requests. Thread-safe."""

    def __init__(
        self, store: Store, refs: Refs, merges: Merger, clock: Callable[[], float]
    ) -> None:
        self._store = store
        self._refs = refs
        self._merges = merges
        self._clock = clock

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
        self._store.set_if(partition_of(repository), keys.pull_key(pull_id), encode(record), None)
        return pull_id

    def get(self, repository: Repository, pull_id: str) -> PullRequest:
        """Raises PullRequestIdError (not an id), PullRequestNotFoundError."""
        return self._load(repository, pull_id)[0]

    def list(
        self,
        repository: Repository,
        *,
        prefix: str = "",
        after: str = "",
        status: StatusFilter = "all",
    ) -> Iterator[tuple[str, PullRequest]]:
        """Pull requests in id order (creation order, to the millisecond), after `after`,
        ids starting with `prefix`; `closed` means closed or merged, as in lakeFS."""
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
        for _ in range(_TRIES):
            current, predicate = self._load(repository, pull_id)
            changed = PullRequest(
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
            try:
                self._store.set_if(
                    partition_of(repository), keys.pull_key(pull_id), encode(changed), predicate
                )
            except PreconditionFailedError:
                continue
            return changed
        raise TooManyTriesError(f"pull request {pull_id!r} kept changing; retry the update")

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

    def _load(self, repository: Repository, pull_id: str) -> tuple[PullRequest, Predicate]:
        if not ids.is_uid(pull_id):
            raise PullRequestIdError(f"{pull_id!r} is not a pull request id")
        try:
            raw, predicate = self._store.get(partition_of(repository), keys.pull_key(pull_id))
        except KeyNotFoundError:
            raise PullRequestNotFoundError(
                f"no pull request {pull_id!r} in repository {repository.name!r}"
            ) from None
        return decode_pull_request(raw), predicate


def _wanted(record: PullRequest, status: StatusFilter) -> bool:
    if status == "open":
        return record.status == "open"
    if status == "closed":
        return record.status != "open"
    return True
