"""What the deletion log holds and what its workers did: status and Prometheus metrics.

Both read the KV as it is now, streaming every partition (one decode per
pending record, no listing held in memory), so they cost a scan of the log:
fine for `kvlake deletion status` and a scrape every few seconds up to
millions of pending records. Counters come from the partition leases, which
only their holders write, so they never go backwards.
"""

from __future__ import annotations

import msgspec

from kvlake.deletion.dlq import DeadLetters
from kvlake.deletion.leases import COUNTERS, Leases
from kvlake.deletion.log import DeletionLog


class PartitionStatus(msgspec.Struct, frozen=True, kw_only=True):
    """One log partition: its records, its lease, and its workers' counters."""

    number: int
    pending: int
    due: int
    oldest_created: float | None
    lease_owner: str
    lease_expires: float
    deleted: int
    retried: int
    dead_lettered: int
    kept: int

    def leased(self, now: float) -> bool:
        return bool(self.lease_owner) and self.lease_expires > now


class DeletionStatus(msgspec.Struct, frozen=True, kw_only=True):
    """The whole log at time `now`."""

    now: float
    partitions: list[PartitionStatus]
    dead_letters: int

    @property
    def pending(self) -> int:
        return sum(p.pending for p in self.partitions)

    @property
    def oldest_pending_age(self) -> float:
        """Seconds the oldest pending record has waited; 0 with none pending."""
        created = [p.oldest_created for p in self.partitions if p.oldest_created is not None]
        return max(self.now - min(created), 0.0) if created else 0.0


def deletion_status(log: DeletionLog) -> DeletionStatus:
    """Count pending, due and dead-lettered records, and read every partition's lease."""
    now = log.clock()
    leases = Leases(log.store)
    partitions = []
    for number in range(log.partition_count()):
        pending = due = 0
        oldest: float | None = None
        for item in log.scan(number):
            pending += 1
            if item.record is None:
                continue
            if item.record.not_before <= now:
                due += 1
            if oldest is None or item.record.created < oldest:
                oldest = item.record.created
        lease = leases.load(number)
        partitions.append(
            PartitionStatus(
                number=number,
                pending=pending,
                due=due,
                oldest_created=oldest,
                lease_owner=lease.owner if lease else "",
                lease_expires=lease.expires if lease else 0.0,
                **{name: getattr(lease, name) if lease else 0 for name in COUNTERS},
            )
        )
    return DeletionStatus(now=now, partitions=partitions, dead_letters=DeadLetters(log).count())
