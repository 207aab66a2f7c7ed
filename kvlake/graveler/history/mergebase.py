"""The merge base of two commits: their best common ancestor, found as git finds it.

Every commit carries a generation number (1 for a root, one more than its
highest parent otherwise), so no ancestor has a generation as high as its
descendants. The walk ("paint down to common") pops commits highest
generation first and paints each with the sides it is reachable from; a
commit painted by both sides is a candidate and its ancestors are marked
stale, and the walk stops once only stale commits are queued. It therefore
reads the commits since the histories diverged, not the whole history.
Candidates that are ancestors of other candidates are dropped; of the rest
(several after criss-cross merges) the one with the highest generation wins,
ties going to the newest, then to the highest id, so the answer is stable.

The walk reads a whole generation at a time: the commits queued at the highest
generation are popped together (none is an ancestor of another, so each is fully
painted) and their parents read in one `get_many`. Before it, the commits' skip
pointers (`kvlake.graveler.refs.lineage`) find where the two first-parent lines
meet in O(log n) reads; when neither line has a merge above that commit, it is
the merge base (every other common ancestor is its ancestor), and nothing else
is read: two branches forked 50,000 commits ago cost a few dozen reads.
"""

from __future__ import annotations

import heapq

from kvlake.graveler.records import Repository
from kvlake.graveler.refs.lineage import Lineage, first_parent_meeting
from kvlake.graveler.refs.store import Refs

_LEFT = 1
_RIGHT = 2
_STALE = 4
_BOTH = _LEFT | _RIGHT


def _order(commit_id: str, commit: Lineage) -> tuple[int, int, int, str]:
    """Heap order: highest generation first, then newest (to the nanosecond), then highest
    id (all negated)."""
    return (-commit.generation, -commit.creation_date, -commit.creation_nanos, _negate(commit_id))


def _negate(commit_id: str) -> str:
    """A string that sorts in the reverse order of hex commit ids."""
    return commit_id.translate(_REVERSE_HEX)


_REVERSE_HEX = str.maketrans("0123456789abcdef", "fedcba9876543210")


def find_merge_base(refs: Refs, repository: Repository, left: str, right: str) -> str | None:
    """The best common ancestor of two commits (either may be it), or None if unrelated.

    Raises:
        CommitNotFoundError: a commit of either history is missing.
    """
    if left == right:
        return left
    meeting = _plain_meeting(refs, repository, left, right)
    if meeting is not None:
        return meeting
    candidates = _paint_down_to_common(refs, repository, left, right)
    if len(candidates) > 1:
        candidates = _remove_redundant(refs, repository, candidates)
    if not candidates:
        return None
    lineages = refs.get_lineages(repository, candidates)
    return min(candidates, key=lambda c: _order(c, lineages[c]))


def _plain_meeting(refs: Refs, repository: Repository, left: str, right: str) -> str | None:
    """Where the first-parent lines meet, if that is the merge base for sure: one line
    leads to the other, or neither has a merge above the meeting."""
    found = refs.get_lineages(repository, (left, right))
    meeting = first_parent_meeting(
        lambda i: refs.get_lineage(repository, i),
        lambda ids: refs.get_lineages(repository, ids),
        found[left],
        found[right],
        (left, right),
    )
    if meeting is None or meeting in (left, right):
        return meeting
    depth = refs.get_lineage(repository, meeting).depth
    if found[left].merge_depth <= depth and found[right].merge_depth <= depth:
        return meeting
    return None


def _paint_down_to_common(refs: Refs, repository: Repository, left: str, right: str) -> list[str]:
    flags = {left: _LEFT, right: _RIGHT}
    lineages = refs.get_lineages(repository, (left, right))
    queue = [(_order(commit_id, lineages[commit_id]), commit_id) for commit_id in (left, right)]
    heapq.heapify(queue)
    result: list[str] = []
    while any(not flags[commit_id] & _STALE for _, commit_id in queue):
        # The whole highest generation: none is another's ancestor, so each is painted.
        generation = queue[0][0][0]
        popped = []
        while queue and queue[0][0][0] == generation:
            popped.append(heapq.heappop(queue)[1])
        pushed: list[str] = []
        for commit_id in popped:
            painted = flags[commit_id] & (_BOTH | _STALE)
            if painted == _BOTH:
                if commit_id not in result:
                    result.append(commit_id)
                painted |= _STALE  # its ancestors are common too, but never better
            for parent_id in lineages[commit_id].parents:
                if flags.get(parent_id, 0) & painted == painted:
                    continue
                if parent_id not in flags:
                    pushed.append(parent_id)
                flags[parent_id] = flags.get(parent_id, 0) | painted
        lineages.update(refs.get_lineages(repository, pushed))
        for parent_id in pushed:
            heapq.heappush(queue, (_order(parent_id, lineages[parent_id]), parent_id))
    # A candidate painted stale later is an ancestor of a better one.
    return [commit_id for commit_id in result if not flags[commit_id] & _STALE]


def _remove_redundant(refs: Refs, repository: Repository, candidates: list[str]) -> list[str]:
    """Drop the candidates that are ancestors of another candidate."""
    kept = []
    lineages = refs.get_lineages(repository, candidates)
    for candidate in candidates:
        others = [c for c in candidates if c != candidate]
        if candidate not in _reachable(refs, repository, others, lineages[candidate].generation):
            kept.append(candidate)
    return kept


def _reachable(refs: Refs, repository: Repository, starts: list[str], lowest: int) -> set[str]:
    """Proper ancestors of `starts` down to generation `lowest`, a level (one
    `get_many`) at a time."""
    seen: set[str] = set()
    level = starts
    while level:
        parents = {
            p for lineage in refs.get_lineages(repository, level).values() for p in lineage.parents
        }
        parents -= seen
        found = refs.get_lineages(repository, list(parents))
        level = [p for p in parents if found[p].generation >= lowest]
        seen.update(level)
    return seen
