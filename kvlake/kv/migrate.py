"""Copy every entry of one store into another, then prove the copy by re-reading it.

Moving metadata between drivers (a laptop's SQLite file to PostgreSQL) must
not lose or invent a single key, so the copy is verified, not trusted: while
copying, a SHA-256 is computed over the source entries in order; afterwards
each destination partition is scanned again and hashed the same way, and any
difference in partitions, counts or content raises an error that says what
differs. Writes are upserts, so re-running after a failure is safe and
finishes the job. Everything streams page by page: memory stays flat however
large the store. Stop writers first: a scan is not a snapshot.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import Final, Literal

import msgspec

from kvlake.errors import ConflictError
from kvlake.kv.store import MAX_BATCH_SIZE, KeyValue, Store

Phase = Literal["copy", "verify"]
Progress = Callable[[Phase, int], None]
"""Called after each page with the phase and the number of entries in it."""

_LENGTH: Final = struct.Struct(">Q")
_EMPTY: Final = "migrate into an empty store (a new SQLite file, database or ?table=)"


class MigrationReport(msgspec.Struct, frozen=True, kw_only=True):
    """What a verified migration copied. `bytes` counts keys plus values."""

    partitions: int
    entries: int
    bytes: int
    checksum: str
    """SHA-256 (hex) over length-prefixed partition, key, value of every entry in order."""


class _Digest:
    """Counts and hashes a stream of entries in the checksum's one canonical form."""

    __slots__ = ("entries", "size", "total", "partition")

    def __init__(self, total: hashlib._Hash | None = None) -> None:
        self.entries = 0
        self.size = 0
        self.total = total
        self.partition = hashlib.sha256()

    def add(self, partition: bytes, page: list[KeyValue]) -> None:
        prefix = _LENGTH.pack(len(partition)) + partition
        pack = _LENGTH.pack
        parts: list[bytes] = []
        size = 0
        for key, value in page:
            parts += (prefix, pack(len(key)), key, pack(len(value)), value)
            size += len(key) + len(value)
        blob = b"".join(parts)
        if self.total is not None:
            self.total.update(blob)
        self.partition.update(blob)
        self.entries += len(page)
        self.size += size


def migrate(
    source: Store, destination: Store, *, progress: Progress | None = None
) -> MigrationReport:
    """Copy every partition of `source` into `destination` and verify the result.

    Keys already in the destination are overwritten; re-running is safe. The
    destination should be empty or hold an earlier run of the same migration:
    keys the source lacks are reported, not deleted.

    Raises:
        ConflictError: the destination differs from the source after the copy
            (extra partitions or keys, or changed content); the message names
            the first partition that differs.
        UnavailableError: either store failed; re-run to finish.
    """
    copied = hashlib.sha256()
    partitions = entries = size = 0
    for partition in source.partitions():
        wrote = _Digest(copied)
        with source.scan(partition, batch_size=MAX_BATCH_SIZE) as scan:
            for page in scan.batches():
                destination.set_many(partition, page)
                wrote.add(partition, page)
                if progress is not None:
                    progress("copy", len(page))
        # Equal digests for every partition, in order, mean equal overall checksums.
        found = _digest_partition(destination, partition, progress)
        _compare(partition, wrote, found)
        partitions += 1
        entries += wrote.entries
        size += wrote.size
    _check_no_extra_partitions(source, destination)
    return MigrationReport(
        partitions=partitions, entries=entries, bytes=size, checksum=copied.hexdigest()
    )


def _digest_partition(store: Store, partition: bytes, progress: Progress | None) -> _Digest:
    digest = _Digest()
    with store.scan(partition, batch_size=MAX_BATCH_SIZE) as scan:
        for page in scan.batches():
            digest.add(partition, page)
            if progress is not None:
                progress("verify", len(page))
    return digest


def _compare(partition: bytes, wrote: _Digest, found: _Digest) -> None:
    if found.entries > wrote.entries:
        raise ConflictError(
            f"KV migration check failed: destination partition {partition!r} holds "
            f"{found.entries} entries but the source has {wrote.entries}; the destination "
            f"already held keys the source lacks: {_EMPTY}"
        )
    if found.entries < wrote.entries:
        raise ConflictError(
            f"KV migration check failed: destination partition {partition!r} holds only "
            f"{found.entries} of the {wrote.entries} entries copied into it; something deleted "
            "keys during the copy: stop every writer to the destination and re-run"
        )
    found_sum, wrote_sum = found.partition.hexdigest(), wrote.partition.hexdigest()
    if found_sum != wrote_sum:
        raise ConflictError(
            f"KV migration check failed: destination partition {partition!r} holds "
            f"{found.entries} entries like the source, but different keys or values "
            f"(sha256 {found_sum[:16]}..., source {wrote_sum[:16]}...); stop every writer to both "
            "stores and re-run the migration"
        )


def _check_no_extra_partitions(source: Store, destination: Store) -> None:
    """Walk both sorted partition lists side by side, so neither is held in memory."""
    wanted = source.partitions()
    want = next(wanted, None)
    for name in destination.partitions():
        while want is not None and want < name:
            want = next(wanted, None)
        if want != name:
            raise ConflictError(
                f"KV migration check failed: the destination has partition {name!r}, which "
                f"the source lacks ({_count(destination, name)} entries): {_EMPTY}"
            )
        want = next(wanted, None)


def _count(store: Store, partition: bytes) -> int:
    with store.scan(partition, batch_size=MAX_BATCH_SIZE) as scan:
        return sum(len(page) for page in scan.batches())
