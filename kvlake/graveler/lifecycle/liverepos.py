"""The index of repository instances not yet deleted, so listings skip tombstones.

A deleted repository's record stays as a `deleted` tombstone under its name: a
later creation replaces it by compare-and-swap, which is what keeps creations and
deletions of one name safe without transactions. Tombstones therefore share the
live names' key range, and a listing that scanned it would read past every name
ever deleted (issue 33). Listings scan `keys.LIVE_REPOSITORIES` instead: one key
per instance that is `initial`, `active` or `deleting`, and read those records
only (one `get_many` a page).

Order of writes: a creation writes its creation marker, then indexes its
instance, then writes its record; a deletion drops the key only after the
tombstone. So no live instance is ever missing from the index. A key may outlive
its instance for a moment (or after a crash): a listing drops it when it finds
the record deleted, or naming another instance (or none) while no creation
marker says this one is still being created; the cleaner drops it with the
instance's partitions. Keys are per instance, so dropping one never drops a newer
creation's. A store written before the index gets it built once, on first use
(a marker in `keys.INDEXES` says it was done).

The same creation first writes its uid's name (`keys.INSTANCES`), kept until the
cleaner removed the instance: a staging partition is named by uid only, and the
orphan sweep finds its owner with that point read, not a scan of every record.

Tombstones themselves stay until nothing needs them (tombstones.py removes them
with `Store.delete_if`, so a creation that just replaced one keeps its record).
With the index, no listing or idle pass reads them meanwhile.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Final

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.records import Repository, decode_deleted_repository, decode_repository
from kvlake.kv import Store

PAGE: Final = 100
"""Index keys read, and records fetched in one `get_many`, at a time."""


class LiveRepositories:
    """The live-instance index of repository records. Thread-safe; its only in-process
    state is having seen the index built (it stays built)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._built = False

    def add(self, name: str, instance_uid: str) -> None:
        """Index an instance before its record is written (building the index first on a
        store written before it, so a new store never scans its records for it): by name
        for listings, and its uid's name for the orphan sweep (`names`)."""
        self.build()
        self._store.set(keys.INSTANCES, instance_uid.encode(), name.encode())
        self._store.set(keys.LIVE_REPOSITORIES, keys.live_repository_key(name, instance_uid), b"")

    def names(self, instance_uids: Collection[str]) -> dict[str, str]:
        """The repository name each of those instances was created under, for those
        indexed: one `get_many`. Every instance a creation indexed is there until the
        cleaner removed it, so a uid left out names no instance with data to keep."""
        self.build()
        found = self._store.get_many(keys.INSTANCES, sorted(u.encode() for u in instance_uids))
        return {uid.decode(): name.decode() for uid, name in found.items()}

    def drop(self, name: str, instance_uid: str) -> None:
        """Take a deleted (or never written) instance out of the index."""
        self._store.delete(keys.LIVE_REPOSITORIES, keys.live_repository_key(name, instance_uid))

    def records(self, *, after: str = "", prefix: str = "") -> Iterator[Repository]:
        """The records of indexed instances, in name order, after `after`, whose names start
        with `prefix`, in any state but `deleted` (the caller filters). Keys naming a
        tombstone or an older instance than the record's are dropped on the way."""
        self.build()
        first = keys.live_repository_prefix(prefix)
        # Past every key of `after` itself: its uid follows a NUL, and b"\x01" sorts after it.
        start = max(keys.live_repository_prefix(after) + b"\x01" if after else first, first)
        with self._store.scan(keys.LIVE_REPOSITORIES, start) as scan:
            page: list[tuple[str, str]] = []
            for key, _ in scan:
                if not key.startswith(first):
                    break
                page.append(keys.parse_live_repository_key(key))
                if len(page) == PAGE:
                    yield from self._page(page)
                    page = []
            yield from self._page(page)

    def _page(self, indexed: list[tuple[str, str]]) -> Iterator[Repository]:
        if not indexed:
            return
        found = self._store.get_many(
            keys.REPOSITORIES, [keys.repository_key(name) for name in dict(indexed)]
        )
        for name, uid in indexed:
            raw = found.get(keys.repository_key(name))
            repository = None if raw is None else decode_repository(raw)
            if repository is not None and repository.instance_uid == uid:
                if repository.state == "deleted":
                    self.drop(name, uid)  # its deletion stopped between tombstone and drop
                else:
                    yield repository
            elif not self._creating(name, uid):
                self.drop(name, uid)  # an instance deleted and replaced, or never written

    def _creating(self, name: str, instance_uid: str) -> bool:
        """Whether that instance's creation marker is still there: a creation writes it
        before its key and drops it only once its record is written (or, past the timeout,
        together with its key), so a key whose record names another instance or none, and
        which has no marker, names a dead instance. Only such keys cost this read."""
        try:
            self._store.get(keys.CREATIONS, keys.creation_key(name, instance_uid))
        except KeyNotFoundError:
            return False
        return True

    def build(self) -> None:
        """Index every instance of a store written before the index (once: a marker says
        it was done). Creations meanwhile index themselves; a key written here for an
        instance deleted meanwhile is dropped by the next listing that meets it."""
        if self._built:
            return
        # No lock: two threads building at once write the same keys, which is harmless.
        built = self._store.get_many(
            keys.INDEXES, [keys.LIVE_INDEX_BUILT, keys.INSTANCES_INDEX_BUILT]
        )
        if keys.LIVE_INDEX_BUILT not in built:
            with self._store.scan(keys.REPOSITORIES, keys.repository_key("")) as scan:
                records = (decode_repository(raw) for _, raw in scan)
                self._store.set_many(
                    keys.LIVE_REPOSITORIES,
                    (
                        (keys.live_repository_key(r.name, r.instance_uid), b"")
                        for r in records
                        if r.state != "deleted"
                    ),
                )
            self._store.set(keys.INDEXES, keys.LIVE_INDEX_BUILT, b"")
        if keys.INSTANCES_INDEX_BUILT not in built:
            self._build_names()
            self._store.set(keys.INDEXES, keys.INSTANCES_INDEX_BUILT, b"")
        self._built = True

    def _build_names(self) -> None:
        """Index the uid of every record (tombstones too: their instances may await the
        cleaner) and of every instance queued for cleaning, of a store written before."""
        with self._store.scan(keys.REPOSITORIES, keys.repository_key("")) as scan:
            records = (decode_repository(raw) for _, raw in scan)
            self._store.set_many(
                keys.INSTANCES, ((r.instance_uid.encode(), r.name.encode()) for r in records)
            )
        with self._store.scan(keys.DELETED_REPOSITORIES) as scan:
            deleted = (decode_deleted_repository(raw) for _, raw in scan)
            self._store.set_many(
                keys.INSTANCES, ((d.instance_uid.encode(), d.name.encode()) for d in deleted)
            )
