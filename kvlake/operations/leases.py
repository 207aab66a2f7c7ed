"""Upload leases: a process's in-flight uploads, published in one KV record renewed in bulk.

An upload used to write its own write lock to the KV before reading the delete locks
and delete it once staged: two durable writes per upload, which on SQLite queue on
the one writer lock. What a bulk delete needs of it is only to *see* the upload
(kvlake/operations/locks.py): a bulk delete writes its delete lock, then reads the
write locks of each batch; an upload registers, then reads the delete locks.

So a process registers its uploads in memory and publishes them in one record per
process (`upload_leases/<holder>`), renewed every `ttl / 20` seconds by a thread
(and by an upload that finds it half expired): a snapshot of the uploads in flight,
an expiry, and a sequence number that grows by one a renewal. The Dekker pairing
holds across the publication delay because a bulk delete, once its delete lock is
written, waits until every other live lease has been renewed twice
(`ObjectLocks.settle_uploads`): the second renewal's snapshot is taken after the
first renewal's write, which came after the delete lock's write, so it lists every
upload that read the delete locks before that write and is still in flight (one
that has finished has staged its entry, which the batch's read of staging sees).
Its own process's uploads it reads from memory, at once.

- An upload registers only while its process's lease record is live (the first
  upload of a process, or one after a lapse, writes it inline), so a bulk delete
  that sees no live lease of a process waits for no upload of it.
- A process that runs no renewal thread (a command, a test: only servers `start`
  it) gives each upload a record of its own, written before and removed after, as
  uploads paid before leases; the record lists its upload from the start.
- A crashed process's lease expires after `ttl`: its record is ignored (and removed
  by the next reader), and bulk deletes stop waiting for it.
- A lease that lapsed while an upload was in flight (a renewal late past its
  expiry, or the record removed) leaves that upload unseen for a while: the upload
  asks `held_through` after staging, and re-checks the delete locks if not
  (kvlake/catalog/guard.py), as a lock that expired mid-upload always did.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kvlake import ids
from kvlake.errors import KvlakeError, PreconditionFailedError
from kvlake.kv import Predicate, Store, get_or_none
from kvlake.operations import keys
from kvlake.operations.records import LeasedUpload, UploadLease, decode_upload_lease, encode

log = logging.getLogger(__name__)

RENEWALS_PER_TTL = 20
"""Renewals a lease time: a bulk delete waits about two of them after taking its lock."""


@dataclass(frozen=True)
class Registration:
    """An upload registered in its process's lease: pass it back to `unregister`."""

    number: int
    upload: LeasedUpload
    registered: float
    """When it registered (the lease's clock): it is seen while the lease held since."""
    record: bytes | None = None
    """The key of the upload's own lease record, when it has one (no renewal thread)."""
    expires: float = 0.0
    """That record's expiry."""


class UploadLeases:
    """This process's upload lease. Thread-safe: uploads register from many threads."""

    def __init__(self, store: Store, *, clock: Callable[[], float], ttl: float) -> None:
        self.store = store
        self.clock = clock
        self.ttl = ttl
        self.holder = ids.new_uid()
        self._process = f"{socket.gethostname()}:{os.getpid()}"
        self._mutex = threading.Lock()
        self._publishing = threading.Lock()
        self._numbers = itertools.count()
        self._in_flight: dict[int, LeasedUpload] = {}
        self._seq = 0
        self._written: bytes | None = None
        self._expires = 0.0
        self._since = float("inf")
        """Since when the lease has been live without a gap (inf: never published)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- uploads -------------------------------------------------------------------------

    def register(self, upload: LeasedUpload) -> Registration:
        """Add an upload to this process's lease, publishing the lease first if it is not
        live for at least half a lease time more (one KV write, rarely).

        Without the renewal thread (a command, a test) the upload gets a record of its
        own instead, `fixed` (it lists all it ever will, so bulk deletes do not wait for
        its renewals), written now and removed by `unregister`: two KV writes, as every
        upload paid before leases, and a bulk delete never waits for an idle process.

        Raises:
            KvlakeError: the lease could not be published (nothing registered).
        """
        if self._thread is None:
            return self._register_alone(upload)
        if self.clock() + self.ttl / 2 >= self._expires:
            self.renew()
        number = next(self._numbers)
        with self._mutex:
            self._in_flight[number] = upload
        return Registration(number, upload, self.clock())

    def _register_alone(self, upload: LeasedUpload) -> Registration:
        now = self.clock()
        holder = ids.new_uid()
        record = UploadLease(
            holder=holder,
            process=self._process,
            expires=now + self.ttl,
            seq=1,
            uploads=(upload,),
            fixed=True,
        )
        key = keys.upload_lease_key(holder)
        self.store.set(keys.UPLOAD_LEASES, key, encode(record))
        return Registration(-1, upload, now, record=key, expires=record.expires)

    def unregister(self, registration: Registration) -> None:
        if registration.record is not None:
            self.store.delete(keys.UPLOAD_LEASES, registration.record)
            return
        with self._mutex:
            self._in_flight.pop(registration.number, None)

    def held_through(self, registration: Registration) -> bool:
        """Whether the lease stayed live from the upload's registration until now, so every
        bulk delete that passed its path in between saw it."""
        if registration.record is not None:
            return self.clock() < registration.expires
        return self._since <= registration.registered and self.clock() < self._expires

    def in_flight(self) -> list[LeasedUpload]:
        """This process's uploads in flight now (read by its own bulk deletes at once)."""
        with self._mutex:
            return list(self._in_flight.values())

    # -- the record ----------------------------------------------------------------------

    def renew(self) -> None:
        """Publish the uploads in flight now, with a new expiry and the next sequence number.

        Raises:
            KvlakeError: the store failed; the lease lapses at its old expiry.
        """
        with self._publishing:
            self._publish()

    def _publish(self) -> None:
        now = self.clock()
        snapshot = tuple(self.in_flight())  # after `now`: registered before it included
        seq = self._seq + 1
        record = UploadLease(
            holder=self.holder,
            process=self._process,
            expires=now + self.ttl,
            seq=seq,
            uploads=snapshot,
        )
        raw = encode(record)
        partition, key = keys.UPLOAD_LEASES, keys.upload_lease_key(self.holder)
        gap = now >= self._expires
        expected = None if self._written is None else Predicate(self._written)
        try:
            self.store.set_if(partition, key, raw, expected)
        except PreconditionFailedError:
            # Removed as expired by a reader (or never written): bulk deletes may have
            # passed our uploads' paths without seeing them since. Write it again.
            current = get_or_none(self.store, partition, key)
            self.store.set_if(partition, key, raw, None if current is None else current[1])
            gap = True
        if gap:
            self._since = now
        self._written, self._seq, self._expires = raw, seq, now + self.ttl

    def release(self) -> None:
        """Remove the record (a clean shutdown): bulk deletes wait for this process no more."""
        self.stop()
        with self._publishing:
            if self._written is not None:
                with contextlib.suppress(KvlakeError):
                    self.store.delete_if(
                        keys.UPLOAD_LEASES, keys.upload_lease_key(self.holder), self._written
                    )
                self._written, self._expires, self._since = None, 0.0, float("inf")

    def start(self) -> None:
        """Renew the lease from a daemon thread every `ttl / 20` seconds until `stop`."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._renew_until_stopped, daemon=True, name="kvlake-upload-lease"
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _renew_until_stopped(self) -> None:
        while not self._stop.wait(self.ttl / RENEWALS_PER_TTL):
            try:
                self.renew()
            except KvlakeError as exc:  # a store blip: the next beat tries again
                log.warning("upload lease renewal failed: %s", exc)


def live_leases(store: Store, now: float) -> Iterator[UploadLease]:
    """Every process's live upload lease; expired records met are removed (by value, so a
    renewal that came meanwhile is kept)."""
    with store.scan(keys.UPLOAD_LEASES) as scan:
        records = list(scan)
    for key, raw in records:
        lease = decode_upload_lease(raw)
        if lease.live(now):
            yield lease
        else:
            with contextlib.suppress(KvlakeError):
                store.delete_if(keys.UPLOAD_LEASES, key, raw)
