"""Commit logs: the history reachable from a ref, newest first, one page at a time.

The walk is a priority queue ordered by creation time (newest first), then by
generation (highest first), then by commit id (highest first), as lakeFS orders
its logs. Creation times count nanoseconds (`Commit.creation_nanos`), so commits
made in one second log in the order they were made, as on lakeFS; whole-second
times remain where a caller dated a commit or a record came from a restore or
an older kvlake, and there the generation tie-break keeps a commit ahead of its
parents, so the walk yields exactly the reachable commits sorted by that key
(unless clocks went backwards). The order
is total, so a page boundary named by a commit id (`after`) always lands in the
same place.

A page's `next_offset` is a cursor: the last commit's id, then the walk's
frontier at that point (the commits queued but not yet yielded). The next page
resumes the walk from that frontier, so each page costs its own commits, not
the history before it (re-walking from the ref made paging through N commits
O(N^2 / page)). Nothing the frontier reaches was yielded before, since parents
come after their children in the order (only a clock that went backwards could
repeat a commit on a later page; none is ever lost). A
plain commit id as `after` (a client's own, or a frontier too wide to encode)
still works: the walk then starts at the ref and skips up to that commit.
Commits are read through
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
from kvlake.graveler.history.compare import compare
from kvlake.graveler.history.diff import prefix_end
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import Commit, CommitRecord, LogPage, Repository
from kvlake.graveler.refs.store import Refs
from kvlake.graveler.validation import is_commit_id

MAX_AMOUNT: Final = 1000
"""The most commits one log page returns, as in lakeFS."""
MAX_CURSOR_FRONTIER: Final = 16
"""Frontier commits a cursor carries; a wider frontier pages by re-walking instead."""

_REVERSE_HEX = str.maketrans("0123456789abcdef", "fedcba9876543210")


def _order(record: CommitRecord) -> tuple[int, int, int, str]:
    """Heap order: newest first (to the nanosecond), then highest generation, then highest id."""
    commit = record.commit
    return (
        -commit.creation_date,
        -commit.creation_nanos,
        -commit.generation,
        record.id.translate(_REVERSE_HEX),
    )


class CommitLog:
    """Walks commit histories of one graveler's repositories. Thread-safe."""

    def __init__(self, parts: Parts) -> None:
        self._refs, self._resolver, self._committed = parts.refs, parts.resolver, parts.committed

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
        stop_at: str = "",
        paths: Sequence[bytes] = (),
        prefixes: Sequence[bytes] = (),
    ) -> LogPage:
        """One page of the commits reachable from `ref`, newest first.

        Args:
            after: the `next_offset` of the previous page (a commit id).
            limit: return at most `amount` commits and report no further page.
            first_parent: follow only first parents (the branch's own line).
            since: stop at the first commit created before this time (seconds).
            stop_at: a ref; its commit is the last one listed (lakeFS: with `since`, the
                first condition met stops the log).
            paths, prefixes: keep only commits that changed one of these keys,
                or a key under one of these prefixes, against their first parent.

        Raises:
            InvalidInputError: a bad amount, `after`, path or prefix.
            RefNotFoundError: `ref` or `stop_at` names nothing.
        """
        if not isinstance(amount, int) or not 1 <= amount <= MAX_AMOUNT:
            raise InvalidInputError(f"log amount is {amount!r}; ask for 1 to {MAX_AMOUNT} commits")
        last, frontier = _parse_after(after)
        windows = _windows(paths, prefixes)
        start = self._resolver.resolve(repository, ref).commit_id
        stop = self._resolver.resolve(repository, stop_at).commit_id if stop_at else ""
        if frontier is not None:
            walk = _Walk(self._refs, repository, frontier, first_parent=first_parent, since=since)
        else:
            walk = _Walk(self._refs, repository, [start], first_parent=first_parent, since=since)
        records: Iterator[CommitRecord] = iter(walk)
        if last and frontier is None:
            records = _after(records, last)
        if windows:
            records = (r for r in records if self._touches(repository, r.commit, windows))
        if stop:
            records = _through(records, stop)
        page: list[CommitRecord] = []
        cursor = ""
        for record in records:
            if len(page) == amount:
                return LogPage(commits=page, has_more=not limit, next_offset=cursor)
            page.append(record)
            cursor = _cursor(record.id, walk.frontier())
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
        return iter(
            _Walk(self._refs, repository, [commit_id], first_parent=first_parent, since=since)
        )

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


class _Walk:
    """The heap walk, resumable: `frontier()` is what is queued after the last yield."""

    def __init__(
        self,
        refs: Refs,
        repository: Repository,
        starts: Sequence[str],
        *,
        first_parent: bool,
        since: float | None,
    ) -> None:
        self._refs = refs
        self._repository = repository
        self._first_parent = first_parent
        self._since = since
        self._queue: list[tuple[tuple[int, int, int, str], CommitRecord]] = []
        self._seen: set[str] = set()
        self._push(starts)

    def _push(self, commit_ids: Sequence[str]) -> None:
        """Queue the commits not seen yet, read in one `get_many` (a merge's parents)."""
        new = [i for i in dict.fromkeys(commit_ids) if i not in self._seen]
        self._seen.update(new)
        commits = self._refs.get_commits(self._repository, new)
        for commit_id, commit in zip(new, commits, strict=True):
            record = CommitRecord(id=commit_id, commit=commit)
            heapq.heappush(self._queue, (_order(record), record))

    def frontier(self) -> list[str]:
        return [record.id for _, record in self._queue]

    def __iter__(self) -> Iterator[CommitRecord]:
        while self._queue:
            _, record = heapq.heappop(self._queue)
            if self._since is not None and record.commit.creation_date < self._since:
                return
            parents = record.commit.parents
            # Before the yield: `frontier` is then exact.
            self._push(parents[:1] if self._first_parent else parents)
            yield record


def _cursor(last: str, frontier: list[str]) -> str:
    if len(frontier) > MAX_CURSOR_FRONTIER:
        return last  # pages on by re-walking up to `last`
    return "-".join([last, ".".join(frontier)])


def _parse_after(after: str) -> tuple[str, list[str] | None]:
    """The last commit of the previous page, and the frontier if `after` is a cursor."""
    if not after:
        return "", None
    last, dash, rest = after.partition("-")
    frontier = [i for i in rest.split(".") if i] if dash else None
    if not is_commit_id(last) or not all(is_commit_id(i) for i in frontier or ()):
        raise InvalidInputError(
            f"log after is {after[:80]!r}; pass the next_offset of the previous page"
            " (or a commit id)"
        )
    return last, frontier


def _after(records: Iterator[CommitRecord], after: str) -> Iterator[CommitRecord]:
    """The records that follow the one with id `after` (none if it never comes)."""
    for record in records:
        if record.id == after:
            yield from records
            return


def _through(records: Iterator[CommitRecord], last_id: str) -> Iterator[CommitRecord]:
    """`records` up to and including the one with id `last_id` (all, if none has it)."""
    for record in records:
        yield record
        if record.id == last_id:
            return
