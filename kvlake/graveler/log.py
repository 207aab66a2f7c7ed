"""Commit logs: the history reachable from a ref, newest first, one page at a time.

The walk is a priority queue ordered by creation time (newest first), then by
generation (highest first), then by commit id (highest first). Creation times
are whole seconds, so ties are common; the generation tie-break keeps a commit
ahead of its parents when they share a second, so the walk yields exactly the
reachable commits sorted by that key (unless clocks went backwards). The order
is total, so a page boundary named by a commit id (`after`) always lands in the
same place. Commits are read through
the refs' commit cache, so paging through a long log reads each commit from the
KV store once. Filtering by paths compares each commit with its first parent
over just those keys: ranges both share are skipped by id, so a commit that did
not touch the paths costs no range reads at all.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from typing import Final

from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.compare import compare
from kvlake.graveler.diff import prefix_end
from kvlake.graveler.records import Commit, CommitRecord, LogPage, Repository
from kvlake.graveler.refexpr import RefResolver
from kvlake.graveler.refs import Refs
from kvlake.graveler.validation import is_commit_id

MAX_AMOUNT: Final = 1000
"""The most commits one log page returns, as in lakeFS."""

_REVERSE_HEX = str.maketrans("0123456789abcdef", "fedcba9876543210")


def _order(record: CommitRecord) -> tuple[int, int, str]:
    """Heap order: newest first, then highest generation, then highest id."""
    commit = record.commit
    return (-commit.creation_date, -commit.generation, record.id.translate(_REVERSE_HEX))


class CommitLog:
    """Walks commit histories of one graveler's repositories. Thread-safe."""

    def __init__(self, *, refs: Refs, resolver: RefResolver, committed: CommittedManager) -> None:
        self._refs = refs
        self._resolver = resolver
        self._committed = committed

    def log(
        self,
        repository: Repository,
        ref: str,
        *,
        after: str = "",
        amount: int = 100,
        limit: bool = False,
        first_parent: bool = False,
        since: float | None = None,
        paths: Sequence[bytes] = (),
        prefixes: Sequence[bytes] = (),
    ) -> LogPage:
        """One page of the commits reachable from `ref`, newest first.

        Args:
            after: the `next_offset` of the previous page (a commit id).
            limit: return at most `amount` commits and report no further page.
            first_parent: follow only first parents (the branch's own line).
            since: stop at the first commit created before this time (seconds).
            paths, prefixes: keep only commits that changed one of these keys,
                or a key under one of these prefixes, against their first parent.

        Raises:
            InvalidInputError: a bad amount, `after`, path or prefix.
            RefNotFoundError: `ref` names nothing.
        """
        if not isinstance(amount, int) or not 1 <= amount <= MAX_AMOUNT:
            raise InvalidInputError(f"log amount is {amount!r}; ask for 1 to {MAX_AMOUNT} commits")
        if after and not is_commit_id(after):
            raise InvalidInputError(
                f"log after is {after!r}; pass the next_offset of the previous page (a commit id)"
            )
        windows = _windows(paths, prefixes)
        start = self._resolver.resolve(repository, ref).commit_id
        records = self.walk(repository, start, first_parent=first_parent, since=since)
        if after:
            records = _after(records, after)
        if windows:
            records = (r for r in records if self._touches(repository, r.commit, windows))
        page: list[CommitRecord] = []
        for record in records:
            if len(page) == amount:
                has_more = not limit
                return LogPage(commits=page, has_more=has_more, next_offset=page[-1].id)
            page.append(record)
        return LogPage(commits=page, has_more=False, next_offset="")

    def walk(
        self,
        repository: Repository,
        commit_id: str,
        *,
        first_parent: bool = False,
        since: float | None = None,
    ) -> Iterator[CommitRecord]:
        """Every commit reachable from `commit_id`, newest first, each once."""
        first = CommitRecord(id=commit_id, commit=self._refs.get_commit(repository, commit_id))
        queue = [(_order(first), first)]
        seen = {commit_id}
        while queue:
            _, record = heapq.heappop(queue)
            if since is not None and record.commit.creation_date < since:
                return
            yield record
            parents = record.commit.parents[:1] if first_parent else record.commit.parents
            for parent_id in parents:
                if parent_id in seen:
                    continue
                seen.add(parent_id)
                parent = CommitRecord(
                    id=parent_id, commit=self._refs.get_commit(repository, parent_id)
                )
                heapq.heappush(queue, (_order(parent), parent))

    def _touches(
        self, repository: Repository, commit: Commit, windows: list[tuple[bytes, bytes | None]]
    ) -> bool:
        """Whether `commit` changed a key in one of the windows, against its first parent."""
        namespace = repository.storage_namespace
        if commit.parents:
            before = self._refs.get_commit(repository, commit.parents[0]).metarange_id
        else:
            before = self._committed.empty_metarange(namespace)
        if before == commit.metarange_id:
            return False
        for start, stop in windows:
            changes = compare(
                self._committed, namespace, before, commit.metarange_id, start=start, stop=stop
            )
            if next(changes, None) is not None:
                return True
        return False


def _windows(paths: Sequence[bytes], prefixes: Sequence[bytes]) -> list[tuple[bytes, bytes | None]]:
    """Key windows [start, stop) for paths and prefixes, checked once before the walk."""
    if isinstance(paths, bytes | str) or isinstance(prefixes, bytes | str):
        raise InvalidInputError("log paths and prefixes are lists of keys; wrap a single key")
    windows: list[tuple[bytes, bytes | None]] = []
    for path in paths:
        if not isinstance(path, bytes) or not path:
            raise InvalidInputError(f"log path {path!r} is invalid; pass non-empty bytes")
        windows.append((path, path + b"\0"))
    for prefix in prefixes:
        if not isinstance(prefix, bytes) or not prefix:
            raise InvalidInputError(f"log prefix {prefix!r} is invalid; pass non-empty bytes")
        windows.append((prefix, prefix_end(prefix)))
    return windows


def _after(records: Iterator[CommitRecord], after: str) -> Iterator[CommitRecord]:
    """The records that follow the one with id `after` (none if it never comes)."""
    for record in records:
        if record.id == after:
            yield from records
            return
