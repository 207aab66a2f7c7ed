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
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from kvlake.graveler.records import Repository
from kvlake.graveler.refs.store import Lineage, Refs

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
    candidates = _paint_down_to_common(refs, repository, left, right)
    if len(candidates) > 1:
        candidates = _remove_redundant(refs, repository, candidates)
    if not candidates:
        return None
    return min(candidates, key=lambda c: _order(c, refs.get_lineage(repository, c)))


def _paint_down_to_common(refs: Refs, repository: Repository, left: str, right: str) -> list[str]:
    flags = {left: _LEFT, right: _RIGHT}
    queue: list[tuple[tuple[int, int, int, str], str]] = []
    for commit_id in (left, right):
        commit = refs.get_lineage(repository, commit_id)
        heapq.heappush(queue, (_order(commit_id, commit), commit_id))
    result: list[str] = []
    while any(not flags[commit_id] & _STALE for _, commit_id in queue):
        _, commit_id = heapq.heappop(queue)
        painted = flags[commit_id] & (_BOTH | _STALE)
        if painted == _BOTH:
            if commit_id not in result:
                result.append(commit_id)
            painted |= _STALE  # its ancestors are common too, but never better
        for parent_id in refs.get_lineage(repository, commit_id).parents:
            if flags.get(parent_id, 0) & painted == painted:
                continue
            flags[parent_id] = flags.get(parent_id, 0) | painted
            parent = refs.get_lineage(repository, parent_id)
            heapq.heappush(queue, (_order(parent_id, parent), parent_id))
    # A candidate painted stale later is an ancestor of a better one.
    return [commit_id for commit_id in result if not flags[commit_id] & _STALE]


def _remove_redundant(refs: Refs, repository: Repository, candidates: list[str]) -> list[str]:
    """Drop the candidates that are ancestors of another candidate."""
    kept = []
    for candidate in candidates:
        generation = refs.get_lineage(repository, candidate).generation
        others = [c for c in candidates if c != candidate]
        if candidate not in _reachable(refs, repository, others, generation):
            kept.append(candidate)
    return kept


def _reachable(refs: Refs, repository: Repository, starts: Iterable[str], lowest: int) -> set[str]:
    """Proper ancestors of `starts` down to generation `lowest`."""
    seen: set[str] = set()
    stack = list(starts)
    while stack:
        commit = refs.get_lineage(repository, stack.pop())
        for parent_id in commit.parents:
            if parent_id in seen:
                continue
            if refs.get_lineage(repository, parent_id).generation >= lowest:
                seen.add(parent_id)
                stack.append(parent_id)
    return seen
