"""Step 2 of the fresh check (kvlake/deletion/checks.py): whether a live staging token
references a logged blob, or a commit in progress may.

Records with a path are looked up at that path in their own token and every live token
holding entries (`References.tokens_to_check`), in one read across tokens. GC records
have no path: each GC run's set of staged addresses answers them, read once and reused
for `STAGED_SET_REUSE` seconds.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from kvlake.blockstore import parse_address
from kvlake.deletion.gc import RUN_PROPERTY
from kvlake.deletion.log import EntryOf
from kvlake.deletion.records import PendingDelete
from kvlake.deletion.verdicts import Instance, Verdict
from kvlake.errors import InvalidInputError
from kvlake.graveler import Graveler, Value

STAGED_SET_REUSE: Final = 60.0
"""Seconds a GC run's set of staged addresses answers before it is read again.

Scanning every staged entry of the repository for each batch of candidates made
a run cost (candidates / batch) x (staged entries). An entry staged after the set
was read is missed for at most this long, which is safe: a GC candidate is a blob
older than the run's grace period (the Spark job lists only hour folders that
ended by then), so a writer that uploaded it and stages it now is older than
that; a copy or a link made since the run started marks the address shared,
which every batch reads afresh; tokens that became live since are read at once.
"""
STAGED_SETS_KEPT: Final = 4
"""GC runs whose staged-address sets a checker keeps (runs of several repositories)."""


@dataclass(slots=True)
class _StagedAddresses:
    """The addresses a GC run found staged, and where: read once, reused for a while."""

    built: float
    tokens: set[str] = field(default_factory=set)
    where: dict[str, tuple[str, bytes]] = field(default_factory=dict)


class StagedReferences:
    """Finds the records whose blob live staging references. Thread-safe.

    It keeps one thing between calls: each recent GC run's staged-address set
    (see `STAGED_SET_REUSE`), behind a lock.
    """

    def __init__(
        self, graveler: Graveler, entry_of: EntryOf, *, clock: Callable[[], float]
    ) -> None:
        self._references = graveler.references
        self._entry_of = entry_of
        self._clock = clock
        self._lock = threading.Lock()
        self._staged_sets: dict[tuple[str, str], _StagedAddresses] = {}

    def hits(self, instance: Instance, records: list[PendingDelete]) -> dict[int, Verdict]:
        """Records whose blob a staged entry references, or a commit in progress may."""
        hits: dict[int, Verdict] = {}
        by_token: dict[str, list[int]] = defaultdict(list)
        for index, record in enumerate(records):
            if record.staging_token in instance.sealed:
                # The entry left a token a commit has sealed since (a reset or a writer
                # that read the branch before the seal): the commit may have read it.
                token = record.staging_token
                hits[index] = Verdict("wait", f"a commit in progress may hold {token}'s entries")
            if record.path:
                for token in {record.staging_token, *instance.tokens} - {""}:
                    by_token[token].append(index)
        paths = sorted({records[i].path for indexes in by_token.values() for i in indexes})
        # One read across every live token, not a call per branch (issue 33, item 2).
        staged = self._references.staged_values_across(by_token, paths) if by_token else {}
        for token, indexes in by_token.items():
            found = staged.get(token, {})
            for index in indexes:
                record = records[index]
                if record.path not in found:
                    continue
                value = found[record.path]  # None: a tombstone
                if value is not None and self.key_of(value, instance) == record.address:
                    where = f"staged at {record.path!r} in staging token {token}"
                    hits[index] = Verdict("in_use", where)
                elif token in instance.sealed and index not in hits:
                    where = f"a commit in progress may hold {record.path!r} (token {token})"
                    hits[index] = Verdict("wait", where)
        pathless: dict[str, list[int]] = defaultdict(list)  # by GC run
        for index, record in enumerate(records):
            if not record.path:
                pathless[record.properties.get(RUN_PROPERTY, "")].append(index)
        for run, indexes in pathless.items():
            located = self._staged_at(instance, run, [records[i].address for i in indexes])
            for index in indexes:
                location = located.get(records[index].address)
                if location is not None:
                    token, key = location
                    hits[index] = Verdict("in_use", f"staged at {key!r} in staging token {token}")
        return hits

    def _staged_at(
        self, instance: Instance, run: str, addresses: list[str]
    ) -> dict[str, tuple[str, bytes]]:
        """Where live tokens stage those addresses (of records without a path), if they do.

        From the run's staged-address set, so a GC run reads each staged entry
        once per `STAGED_SET_REUSE` seconds, not once per batch of candidates
        (issue 33, item 1). Tokens that became live since the set was built are
        read before it answers; only tokens holding entries are listed (item 2).
        """
        repository = instance.repository
        uid = repository.instance_uid if repository is not None else ""
        now = self._clock()
        with self._lock:
            staged = self._staged_sets.pop((uid, run), None)
            if staged is None or not staged.built <= now < staged.built + STAGED_SET_REUSE:
                staged = _StagedAddresses(now)
            self._staged_sets[uid, run] = staged  # most recently used last
            while len(self._staged_sets) > STAGED_SETS_KEPT:
                del self._staged_sets[next(iter(self._staged_sets))]
            # The instance's live tokens holding entries (`References.tokens_to_check`):
            # no scan per branch whose staging is empty (issue 33, item 2).
            unread = [token for token in instance.tokens if token not in staged.tokens]
            for token in unread:
                self._read_staged(token, staged, instance)
            return {a: staged.where[a] for a in addresses if a in staged.where}

    def _read_staged(self, token: str, staged: _StagedAddresses, instance: Instance) -> None:
        for page in self._references.staged_pages(token):
            for key, value in page:
                if value is not None:
                    address = self.key_of(value, instance)
                    if address:
                        staged.where.setdefault(address, (token, key))
        staged.tokens.add(token)

    def key_of(self, value: Value, instance: Instance) -> str:
        """The key in the instance's namespace of the blob `value` references ("" if none):
        its address, or an imported URL's key where it lies inside the namespace."""
        ref = self._entry_of(value)
        if ref.address or not ref.imported:
            return ref.address
        if instance.place is None:
            return ""
        try:
            return parse_address(ref.imported).key_in(instance.place)
        except InvalidInputError:
            return ""  # elsewhere: not this namespace's blob
