"""Partition leases: one worker per log partition, taken over when its holder dies.

A lease is one KV record per partition, changed only by compare-and-swap, so
two workers can never both believe they hold it at the same moment of the
store's history. A crashed worker stops renewing; once `expires` has passed,
any worker may take the lease. A worker that was merely slow finds its renewal
refused and stops. Safety never depends on the lease: a record processed twice
is checked again and "not found" counts as deleted. The lease only keeps
workers from doing the same work twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import msgspec

from kvlake.deletion import keys
from kvlake.deletion.records import Lease, decode_lease, encode
from kvlake.errors import PreconditionFailedError
from kvlake.kv import Predicate, Store, get_or_none

COUNTERS: Final = ("deleted", "retried", "dead_lettered", "kept")


@dataclass(frozen=True, slots=True)
class HeldLease:
    """A lease this worker holds: pass it back to renew or release."""

    number: int
    lease: Lease
    predicate: Predicate


class Leases:
    """Acquire, renew and release partition leases. Thread-safe; state lives in the KV."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def load(self, number: int) -> Lease | None:
        """The partition's lease record (held or expired), or None if never leased."""
        loaded = get_or_none(self._store, keys.LEASES, keys.lease_key(number))
        return None if loaded is None else decode_lease(loaded[0])

    def acquire(self, number: int, owner: str, now: float, lease_time: float) -> HeldLease | None:
        """Take the lease if it is free, expired or already ours; None if another holds it."""
        key = keys.lease_key(number)
        loaded = get_or_none(self._store, keys.LEASES, key)
        current = Lease(owner="", expires=0.0) if loaded is None else decode_lease(loaded[0])
        expected = None if loaded is None else loaded[1]
        if current.owner not in ("", owner) and current.expires > now:
            return None
        taken = msgspec.structs.replace(current, owner=owner, expires=now + lease_time)
        encoded = encode(taken)
        try:
            self._store.set_if(keys.LEASES, key, encoded, expected)
        except PreconditionFailedError:
            return None  # another worker took it between our read and our swap
        return HeldLease(number, taken, Predicate(encoded))

    def renew(
        self, held: HeldLease, now: float, lease_time: float, counts: dict[str, int]
    ) -> HeldLease:
        """Extend the lease and add `counts` to its counters.

        Raises:
            PreconditionFailedError: the lease was taken over; stop working the partition.
        """
        changes = {name: getattr(held.lease, name) + counts.get(name, 0) for name in COUNTERS}
        renewed = msgspec.structs.replace(held.lease, expires=now + lease_time, **changes)
        encoded = encode(renewed)
        try:
            self._store.set_if(keys.LEASES, keys.lease_key(held.number), encoded, held.predicate)
        except PreconditionFailedError:
            raise PreconditionFailedError(
                f"the lease on deletion partition {held.number} was taken over by another worker;"
                " this worker stops there (nothing is lost: records are checked again)"
            ) from None
        return HeldLease(held.number, renewed, Predicate(encoded))

    def release(self, held: HeldLease) -> None:
        """Give the lease up at once, keeping the counters. A lost lease is left alone."""
        released = msgspec.structs.replace(held.lease, owner="", expires=0.0)
        try:
            self._store.set_if(
                keys.LEASES, keys.lease_key(held.number), encode(released), held.predicate
            )
        except PreconditionFailedError:
            pass  # taken over meanwhile: the new holder owns the record now
