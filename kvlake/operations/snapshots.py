"""Reads of a branch's staging that a bulk delete trusts: from one snapshot that held.

A staging token outlives the commit (or reset) that consumes it by the graveler's
`token_drop_delay`; a listing still open when the cleaner drops it reads the rest
of it as empty, silently (issue 22 #5). Enumeration checks its snapshot before it
writes what it listed (kvlake/operations/bulk_delete_driver.py); the range batches' reads of a
span's staged entries, at enumeration (`BulkDeleteDriver._range_batch`) and when a
batch is planned (`BatchProcessor._plan_range`, `_tombstoned_paths`), are listings too, so
they read through `staged_span`: the listing is taken whole, then its snapshot is
checked, and a listing whose snapshot may have lost a token is read again from a
fresh one.

Entries that a commit moved out of staging meanwhile are then committed data
in the new snapshot's head: `committed_since` finds those in a span of the base
commit's ranges, so a caller sees what the listing would have met staged.
"""

from __future__ import annotations

from typing import Final

from kvlake.errors import TooManyTriesError
from kvlake.graveler import RangeInfo, Repository, ResolvedRef, Value
from kvlake.operations.engines import EngineContext

SNAPSHOT_TRIES: Final = 10
"""Fresh snapshots a staged read takes before giving up (each lost one to a commit and
the whole token-drop delay, so more than a couple means the store is far too slow)."""

StagedEntries = list[tuple[bytes, Value | None]]


def snapshot_holds(
    context: EngineContext,
    repository: Repository,
    branch: str,
    snapshot: ResolvedRef,
    taken: float,
) -> bool:
    """Whether a listing of `snapshot` (the branch resolved at `taken`) has read every
    staged entry it met so far.

    Sound while the branch still holds every token of the snapshot, or within half the
    token-drop delay of the resolve (the other half is the margin for servers' clocks).
    """
    graveler = context.graveler
    if context.clock() < taken + graveler.token_drop_delay / 2:
        return True
    current = graveler.get_branch(repository, branch)
    return set(snapshot.staging_tokens) <= set(current.tokens())


def staged_span(
    context: EngineContext, repository: Repository, branch: str, low: bytes, stop: bytes
) -> tuple[ResolvedRef, StagedEntries]:
    """The branch's staged entries with `low` <= key < `stop` (None: deleted), read whole
    from a snapshot that held for the whole read, and that snapshot.

    Raises:
        TooManyTriesError: SNAPSHOT_TRIES snapshots in a row lost a token while being read.
    """
    graveler = context.graveler
    for _ in range(SNAPSHOT_TRIES):
        snapshot = graveler.resolve_ref(repository, branch)
        taken = context.clock()
        entries = list(graveler.list_staged(repository, snapshot, low, stop))
        if snapshot_holds(context, repository, branch, snapshot, taken):
            return snapshot, entries
    raise TooManyTriesError(
        f"the staging of branch {branch!r} was committed and dropped under {SNAPSHOT_TRIES} reads"
        " in a row; the batch is retried"
    )


def committed_since(
    context: EngineContext,
    repository: Repository,
    base_commit: str,
    ranges: list[RangeInfo],
    snapshot: ResolvedRef,
) -> dict[bytes, Value | None]:
    """Entries committed into the span of `ranges` (ranges of `base_commit`) since that
    commit: keys of the snapshot's head there that are no keys of those ranges.

    They are what a listing of staging would have met (or what was written since): a
    commit in between moved them out of staging, so records of the base ranges do not
    hide them.
    """
    if snapshot.commit_id == base_commit or not ranges:
        return {}
    committed = context.graveler.committed
    namespace = repository.storage_namespace
    low, high = ranges[0].min_key, ranges[-1].max_key
    ours = {info.id for info in ranges}
    found: dict[bytes, Value | None] = {}
    for info in committed.ranges(namespace, snapshot.commit.metarange_id):
        if info.max_key < low or info.min_key > high or info.id in ours:
            continue
        for key, value in committed.scan_range(namespace, info.id, low):
            if key > high:
                break
            found[key] = value
    if found:
        for info in ranges:
            for key in committed.range_columns(namespace, info.id).key_list():
                found.pop(key, None)
    return found
