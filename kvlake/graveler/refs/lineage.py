"""What walks of the history read of a commit, and the skip pointers that let them jump.

A commit stored through `Refs.add_commit` or `Refs.create_commit` records three
walk fields beside the fields its id hashes (they stay out of `commit_id`, as
`creation_nanos` does, so ids are what they always were):

- `depth`, its place on its first-parent line: one more than its first parent's,
  or 1 where the line starts, at a root or at a first parent that records no depth
  (a commit stored before kvlake recorded depths, or whose first parent was not stored).
  0 means not recorded; walks then take first parents one read at a time.
- `skip`, the id of a first-parent ancestor further back, at depth `skip_depth`
  (Myers' skew-binary jump pointers, 1983): following skips and first parents
  reaches the ancestor at any depth in O(log depth) reads, so `main~50000` reads
  a few dozen commits, not 50,000. A new commit's skip is its parent or its
  parent's skip's skip, so stamping one costs at most one read beyond its parent.
- `merge_depth`, the depth of the nearest commit with several parents on its
  first-parent line (itself included), 0 if none down to depth 1: a merge base
  then knows, without reading it, that a stretch of the line is one plain chain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import msgspec

from kvlake.graveler.records import Commit


class Lineage(NamedTuple):
    """What a walk of the history needs of a commit: its parents, generation, date and
    walk fields (see the module docstring)."""

    parents: tuple[str, ...]
    generation: int
    creation_date: int
    creation_nanos: int
    depth: int = 0
    skip: str = ""
    merge_depth: int = 0


ReadOne = Callable[[str], Lineage]
"""Reads one commit's lineage; raises CommitNotFoundError."""
ReadMany = Callable[[Sequence[str]], dict[str, Lineage]]
"""Reads many commits' lineages in one round trip; raises CommitNotFoundError."""


def lineage_of(commit: Commit) -> Lineage:
    return Lineage(
        commit.parents,
        commit.generation,
        commit.creation_date,
        commit.creation_nanos,
        commit.depth,
        commit.skip,
        commit.merge_depth,
    )


def skip_depth(depth: int) -> int:
    """The depth a commit at `depth` (2 or more) skips back to.

    Write depth - 1 greedily as a sum of terms 2^k - 1 (skew binary); the skip goes
    back by the smallest term. That is the depth Myers' rule (skip to the parent's
    skip's skip when the parent's two skips are equally long, else to the parent)
    gives, as a function of the depth alone, so a walk knows where a skip lands
    before reading it.
    """
    position = rest = depth - 1
    while True:
        term = (1 << ((rest + 1).bit_length() - 1)) - 1
        if rest == term:
            return position - term + 1
        rest -= term


def first_parent_ancestor(
    read: ReadOne, commit_id: str, lineage: Lineage, count: int
) -> tuple[str, int]:
    """Walk `count` first parents back from `commit_id` (whose lineage is `lineage`),
    skipping where recorded; the commit reached is not read.

    Returns the commit reached, and how many steps were left when a commit without
    parents stopped the walk (0 when it got all the way).
    """
    while count > 0:
        goal = max(lineage.depth - count, 1)
        if lineage.depth > goal and lineage.skip and skip_depth(lineage.depth) >= goal:
            count -= lineage.depth - skip_depth(lineage.depth)
            commit_id = lineage.skip
        elif lineage.parents:
            count -= 1
            commit_id = lineage.parents[0]
        else:
            break
        if count:
            lineage = read(commit_id)
    return commit_id, count


def first_parent_meeting(
    read: ReadOne, read_many: ReadMany, left: Lineage, right: Lineage, ids: tuple[str, str]
) -> str | None:
    """The newest commit on the first-parent lines of both `ids` (whose lineages are
    `left` and `right`), found by their skips; None when the lines meet nowhere their
    depths reach (unrelated, or met only below where depths start): walk then.
    """
    if not left.depth or not right.depth:
        return None
    # Bring the deeper one up to the other's depth, then climb both in step.
    u, _ = first_parent_ancestor(read, ids[0], left, left.depth - right.depth)
    v, _ = first_parent_ancestor(read, ids[1], right, right.depth - left.depth)
    while u != v:
        found = read_many([u, v])
        lu, lv = found[u], found[v]
        if lu.depth <= 1 or lu.depth != lv.depth:
            return None
        if lu.skip and lv.skip and lu.skip != lv.skip:
            u, v = lu.skip, lv.skip
        else:
            u, v = lu.parents[0], lv.parents[0]
    return u


def stamp(read: ReadOne, commit: Commit) -> Commit:
    """`commit` with its walk fields set from its first parent's (read with `read`)."""
    if not commit.parents:
        return msgspec.structs.replace(commit, depth=1, skip="", merge_depth=0)
    parent_id = commit.parents[0]
    parent = read(parent_id)
    depth = parent.depth + 1 if parent.depth else 1
    if len(commit.parents) > 1:
        merge_depth = depth
    else:
        merge_depth = parent.merge_depth if parent.depth else 0
    skip = ""
    if depth > 1:
        skip, _ = first_parent_ancestor(read, parent_id, parent, parent.depth - skip_depth(depth))
    return msgspec.structs.replace(commit, depth=depth, skip=skip, merge_depth=merge_depth)


def unstamped(commit: Commit) -> Commit:
    """`commit` without walk fields: what a record whose fields nobody checked gets."""
    if not (commit.depth or commit.skip or commit.merge_depth):
        return commit
    return msgspec.structs.replace(commit, depth=0, skip="", merge_depth=0)
