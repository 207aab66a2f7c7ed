"""Phase two of deletion: workers that check, delete and forget logged blobs.

A worker leases one log partition at a time and takes its due records in
batches. For each batch it runs the fresh in-use check (checks.py), deletes the
blobs that passed in blockstore calls of at most 1000 keys, then writes the
outcome: retries under new due times, dead letters, and only then removes the
processed records. A crash anywhere leaves records to process again; deleting
is idempotent ("not found" counts as deleted), so nothing is lost and nothing
referenced is deleted. A record whose blob is still in use, or whose delete
failed, is retried after an exponential back-off; a failing one moves to the
dead letters after `max_attempts`, and one still in use after that many checks
is forgotten, because whoever removes that reference logs the blob again. One
that waits for a commit in progress is retried without spending an attempt.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Final

import msgspec

from kvlake import ids
from kvlake.blockstore import BlockStore
from kvlake.deletion import keys
from kvlake.deletion.checks import ReferenceChecker
from kvlake.deletion.gc import GcMarks
from kvlake.deletion.leases import Leases
from kvlake.deletion.log import DueRecord, EntryOf
from kvlake.deletion.purge import Purges
from kvlake.deletion.records import DeadLetter, PendingDelete, encode
from kvlake.deletion.verdicts import Verdict
from kvlake.errors import KvlakeError
from kvlake.kv import KeyValue

log = logging.getLogger(__name__)

DELETE_CHUNK: Final = 1000
"""Keys per blockstore `delete_many` call (the most S3's DeleteObjects takes)."""

MAX_BACKOFF: Final = 86400.0
"""Retries are never further apart than a day."""


class WorkerReport(msgspec.Struct, kw_only=True):
    """What one or more passes did; `failures` names each partition pass that broke off."""

    batches: int = 0
    deleted: int = 0
    retried: int = 0
    dead_lettered: int = 0
    kept: int = 0
    failures: list[str] = msgspec.field(default_factory=list)

    def add(self, other: WorkerReport) -> None:
        for name in ("batches", "deleted", "retried", "dead_lettered", "kept"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures.extend(other.failures)


class DeletionWorker:
    """Works the deletion log. Run one per process or thread; many may run at once."""

    def __init__(
        self,
        purges: Purges,
        entry_of: EntryOf,
        *,
        blockstore: BlockStore | None = None,
        owner: str | None = None,
        gc_marks: GcMarks | None = None,
    ) -> None:
        """Work the log of `purges` (the lake's one), deleting through `blockstore`
        (default: the lake's; tests pass a faulty one)."""
        self._log = log = purges.log
        self._settings = log.settings
        self._blockstore = blockstore or purges.blockstore
        self._purges = purges
        self._checker = ReferenceChecker(
            purges.graveler, self._blockstore, purges, entry_of, gc_marks=gc_marks
        )
        self._leases = Leases(log.store)
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{keys.new_record_id()[-8:]}"

    def run_once(self, partitions: Iterable[int] | None = None) -> WorkerReport:
        """Drain every partition this worker can lease of its due records, once."""
        report = WorkerReport()
        numbers = range(self._log.partition_count()) if partitions is None else partitions
        for number in numbers:
            self._drain(number, report)
        return report

    def run(
        self, stop: threading.Event, *, interval: float = 10.0, until_idle: bool = False
    ) -> WorkerReport:
        """Pass over the log until `stop` is set, or (`until_idle`) a pass finds nothing due."""
        total = WorkerReport()
        while not stop.is_set():
            report = self.run_once()
            total.add(report)
            if report.failures:
                log.warning("deletion worker %s: %s", self.owner, "; ".join(report.failures))
            if report.batches == 0:
                if until_idle:
                    break
                stop.wait(interval)
        return total

    def _drain(self, number: int, report: WorkerReport) -> None:
        clock, settings = self._log.clock, self._settings
        try:
            held = self._leases.acquire(number, self.owner, clock(), settings.lease_time)
            if held is None:
                return  # another worker holds it: the partitions are its to share
            while True:
                due = self._log.scan_due(number, clock(), settings.batch_size)
                if not due:
                    break
                done = self._process(number, due)
                held = self._leases.renew(held, clock(), settings.lease_time, done)
                report.add(
                    WorkerReport(
                        batches=1,
                        deleted=done["deleted"],
                        retried=done["retried"],
                        dead_lettered=done["dead_lettered"],
                        kept=done["kept"],
                    )
                )
                if len(due) < settings.batch_size:
                    break
            self._leases.release(held)
        except KvlakeError as exc:
            # The lease (if any) expires by itself; records stay for the next pass.
            log.warning("deletion partition %d: pass broke off: %s", number, exc)
            report.failures.append(f"partition {number}: {exc}")

    def _process(self, number: int, due: list[DueRecord]) -> dict[str, int]:
        """Check, delete and write the outcome of one batch; return its counters."""
        now = self._log.clock()
        readable = [item for item in due if item.record is not None]
        records = [item.record for item in readable if item.record is not None]
        verdicts = self._checker.check(records)
        errors = self._delete_blobs(records, verdicts)
        # The deletes are done (or failed): links of these blobs may go ahead again.
        self._log.release_claims(
            (r.instance_uid, r.address) for r in records if len(r.instance_uid) == ids.UID_LENGTH
        )
        counts: Counter[str] = Counter()
        reschedule: list[PendingDelete] = []
        dead: list[KeyValue] = []
        purged: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for item in due:
            if item.record is None:
                dead.append(self._dead_letter(number, item, None, item.error, now))
                counts["dead_lettered"] += 1
        for item, record, verdict in zip(readable, records, verdicts, strict=True):
            outcome, change = self._decide(record, verdict, errors.get(record.id), now)
            counts[outcome] += 1
            if record.origin == "purged_repository" and outcome in ("deleted", "dead_lettered"):
                purged[record.repository, record.instance_uid][outcome] += 1
            if outcome == "retried":
                reschedule.append(msgspec.structs.replace(record, **change))
            elif outcome == "dead_lettered":
                dead.append(self._dead_letter(number, item, record, str(change["reason"]), now))
        # Invariant 4: a record goes only after its outcome is durable, so a crash
        # between these writes repeats work (harmless) and never loses a record.
        self._log.reschedule(number, reschedule)
        self._log.store.set_many(keys.DEAD_LETTERS, dead)
        kept_keys = {keys.pending_key(r.not_before, r.id) for r in reschedule}
        # A batch record's members share its key: removed once, after all outcomes.
        done_keys = dict.fromkeys(item.key for item in due if item.key not in kept_keys)
        self._log.remove(number, done_keys)
        for (name, uid), tally in purged.items():
            try:
                self._purges.count(
                    name, uid, deleted=tally["deleted"], dead_lettered=tally["dead_lettered"]
                )
            except KvlakeError as exc:  # the report lags; the deletions themselves are done
                log.warning("purge report of %s/%s not updated: %s", name, uid, exc)
        return {name: counts[name] for name in ("deleted", "retried", "dead_lettered", "kept")}

    def _decide(
        self, record: PendingDelete, verdict: Verdict, error: str | None, now: float
    ) -> tuple[str, dict[str, object]]:
        """The outcome of one record ('deleted', 'kept', 'retried', 'dead_lettered') and changes."""
        if verdict.action == "delete" and error is None:
            return "deleted", {}
        if verdict.action == "kept":
            log.debug("keeping %s: %s", record.address, verdict.reason)
            return "kept", {}
        if verdict.action == "invalid":
            return "dead_lettered", {"reason": verdict.reason}
        if verdict.action == "wait":  # a commit in progress: no attempt was spent
            delay = self._settings.reconsume_delay
            return "retried", {"last_error": verdict.reason, "not_before": now + delay}
        reason = error or verdict.reason
        attempts = record.attempts + 1
        if attempts >= self._settings.max_attempts:
            if verdict.action == "in_use":
                log.info(
                    "forgetting %s after %d checks: %s; whoever removes that reference logs it"
                    " again",
                    record.address,
                    attempts,
                    reason,
                )
                return "kept", {}
            return "dead_lettered", {
                "reason": f"gave up after {attempts} attempts; last error: {reason}"
            }
        delay = min(self._settings.reconsume_delay * 2 ** (attempts - 1), MAX_BACKOFF)
        return "retried", {"attempts": attempts, "last_error": reason, "not_before": now + delay}

    def _delete_blobs(
        self, records: list[PendingDelete], verdicts: list[Verdict]
    ) -> dict[str, str]:
        """Delete the blobs that passed the check; return the errors by record id."""
        by_namespace: dict[str, list[PendingDelete]] = defaultdict(list)
        for record, verdict in zip(records, verdicts, strict=True):
            if verdict.action == "delete":
                by_namespace[record.storage_namespace].append(record)
        errors: dict[str, str] = {}
        for namespace, members in by_namespace.items():
            for start in range(0, len(members), DELETE_CHUNK):
                chunk = members[start : start + DELETE_CHUNK]
                try:
                    failed = self._blockstore.delete_many(namespace, [r.address for r in chunk])
                except KvlakeError as exc:
                    failed = {r.address: exc for r in chunk}
                for record in chunk:
                    if record.address in failed:
                        errors[record.id] = f"deleting the blob failed: {failed[record.address]}"
                    elif record.origin == "unlinked_upload":
                        self._abort_uploads(namespace, record, errors)
        return errors

    def _abort_uploads(self, namespace: str, record: PendingDelete, errors: dict[str, str]) -> None:
        """An address handed out for a multipart upload that was never completed: its
        upload still holds the parts, which nothing else would ever drop."""
        try:
            self._blockstore.abort_uploads_to(namespace, record.address)
        except KvlakeError as exc:
            errors[record.id] = f"aborting the uploads to the blob failed: {exc}"

    def _dead_letter(
        self,
        number: int,
        item: DueRecord,
        record: PendingDelete | None,
        reason: str,
        now: float,
    ) -> KeyValue:
        record_id = record.id if record else keys.stable_record_id(str(number), item.key)
        letter = DeadLetter(
            id=record_id,
            record=record,
            reason=reason,
            dead_lettered=now,
            partition=number,
            raw=b"" if record else item.raw,
        )
        log.warning("dead-lettering deletion record %s: %s", record_id, reason)
        return keys.dead_letter_key(record_id), encode(letter)
