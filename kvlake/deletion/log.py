"""Phase one of deletion: the durable log of blobs that lost a reference.

Invariant 4 starts here: whoever is about to stop referencing a blob appends
a `PendingDelete` first and changes metadata only once `append` returned. A
failed append raises, so the operation fails before it changed anything. The
log is split into `partitions` KV partitions keyed by due time, so workers
each lease one partition and never contend; a record's address hashes to its
partition (a batch record's first member's: the others may be anywhere; no
safety rests on where a record is, see worker.py).

A batch of blobs leaving staged entries together (a bulk delete's tombstones)
is one record with members (`new_batch`): one KV row per `BATCH_MEMBERS` blobs.
Readers get one `DueRecord` per member, each under the batch's key: a worker
removes that key once every member's outcome is written.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final, NamedTuple

import msgspec

from kvlake.config import DeletionSettings
from kvlake.deletion import keys
from kvlake.deletion.records import (
    Member,
    Origin,
    PendingDelete,
    decode_pending,
    encode,
)
from kvlake.graveler import Repository, Value
from kvlake.kv import KeyValue, Store, get_or_none, update

log = logging.getLogger(__name__)

APPEND_CHUNK: Final = 1000
"""Records buffered per partition before one `set_many`."""

BATCH_MEMBERS: Final = 1000
"""Blobs one batch record holds at most (about 70 KB encoded)."""


class EntryRef(NamedTuple):
    """What the deletion layer needs from a staged or committed value: its blob and age.

    `since` is the entry's mtime: no commit created before it can hold the entry.
    `imported` is the full URL of an imported entry (whose `address` is "": never
    logged, not kvlake's to delete); the in-use check still compares it, because an
    import made before sources were compared canonically may name the repository's
    own blobs by an odd spelling (`s3:///lake/repo1/data/x`).
    """

    address: str
    since: float
    imported: str = ""


EntryOf = Callable[[Value], EntryRef]
"""Reads an EntryRef out of a graveler value; the catalog provides it (`entry_ref`)."""


class DueRecord(NamedTuple):
    """A pending record as a worker reads it: its key, and the record or why it is unreadable.

    Each member of a batch record is a DueRecord of its own, with the batch's key.
    """

    key: bytes
    record: PendingDelete | None
    error: str = ""
    raw: bytes = b""


class DeletionLog:
    """Appends and reads pending deletes, and the shared-address markers. Thread-safe."""

    def __init__(
        self,
        store: Store,
        settings: DeletionSettings | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.settings = settings or DeletionSettings()
        self.clock = clock
        self._recorded_partitions = False
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    def new_record(
        self,
        repository: Repository,
        address: str,
        origin: Origin,
        *,
        check_in_use: bool = True,
        staging_token: str = "",
        path: bytes = b"",
        since: float = 0.0,
        properties: dict[str, str] | None = None,
        record_id: str | None = None,
        due: float | None = None,
    ) -> PendingDelete:
        """A record for `address` in the repository's namespace, due after the send delay."""
        now = self.clock()
        return PendingDelete(
            id=record_id or keys.new_record_id(),
            address=address,
            storage_namespace=repository.storage_namespace,
            repository=repository.name,
            instance_uid=repository.instance_uid,
            origin=origin,
            check_in_use=check_in_use,
            not_before=now + self.settings.send_delay if due is None else due,
            created=now,
            staging_token=staging_token,
            path=path,
            since=since,
            properties=dict(properties or {}),
        )

    def new_batch(
        self,
        repository: Repository,
        origin: Origin,
        members: Sequence[Member],
        *,
        staging_token: str = "",
    ) -> list[PendingDelete]:
        """Records for the blobs `members` name, as `new_record` would write one each, but
        `BATCH_MEMBERS` to a record: a bulk delete's batch costs one KV row per thousand.
        One member gets a plain record."""
        if len(members) == 1:
            (only,) = members
            return [
                self.new_record(
                    repository,
                    only.address,
                    origin,
                    staging_token=staging_token,
                    path=only.path,
                    since=only.since,
                )
            ]
        records = []
        for start in range(0, len(members), BATCH_MEMBERS):
            chunk = list(members[start : start + BATCH_MEMBERS])
            record = self.new_record(
                repository, chunk[0].address, origin, staging_token=staging_token
            )
            records.append(msgspec.structs.replace(record, members=chunk))
        return records

    def append(self, records: Iterable[PendingDelete]) -> int:
        """Write the records durably; return how many. Streams: memory holds one chunk.

        Not atomic: on failure some records may be written, which is harmless (a
        worker finds the blob still referenced and keeps it), and the error is
        raised so the caller changes no metadata.

        Raises:
            UnavailableError: the KV store failed.
            TooManyTriesError: the partition count could not be recorded (nothing written).
        """
        self._record_partition_count()
        count = self.settings.partitions
        buffers: dict[int, list[KeyValue]] = {}
        written = 0
        for record in records:
            number = keys.partition_for(record.address, count)
            buffer = buffers.setdefault(number, [])
            buffer.append((keys.pending_key(record.not_before, record.id), encode(record)))
            written += 1
            if len(buffer) >= APPEND_CHUNK:
                self.store.set_many(keys.pending_partition(number), buffer)
                buffer.clear()
        for number, buffer in buffers.items():
            if buffer:
                self.store.set_many(keys.pending_partition(number), buffer)
        return written

    def reschedule(self, number: int, records: Iterable[PendingDelete]) -> None:
        """Write records back into partition `number` under their (new) due times."""
        self.store.set_many(
            keys.pending_partition(number),
            ((keys.pending_key(r.not_before, r.id), encode(r)) for r in records),
        )

    def withdraw(self, record: PendingDelete) -> bool:
        """Remove a record appended earlier, before it was due; return whether it was there.

        The record's key derives from its due time and id, so the caller rebuilds
        the record it appended (same `record_id` and `due`) rather than keeping its
        key. Its partition is the address's under the count it was appended with;
        that count may have changed since, so every partition is looked at, the
        current count's first.
        """
        key = keys.pending_key(record.not_before, record.id)
        first = keys.partition_for(record.address, self.settings.partitions)
        if self._take(first, key):
            return True  # the common case: two calls, the count not read
        count = self.partition_count()
        return any(self._take(number, key) for number in range(count) if number != first)

    def withdraw_appended(self, record: PendingDelete) -> bool:
        """`withdraw` for the very record this process appended (not a rebuilt one): one
        round trip, a `delete_if` on its bytes in the partition it was appended to. Only
        where that missed (a worker took it, or the record was moved) does it look further
        as `withdraw` does; the answer is the same.
        """
        key = keys.pending_key(record.not_before, record.id)
        first = keys.partition_for(record.address, self.settings.partitions)
        if self.store.delete_if(keys.pending_partition(first), key, encode(record)):
            return True
        return self.withdraw(record)

    def _take(self, number: int, key: bytes) -> bool:
        """Delete `key` from partition `number`; whether it was there."""
        partition = keys.pending_partition(number)
        if get_or_none(self.store, partition, key) is None:
            return False
        self.store.delete(partition, key)
        return True

    def partition_count(self) -> int:
        """How many partitions to work: the configured count, or more if more were ever used."""
        loaded = get_or_none(self.store, keys.LEASES, keys.PARTITIONS_KEY)
        if loaded is None:
            return self.settings.partitions
        return max(int(loaded[0]), self.settings.partitions)

    def _record_partition_count(self) -> None:
        """Remember the highest partition count ever used, so a smaller one drains the rest.

        Raises:
            TooManyTriesError: other processes kept changing the count (nothing appended).
        """
        if self._recorded_partitions:
            return
        wanted = self.settings.partitions

        def raise_to_wanted(raw: bytes | None) -> bytes | None:
            # Run again when another process raised it meanwhile: it may be high enough now.
            return None if raw is not None and int(raw) >= wanted else str(wanted).encode()

        what = "recording the deletion log's partition count"
        update(self.store, keys.LEASES, keys.PARTITIONS_KEY, raise_to_wanted, what=what)
        with self._lock:
            self._recorded_partitions = True

    def scan_due(self, number: int, now: float, limit: int) -> list[DueRecord]:
        """Records of partition `number` due at `now`, oldest due first: up to `limit`, or
        one batch record's members (up to `BATCH_MEMBERS`) more."""
        due: list[DueRecord] = []
        partition = keys.pending_partition(number)
        with self.store.scan(partition, batch_size=limit) as scan:
            for key, raw in scan:
                if keys.due_of(key) > now or len(due) >= limit:
                    break
                due.extend(_decode(key, raw))
        return due

    def scan(self, number: int) -> Iterator[DueRecord]:
        """Every record of partition `number` (a batch's members each), in due order (for
        status and reports)."""
        with self.store.scan(keys.pending_partition(number)) as scan:
            for page in scan.batches():
                for key, raw in page:
                    yield from _decode(key, raw)

    def remove(self, number: int, pending_keys: Iterable[bytes]) -> None:
        self.store.delete_many(keys.pending_partition(number), pending_keys)

    # -- shared addresses ------------------------------------------------------------

    def mark_shared(self, instance_uid: str, address: str) -> None:
        """Record that a copy made `address` referenced by more than one entry.

        Workers never delete a shared address on a staging record: any entry in
        any commit may hold it, so only garbage collection may decide. The marker
        holds the copy's time: a GC run keeps addresses copied after it started.
        """
        marker = keys.shared_value(self.clock())
        self.store.set(keys.SHARED, keys.shared_key(instance_uid, address), marker)

    def mark_shared_many(self, instance_uid: str, addresses: Iterable[str]) -> None:
        """`mark_shared` for many addresses in batched writes (a bulk delete without purge).

        The marks hold the real time, as `mark_shared`'s do: a GC run that started
        before them keeps these addresses (a marker without a time counts as the epoch).
        """
        marker = keys.shared_value(self.clock())
        self.store.set_many(
            keys.SHARED,
            ((keys.shared_key(instance_uid, address), marker) for address in addresses if address),
        )

    # -- claims: a worker about to delete, against a link about to stage -----------------

    def claim(self, instance_uid: str, addresses: Iterable[str]) -> None:
        """Record that a worker is about to delete these addresses, before it reads their
        shared marks for the last time (see `claimed`)."""
        stamp = repr(self.clock()).encode()
        claims = sorted({keys.claim_key(instance_uid, address) for address in addresses})
        self.store.set_many(keys.CLAIMS, ((key, stamp) for key in claims))

    def release_claims(self, claims: Iterable[tuple[str, str]]) -> None:
        """Drop the claims of (instance uid, address) pairs whose blobs are dealt with."""
        self.store.delete_many(
            keys.CLAIMS, sorted({keys.claim_key(uid, address) for uid, address in claims})
        )

    def claimed(self, instance_uid: str, address: str) -> bool:
        """Whether a worker claimed the address in the last lease time: it may be deleting
        the blob now.

        The claim and the shared mark close the race between a worker and a link (or
        anything that marks before it stages) the way two flags do: the worker writes
        its claim, then reads the mark; the link writes its mark, then reads the
        claim. On one store, at least one of them sees the other's write, so either
        the worker keeps the blob or the link refuses to stage it. A claim older than
        the lease time is a crashed worker's, and ignored.
        """
        loaded = get_or_none(self.store, keys.CLAIMS, keys.claim_key(instance_uid, address))
        if loaded is None:
            return False
        return self.clock() - float(loaded[0]) < self.settings.lease_time


def _decode(key: bytes, raw: bytes) -> list[DueRecord]:
    """The record stored at `key`, or its members; one unreadable record if it cannot be read."""
    try:
        record = decode_pending(raw)
    except ValueError as exc:  # msgspec.DecodeError and ValidationError are ValueErrors
        return [DueRecord(key, None, f"the record cannot be decoded ({exc})", raw)]
    return [DueRecord(key, member) for member in record.expand()]
