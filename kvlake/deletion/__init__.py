"""Two-phase deletion of blobs: a durable log of intents, workers with a fresh in-use check."""

from kvlake.deletion.checks import ReferenceChecker
from kvlake.deletion.dlq import DeadLetters
from kvlake.deletion.gc import GcMarks, MarkSet, SubtractedMarks, gc_records, log_candidates
from kvlake.deletion.hooks import DeletionHooks
from kvlake.deletion.log import DeletionLog, DueRecord, EntryOf, EntryRef
from kvlake.deletion.purge import PurgeReport, Purges
from kvlake.deletion.records import (
    ORIGINS,
    DeadLetter,
    Lease,
    Origin,
    PendingDelete,
    PurgeCounts,
    PurgeRequest,
)
from kvlake.deletion.staging_hooks import StagingLogHooks
from kvlake.deletion.status import DeletionStatus, PartitionStatus, deletion_status
from kvlake.deletion.verdicts import Verdict
from kvlake.deletion.worker import DeletionWorker, WorkerReport

__all__ = [
    "ORIGINS",
    "DeadLetter",
    "DeadLetters",
    "DeletionHooks",
    "DeletionLog",
    "DeletionStatus",
    "DeletionWorker",
    "DueRecord",
    "EntryOf",
    "EntryRef",
    "GcMarks",
    "Lease",
    "MarkSet",
    "Origin",
    "PartitionStatus",
    "PendingDelete",
    "PurgeCounts",
    "PurgeReport",
    "PurgeRequest",
    "Purges",
    "ReferenceChecker",
    "StagingLogHooks",
    "SubtractedMarks",
    "Verdict",
    "WorkerReport",
    "deletion_status",
    "gc_records",
    "log_candidates",
]
