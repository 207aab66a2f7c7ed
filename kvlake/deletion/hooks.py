"""The cleaner's hooks into the deletion log: dropped staging tokens and purged repositories.

Graveler's cleaner knows nothing of blobs (its values are opaque), so it
calls these hooks at the two moments blobs lose their last reference there:
- before it drops a staging partition no branch references any more: a token a
  commit consumed hands its entries to garbage collection (they are committed
  data, or were written again to a live token and marked shared), so nothing is
  logged; any other token (reset, deleted branch, unsealed) has every entry's
  blob logged (`dropped_staging_token`), and the worker's check keeps the shared
  ones. One consumed-record read per token (the cleaner already knows no branch
  names it), then a streamed scan: no lookups in commits. Record keys derive
  from the token's queue time, so a pass retried after a crash rewrites the
  same keys.
- after it removed a deleted instance's metadata, a purge request for that
  instance has its namespace logged (purge.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from kvlake.deletion import keys
from kvlake.deletion.log import EntryOf
from kvlake.deletion.purge import Purges
from kvlake.deletion.records import PendingDelete
from kvlake.graveler import DeletedRepository, Repository

SCAN_BATCH: Final = 1000


class DeletionHooks:
    """Implements graveler's `CleanerHooks` with the deletion log. Thread-safe."""

    def __init__(self, purges: Purges, entry_of: EntryOf) -> None:
        self._log = purges.log
        self._graveler = purges.graveler
        self._entry_of = entry_of
        self._purges = purges

    def before_token_drop(self, repository: Repository, token: str, queued: float) -> None:
        """Log the blobs only this token references; raise (and so keep the token) on failure."""
        if self._log.enabled:
            self._log.append(self._unreferenced(repository, token, queued))

    def after_instance_cleaned(self, entry: DeletedRepository) -> None:
        """Log a purged instance's whole namespace (a no-op without a purge request)."""
        self._purges.log_namespace(entry)

    def _unreferenced(
        self, repository: Repository, token: str, queued: float
    ) -> Iterator[PendingDelete]:
        # The caller (the cleaner's drop queue, or its orphan sweep) found no branch
        # naming the token (the record of the branch it was queued from, or its one
        # branch scan), and a token no branch names is never named again (tokens are
        # fresh; states only move forward). So only the consumed record is read here:
        # a branch scan per dropped token made a pass cost (tokens) x (branches)
        # (issue 33, item 3).
        claim = self._graveler.references.consumers(repository, [token]).get(token)
        if claim is not None and claim.commit_ids:
            return  # committed data is garbage collection's
        due = queued + self._log.settings.send_delay
        for page in self._graveler.references.staged_pages(token, batch_size=SCAN_BATCH):
            for key, value in page:
                if value is None:
                    continue  # a tombstone references no blob
                ref = self._entry_of(value)
                if not ref.address:
                    continue  # no blob of the namespace: an imported object, or not an object
                yield self._log.new_record(
                    repository,
                    ref.address,
                    "dropped_staging_token",
                    staging_token=token,
                    path=key,
                    since=ref.since,
                    record_id=keys.stable_record_id("token", token, key, ref.address),
                    due=due,
                )
