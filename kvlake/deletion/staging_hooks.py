"""The writer flow's hooks into the deletion log: staged blobs replaced, removed or restaged.

Graveler's writer flow and its resets know nothing of blobs (values are
opaque), so they call these hooks (graveler's `StagingHooks`) where a staged
value loses its place or gains a second one:
- before a staged value is replaced in place or removed (an overwrite, a
  deletion's tombstone, a reset), its blob is logged (`overwritten_staged` or
  `deleted_staged`) with the token and path it leaves: invariant 4, the intent
  is durable before the reference goes. A replacement that references the same
  blob logs nothing. A batch (a bulk delete's tombstones) is logged as batch
  records, a thousand blobs to a KV row (`DeletionLog.new_batch`).
- before a value that may also be committed, or staged in a sealed token, is
  staged in another token (a writer's re-write after a seal, a reset's shadow
  of a committed value), its address is marked shared, as a copy's is: a
  later replacement in one place then leaves it to garbage collection, which
  sees every reference. Marked even with deletion disabled, so enabling it
  later stays safe.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvlake.deletion.log import DeletionLog, EntryOf
from kvlake.deletion.records import Member, Origin
from kvlake.graveler import Repository, Value


class StagingLogHooks:
    """Implements graveler's `StagingHooks` with the deletion log. Thread-safe."""

    def __init__(self, log: DeletionLog, entry_of: EntryOf) -> None:
        self._log = log
        self._entry_of = entry_of

    def before_unstage(
        self,
        repository: Repository,
        token: str,
        entries: Sequence[tuple[bytes, Value]],
        replacement: Value | None,
    ) -> None:
        """Log the blobs these entries reference; raise (and so change nothing) on failure."""
        if not self._log.enabled:
            return
        kept = "" if replacement is None else self._entry_of(replacement).address
        origin: Origin = "deleted_staged" if replacement is None else "overwritten_staged"
        members: list[Member] = []
        for key, value in entries:
            old = self._entry_of(value)
            if old.address and old.address != kept:
                members.append(Member(old.address, key, old.since))
        if members:
            # One record per thousand blobs (a batch of tombstones), not one each.
            self._log.append(self._log.new_batch(repository, origin, members, staging_token=token))

    def before_restage(self, repository: Repository, values: Sequence[Value]) -> None:
        """Mark the values' addresses shared before they are staged in a second place."""
        for value in values:
            address = self._entry_of(value).address
            if address:
                self._log.mark_shared(repository.instance_uid, address)
