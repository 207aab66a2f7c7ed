"""Retention: a repository's garbage collection rules, and the commits they keep.

Garbage collection may delete a committed blob only when no retained commit
references it (invariant 4a). Which commits are retained follows lakeFS
(pkg/graveler/retention): every branch head, and every dangling commit, is a
starting point, and from each the walk follows first parents:

- A branch's threshold is `now - days * 86400` seconds, with the branch's own
  days if the rules name it, else the default days. A branch head is always
  retained, whatever its age and even with 0 days.
- Walking down the first-parent line, the parent of a commit created after the
  threshold (strictly) is retained, and the walk stops at the first commit
  created at or before it: the walk keeps commits until and including the first
  one older than the threshold, which is what the branch pointed at when the
  retention period began. lakeFS's walk goes on to the root and would also keep
  the parent of any younger commit further down; with commit dates that only
  decrease down a line (all but hand-set `date`s) the two agree, and kvlake
  stops, as the rule says.
- A dangling commit is one that is no commit's first parent and no branch's
  head (lakeFS's "ancestry leaves": the tip of a deleted branch, a commit a hard
  reset left behind, a merged branch's tip reachable only as a second parent).
  It uses the default days, and counts as having a child of its own age: it is
  retained only if created after the default threshold, and then its line is
  walked like a branch's.
- Tags retain nothing, as in lakeFS.

Starting points run oldest threshold first, and a walk stops at a commit an
earlier walk reached with an older or equal threshold (that walk kept at
least as much below it), so each commit is walked about once. The commit that
stops a walk is still retained when the walk's last commit was young (lakeFS
checks the earlier walk first and can miss it), so the answer does not depend
on the order of starting points. Memory grows with the number of commits (an
id, a parent index and a date each, about 200 bytes), never with objects.

Commits are scanned before branches are read: a commit published meanwhile is
then a head, read on demand, and the head it replaced is only an extra
starting point. Reading branches first could see a new head as a young dangling
commit and, with 0 days, expire it.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from datetime import datetime
from typing import Final

from kvlake.errors import InvalidInputError
from kvlake.graveler.lifecycle.gcrules import GarbageCollectionRuleSettings
from kvlake.graveler.records import (
    Commit,
    CommitRecord,
    GarbageCollectionRules,
    Repository,
    RetainedCommit,
)
from kvlake.graveler.refs.store import Refs
from kvlake.kv import Store

DAY: Final = 86_400
"""Seconds in a retention day (UTC days: no calendar or daylight-saving shifts)."""
_BATCH: Final = 500
"""Retained commits whose metaranges are read in one batched KV call."""
_NO_PARENT: Final = -1


class _CommitGraph:
    """First parents and creation dates of a repository's commits, by dense index.

    Indices are given to ids on first sight, as a commit or as a parent; a parent
    not scanned (a commit published after the scan) is read when a walk reaches it.
    """

    def __init__(self, refs: Refs, repository: Repository) -> None:
        self._refs = refs
        self._repository = repository
        self._index: dict[str, int] = {}
        self.ids: list[str] = []
        self._parent = array("q")
        self._date = array("q")
        self._known = bytearray()
        self._first_parent = bytearray()
        """1 where a known commit has this one as its first parent."""
        self.reached = array("d")
        """The oldest threshold a walk reached each commit with (inf: none yet)."""
        self.kept = bytearray()

    def scan(self) -> None:
        for commit_id, commit in self._refs.list_commits(self._repository):
            self._add(commit_id, commit)

    def index(self, commit_id: str) -> int:
        """The commit's index, reading the commit if the scan did not see it."""
        index = self._slot(commit_id)
        if not self._known[index]:
            self._add(commit_id, self._refs.get_commit(self._repository, commit_id))
        return index

    def _slot(self, commit_id: str) -> int:
        index = self._index.get(commit_id)
        if index is None:
            index = self._index[commit_id] = len(self.ids)
            self.ids.append(commit_id)
            self._parent.append(_NO_PARENT)
            self._date.append(0)
            self._known.append(0)
            self._first_parent.append(0)
            self.reached.append(math.inf)
            self.kept.append(0)
        return index

    def _add(self, commit_id: str, commit: Commit) -> None:
        index = self._slot(commit_id)
        if commit.parents:  # a branch's own line: first parents only (merged-in lines are not)
            parent = self._slot(commit.parents[0])
            self._parent[index] = parent
            self._first_parent[parent] = 1
        self._date[index] = commit.creation_date
        self._known[index] = 1

    def leaves(self) -> Iterator[int]:
        """Known commits that are no known commit's first parent."""
        for index in range(len(self.ids)):
            if self._known[index] and not self._first_parent[index]:
                yield index

    def date(self, index: int) -> int:
        return self._date[self._loaded(index)]

    def parent(self, index: int) -> int:
        return self._parent[self._loaded(index)]

    def _loaded(self, index: int) -> int:
        return index if self._known[index] else self.index(self.ids[index])

    def walk(self, start: int, threshold: float, *, head: bool) -> Iterator[int]:
        """Retain from `start` down its first parents; yield each commit newly retained."""
        if head or self.date(start) > threshold:  # Heads are always kept.
            if self._keep(start):
                yield start
        else:
            return  # a dangling commit as old as its hypothetical child: nothing to keep
        current = start
        if self.reached[current] <= threshold:
            return  # an earlier walk went on from here with at least this retention
        self.reached[current] = threshold
        # Until and including the first commit created at or before the threshold.
        while self.date(current) > threshold:
            parent = self.parent(current)
            if parent == _NO_PARENT:
                return
            if self._keep(parent):
                yield parent
            if self.reached[parent] <= threshold:
                return
            self.reached[parent] = threshold
            current = parent

    def _keep(self, index: int) -> bool:
        if self.kept[index]:
            return False
        self.kept[index] = 1
        return True


class Retention:
    """Garbage collection rules and the commits they retain. Thread-safe."""

    def __init__(self, store: Store, refs: Refs) -> None:
        self._refs = refs
        self._rules = GarbageCollectionRuleSettings(store)

    def get_rules(self, repository: Repository) -> GarbageCollectionRules:
        """The repository's rules.

        Raises:
            NotFoundError: it has none.
        """
        return self._rules.get(repository)

    def set_rules(self, repository: Repository, rules: GarbageCollectionRules) -> None:
        """Replace the repository's rules (see `make_rules` for what is refused).

        Raises:
            InvalidInputError: a negative or non-integer day count, a malformed or
                repeated branch name; nothing was changed.
        """
        self._rules.set(repository, rules)

    def delete_rules(self, repository: Repository) -> None:
        """Remove the repository's rules; removing none is not an error."""
        self._rules.delete(repository)

    def list_commits(self, repository: Repository) -> Iterator[CommitRecord]:
        """Every commit record of the repository, in id order, streamed from the KV."""
        for commit_id, commit in self._refs.list_commits(repository):
            yield CommitRecord(id=commit_id, commit=commit)

    def retained_commits(
        self,
        repository: Repository,
        now: datetime | float,
        *,
        rules: GarbageCollectionRules | None = None,
    ) -> Iterator[RetainedCommit]:
        """Every commit the rules retain at `now`, each once, in no particular order.

        `now` is seconds since the epoch or a timezone-aware datetime; `rules`
        replaces the stored rules (a dry run of other rules). The walk is the
        module's: heads always, first parents until the first commit older than
        the threshold, dangling commits under the default rule.

        Raises:
            NotFoundError: no `rules` given and the repository has none (lakeFS's
                GC refuses to run without rules too).
            InvalidInputError: a naive datetime.
            CommitNotFoundError: a commit record a branch or commit names is missing.
        """
        moment = _seconds(now)
        chosen = rules if rules is not None else self._rules.get(repository)
        return self._retained(repository, moment, chosen)

    def _retained(
        self, repository: Repository, now: float, rules: GarbageCollectionRules
    ) -> Iterator[RetainedCommit]:
        graph = _CommitGraph(self._refs, repository)
        graph.scan()  # before the branches: see the module docstring
        default = now - rules.default_retention_days * DAY
        starts: list[tuple[float, int, bool]] = []
        for name, branch in self._refs.list_branches(repository):
            days = rules.branch_retention_days.get(name, rules.default_retention_days)
            starts.append((now - days * DAY, graph.index(branch.commit_id), True))
        heads = {index for _, index, _ in starts}
        starts.extend((default, i, False) for i in graph.leaves() if i not in heads)
        starts.sort(key=lambda start: start[0])  # oldest threshold first: walks stop early
        pending: list[str] = []
        for threshold, index, head in starts:
            for kept in graph.walk(index, threshold, head=head):
                pending.append(graph.ids[kept])
                if len(pending) >= _BATCH:
                    yield from self._with_metaranges(repository, pending)
                    pending = []
        yield from self._with_metaranges(repository, pending)

    def _with_metaranges(
        self, repository: Repository, commit_ids: list[str]
    ) -> Iterator[RetainedCommit]:
        commits = self._refs.get_commits(repository, commit_ids)
        for commit_id, commit in zip(commit_ids, commits, strict=True):
            yield RetainedCommit(commit_id=commit_id, metarange_id=commit.metarange_id)


def _seconds(now: datetime | float) -> float:
    if isinstance(now, datetime):
        if now.tzinfo is None or now.utcoffset() is None:
            raise InvalidInputError(
                f"retention time {now.isoformat()} has no timezone; pass an aware datetime"
                " (e.g. datetime.now(timezone.utc)) or seconds since the epoch"
            )
        return now.timestamp()
    if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
        raise InvalidInputError(f"retention time {now!r} is not a time; pass seconds or a datetime")
    return float(now)
