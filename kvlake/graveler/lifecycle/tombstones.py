"""Expiring repository tombstones once nothing needs them (issue 33, item 5).

A deleted repository's record stays under its name as a `deleted` tombstone: a
new creation replaces it by compare-and-swap (repositories.py), and until its
instance is cleaned it says what the instance was. Listings never read it (the
live index, liverepos.py), but kept forever each costs its storage, and a store
that creates and deletes many repositories piles them up.

A tombstone of instance U under name N may go when all of these hold
(docs/design.md, "Repository tombstones"):
1. the record under N is still that tombstone: state `deleted`, uid U, and not
   replaced between the read and the delete (`Store.delete_if` on the bytes read;
   an unguarded delete could remove the record of a creation that just replaced it);
2. U is cleaned: no `graveler_deleted` entry names it (the cleaner removes it last,
   after the instance's partitions and every layer's per-instance cleanup);
3. at least `grace` seconds have passed since the deletion (`state_changed`): a
   deletion-log record a garbage collection run or token drop logged for U before
   the deletion is judged by then (it reads the tombstone to find U's namespace
   and keep its data; see docs/design.md for what happens to one judged later).

Nothing else reads a tombstone for what it holds: a purge carries its own
namespace and is read first; namespace claims, creation markers, the live index,
the orphan sweep and the cleaner treat a missing record as they treat a deleted
one. The cleaner queues U (`keys.TOMBSTONES`, ordered by due time) when it has
cleaned it; each pass reads what is due, a batch at a time, and checks the three
conditions. Tombstones older than the queue are queued once, by the first pass
that finds no marker (`keys.TOMBSTONES_QUEUED`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Final

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.records import decode_repository
from kvlake.kv import Store

TOMBSTONE_GRACE: Final = 30 * 86400.0
"""Seconds a tombstone stays after its repository's deletion (at least)."""

RECHECK: Final = 3600.0
"""Seconds before a due tombstone whose instance is still being cleaned is looked at again."""

BATCH: Final = 1000
"""Due queue entries a pass settles at a time."""

FIRST_PAGE: Final = 1
"""Queue entries the first read of a pass asks for (an idle pass reads one); later pages
double, so a batch of due entries costs about log2(BATCH) round trips."""


class Tombstones:
    """The expiry queue of repository tombstones. Thread-safe; safe in many processes (each
    step is idempotent and the delete is guarded)."""

    def __init__(
        self, store: Store, *, clock: Callable[[], float], grace: float = TOMBSTONE_GRACE
    ) -> None:
        self._store = store
        self._clock = clock
        self._grace = grace
        self._older_queued = False

    def queue(self, name: str, instance_uid: str) -> None:
        """Queue a cleaned instance's tombstone, due `grace` from now (the deletion was before)."""
        due = self._clock() + self._grace
        self._store.set(keys.TOMBSTONES, keys.tombstone_key(due, name, instance_uid), b"")

    def queue_older(self) -> int:
        """Queue every tombstone written before the queue existed; once per store (a marker
        says it was done) and once per process (the marker is read once). Returns how many."""
        if self._older_queued:
            return 0
        self._older_queued = True
        try:
            self._store.get(keys.INDEXES, keys.TOMBSTONES_QUEUED)
            return 0
        except KeyNotFoundError:
            pass
        queued = 0
        with self._store.scan(keys.REPOSITORIES, keys.repository_key("")) as scan:
            for _, raw in scan:
                record = decode_repository(raw)
                if record.state == "deleted":
                    due = record.state_changed + self._grace
                    key = keys.tombstone_key(due, record.name, record.instance_uid)
                    self._store.set(keys.TOMBSTONES, key, b"")
                    queued += 1
        self._store.set(keys.INDEXES, keys.TOMBSTONES_QUEUED, b"")
        return queued

    def expire_due(self) -> int:
        """Remove the due tombstones nothing needs any more; return how many went.

        Each due entry is settled: the tombstone removed, or found gone or replaced (the
        entry is dropped), or still needed (the entry moves to when it may go).
        """
        expired = 0
        start = b""
        while True:
            now = self._clock()
            due: list[bytes] = []
            # Small first page, growing: an idle pass reads a few entries, not the queue
            # (a grace's worth of deletions).
            with self._store.scan(keys.TOMBSTONES, start, batch_size=FIRST_PAGE) as scan:
                for key, _ in itertools.islice(scan, BATCH):
                    if keys.parse_tombstone_key(key)[0] > now:
                        break
                    due.append(key)
            for key in due:
                expired += self._settle(key, now)
            if len(due) < BATCH:
                return expired
            start = due[-1] + b"\0"

    def _settle(self, key: bytes, now: float) -> int:
        _, name, uid = keys.parse_tombstone_key(key)
        later = self._not_before(name, uid, now)
        if later is not None:  # still needed: look again when it may go
            self._store.set(keys.TOMBSTONES, keys.tombstone_key(later, name, uid), b"")
            self._store.delete(keys.TOMBSTONES, key)
            return 0
        record_key = keys.repository_key(name)
        raw: bytes | None
        try:
            raw, _ = self._store.get(keys.REPOSITORIES, record_key)
        except KeyNotFoundError:
            raw = None
        removed = False
        if raw is not None:
            record = decode_repository(raw)
            if record.instance_uid != uid or record.state != "deleted":
                pass  # the name holds another instance, or this one is not deleted: not ours
            elif now - record.state_changed < self._grace:
                later = record.state_changed + self._grace
                self._store.set(keys.TOMBSTONES, keys.tombstone_key(later, name, uid), b"")
            else:
                # Guarded: a creation that replaced the tombstone since the read keeps its record.
                removed = self._store.delete_if(keys.REPOSITORIES, record_key, raw)
        self._store.delete(keys.TOMBSTONES, key)
        return int(removed)

    def _not_before(self, name: str, uid: str, now: float) -> float | None:
        """When the tombstone may next be looked at if its instance is not cleaned yet."""
        try:
            self._store.get(keys.DELETED_REPOSITORIES, keys.deleted_repository_key(name, uid))
        except KeyNotFoundError:
            return None
        return now + RECHECK
