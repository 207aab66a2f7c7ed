"""Phase two's fresh check: is a logged blob still referenced, and is it the record's to delete?

Invariant 4 ends here: a blob is deleted only after this check found nothing
referencing it. For one batch, records are grouped by repository instance and
each group is checked against the KV as it is now:

1. Ownership: the address is a clean key inside the record's namespace, the
   namespace is the instance's, and the instance is live, or was purged (and no
   live repository shares the namespace). An unknown instance or a foreign
   address is bad input and goes to the dead letters, never deleted. An instance
   deleted without purge keeps its data.
2. Staging (records with `check_in_use`): the path in the record's own token and
   in every live token holding entries (a branch's staging or sealed token, as
   `References.tokens_to_check` reads them: the non-empty staging partitions
   minus the tokens no branch names, consumed by a commit or dropped, not yet
   cleaned); GC records, which have no path, scan those tokens for the address.
   A hit is "in use". The sealed tokens come from graveler's sealing index and
   the branches it names (kvlake/graveler/refs/sealing.py), all read before any
   staging lookup: no row is read per branch whose staging is empty (issue 33,
   item 2).
   An entry's blob is compared as a key of the instance's namespace: an imported
   entry's full URL counts where its canonical form lies inside the namespace
   (`s3:///lake/repo1/data/x` is `data/x` of `s3://lake/repo1`), as garbage
   collection's marks count it, since imports made before sources were compared
   canonically may read the repository's own blobs that way.
   Any entry at the path in a sealed token, whatever its value, means "wait": a
   commit in progress may have read the blob there before a write replaced it,
   and holds it in memory until it publishes (then step 4 finds it). So does a
   record whose own token is sealed: a reset that read the branch before the
   seal may have removed the entry from the token the commit reads.
3. Shared addresses: a copy or a link marked the address shared. Any entry
   anywhere may hold it, so staging records keep it and leave it to garbage
   collection. Read after staging: a copy marks before it re-reads its source,
   so a copy whose entry our staging read missed had marked before we look. A
   link has no source to re-read, so the candidates are claimed first
   (`DeletionLog.claim`): a link marks, then reads the claim, and refuses while
   one is fresh, so of a worker and a link racing on one blob at least one sees
   the other.
4. Committed data (staging records): a commit that consumed the record's
   token (graveler's consumed-token records) and holds the blob at the path
   keeps it, for good: committed blobs are garbage collection's, and such a
   commit stays readable by id after a hard reset or a branch deletion. No
   history is walked: a record names the token its entry was in, and an entry
   reaches a commit only through the token that commit consumed (or by a copy,
   which step 3 catches), so one lookup per record decides.
5. GC records: the run's mark set must not hold the address, and no copy may
   have shared it since the run started (the copy's entry may have been
   committed before step 2 looked, into a commit the run never marked).
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence

from kvlake import ids
from kvlake.blockstore import BlockStore, check_key, parse_address
from kvlake.deletion import keys
from kvlake.deletion.gc import RUN_PROPERTY, STARTED_PROPERTY, GcMarks, MarkSet
from kvlake.deletion.log import EntryOf
from kvlake.deletion.purge import Purges
from kvlake.deletion.records import STAGING_ORIGINS, PendingDelete
from kvlake.deletion.staged_refs import StagedReferences
from kvlake.deletion.verdicts import DELETE, Instance, Verdict
from kvlake.errors import InvalidInputError, KvlakeError, NotFoundError
from kvlake.graveler import Graveler, Repository, check_repository_name

log = logging.getLogger(__name__)


class ReferenceChecker:
    """Decides on batches of records. Thread-safe.

    It keeps one thing between calls: each recent GC run's staged-address set
    (kvlake/deletion/staged_refs.py).
    """

    def __init__(
        self,
        graveler: Graveler,
        blockstore: BlockStore,
        purges: Purges,
        entry_of: EntryOf,
        *,
        gc_marks: MarkSet | None = None,
    ) -> None:
        self._graveler = graveler
        self._references = graveler.references
        self._store = purges.store
        self._log = purges.log
        self._blockstore = blockstore
        self._purges = purges
        self._entry_of = entry_of
        self._gc_marks: MarkSet = gc_marks or GcMarks(purges.store)
        self._staged = StagedReferences(graveler, entry_of, clock=purges.log.clock)

    def check(self, records: Sequence[PendingDelete]) -> list[Verdict]:
        """One verdict per record, in order. A group whose reads fail gets `retry` verdicts."""
        verdicts: list[Verdict] = [DELETE] * len(records)
        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        seen: dict[str, str] = {}  # namespace or repository name -> its problem, once a batch
        for index, record in enumerate(records):
            problem = self._own_problem(record, seen)
            if problem:
                verdicts[index] = Verdict("invalid", problem)
            else:
                groups[record.repository, record.instance_uid].append(index)
        for (name, uid), indexes in groups.items():
            group = [records[i] for i in indexes]
            try:
                decided = self._check_group(name, uid, group)
            except KvlakeError as exc:
                log.warning("checking deletions of %s/%s failed: %s", name, uid, exc)
                decided = [Verdict("retry", f"the in-use check failed: {exc}")] * len(group)
            for index, verdict in zip(indexes, decided, strict=True):
                verdicts[index] = verdict
        return verdicts

    def _own_problem(self, record: PendingDelete, seen: dict[str, str]) -> str:
        """Why the record itself is bad input, or "" when it is well formed."""
        name = record.repository
        if name not in seen:
            try:
                check_repository_name(name)
                seen[name] = ""
            except InvalidInputError as exc:
                seen[name] = f"repository name {name!r} is invalid ({exc})"
        if seen[name]:
            return seen[name]
        if len(record.instance_uid) != ids.UID_LENGTH:
            return f"instance uid {record.instance_uid!r} is not a repository instance uid"
        try:
            check_key(record.address)
        except InvalidInputError:
            return (
                f"address {record.address!r} is not a key inside storage namespace"
                f" {record.storage_namespace!r}; only relative keys such as 'data/...' are deleted"
            )
        namespace = "\0" + record.storage_namespace  # never a repository name
        if namespace not in seen:  # adapters may touch the disk: once per batch
            try:
                self._blockstore.check_namespace(record.storage_namespace)
                seen[namespace] = ""
            except InvalidInputError as exc:
                seen[namespace] = (
                    f"storage namespace {record.storage_namespace!r} is not served here ({exc})"
                )
        return seen[namespace]

    def _check_group(self, name: str, uid: str, records: list[PendingDelete]) -> list[Verdict]:
        instance = self._instance(name, uid)
        if instance.kind == "unknown":
            reason = (
                f"repository instance {name}/{uid} is unknown: no repository, deletion or purge"
                " has it; the record cannot be trusted, drop it or requeue it once it exists"
            )
            return [Verdict("invalid", reason)] * len(records)
        if instance.kind == "creating":
            return [Verdict("in_use", f"repository {name!r} is still being created")] * len(records)
        verdicts: list[Verdict] = []
        pending: list[int] = []
        normalised = {
            n: self._blockstore.check_namespace(n) for n in {r.storage_namespace for r in records}
        }
        for index, record in enumerate(records):
            verdict = self._ownership(instance, record, normalised[record.storage_namespace])
            verdicts.append(verdict)
            if verdict is DELETE and instance.kind == "live" and record.check_in_use:
                pending.append(index)
        if pending:
            for index, verdict in zip(
                pending, self._in_use(instance, [records[i] for i in pending]), strict=True
            ):
                verdicts[index] = verdict
        return verdicts

    def _ownership(self, instance: Instance, record: PendingDelete, namespace: str) -> Verdict:
        if namespace != instance.namespace:
            return Verdict(
                "invalid",
                f"storage namespace {record.storage_namespace!r} is not that of repository"
                f" instance {record.repository}/{record.instance_uid} ({instance.namespace!r})",
            )
        if instance.kind == "deleted":
            return Verdict("kept", "the repository was deleted without purge, which keeps its data")
        if instance.kind == "purged":
            if instance.taken_by is None:  # once per batch
                owner = self._references.namespace_owner(namespace)
                instance.taken_by = ""
                if owner and owner.instance_uid != record.instance_uid and owner.state != "free":
                    instance.taken_by = owner.repository
            if instance.taken_by:
                return Verdict(
                    "kept",
                    f"the purge finished and namespace {namespace!r} now belongs to"
                    f" repository {instance.taken_by!r}",
                )
            if instance.shared_with is None:  # once per batch: a scan of all repositories
                users = self._purges.live_users(namespace, except_uid=record.instance_uid)
                instance.shared_with = next((other.name for other in users), "")
            if instance.shared_with:
                return Verdict(
                    "invalid",
                    f"purged namespace {namespace!r} is used by live repository"
                    f" {instance.shared_with!r}; its blobs are not deleted",
                )
            return DELETE
        if record.origin == "purged_repository":
            return Verdict("invalid", "a purge record names a live repository instance")
        return DELETE

    def _instance(self, name: str, uid: str) -> Instance:
        repository = self._references.repository_record(name)
        if repository is not None and repository.instance_uid == uid:
            if repository.state == "active":
                instance = Instance("live", repository.storage_namespace, repository)
                with contextlib.suppress(InvalidInputError):  # else no import lies inside
                    instance.place = parse_address(repository.storage_namespace)
                self._read_refs(instance, repository)
                return instance
            if repository.state == "initial":
                return Instance("creating")
        purge = self._purges.load(name, uid)
        if purge is not None:
            return Instance("purged", self._blockstore.check_namespace(purge[0].storage_namespace))
        if repository is not None and repository.instance_uid == uid:
            return Instance("deleted", repository.storage_namespace)
        deleted = self._references.deleted_instance(name, uid)
        if deleted is None:
            return Instance("unknown")
        return Instance("deleted", deleted.storage_namespace)

    def _read_refs(self, instance: Instance, repository: Repository) -> None:
        """The tokens to look in and the sealed ones: read before any staging lookup.

        Not a scan of every branch (issue 33, item 2): the non-empty staging
        partitions, less the tokens the sealing index, the consumed-token records and
        the drop queue show no branch names (see `References.tokens_to_check`).
        """
        live = self._references.tokens_to_check(repository)
        instance.tokens, instance.sealed = live.all, live.sealed

    # -- in-use ------------------------------------------------------------------------

    def _in_use(self, instance: Instance, records: list[PendingDelete]) -> list[Verdict]:
        verdicts: list[Verdict | None] = [None] * len(records)
        for index, hit in self._staged.hits(instance, records).items():
            verdicts[index] = hit
        gc_indexes = [i for i, r in enumerate(records) if r.origin == "garbage_collection"]
        if gc_indexes:
            self._check_gc(records, gc_indexes, verdicts)
            if instance.repository is not None:  # claimed before reading the marks, as below
                candidates = (records[i].address for i in gc_indexes if verdicts[i] is None)
                self._log.claim(instance.repository.instance_uid, candidates)
            self._check_copies(instance, records, gc_indexes, verdicts)
        staging = [
            i for i, r in enumerate(records) if verdicts[i] is None and r.origin in STAGING_ORIGINS
        ]
        for index in self._published(instance, records, staging):
            verdicts[index] = Verdict(
                "kept", "a commit that consumed its staging token holds it: garbage collection's"
            )
        staging = [i for i in staging if verdicts[i] is None]
        if staging and instance.repository is not None:
            # Claim before the last read of the marks: a link that marks after this
            # read sees the claim and refuses (DeletionLog.claimed). The worker drops
            # the claims once its deletes are done.
            uid = instance.repository.instance_uid
            self._log.claim(uid, (records[i].address for i in staging))
        shared = self._shared(instance, [records[i] for i in staging])
        for index in staging:
            if records[index].address in shared:
                verdicts[index] = Verdict(
                    "kept", "a copy shares the address; garbage collection decides on it"
                )
        return [verdict or DELETE for verdict in verdicts]

    def _published(
        self, instance: Instance, records: list[PendingDelete], indexes: list[int]
    ) -> set[int]:
        """Records whose blob a commit that consumed the record's token holds at its path.

        Committed data is garbage collection's alone: such a commit stays readable by
        its id after a hard reset or a branch deletion, which no walk from the refs
        sees. The commits come from graveler's consumed-token records: a lookup per
        record, however long the history.
        """
        repository = instance.repository
        tokens = {records[i].staging_token for i in indexes if records[i].path}
        if repository is None or not tokens - {""}:
            return set()
        claims = self._references.consumers(repository, tokens - {""})
        published: set[int] = set()
        for index in indexes:
            record = records[index]
            claim = claims.get(record.staging_token)
            for commit_id in claim.commit_ids if claim is not None and record.path else ():
                try:
                    value = self._references.committed_value(repository, commit_id, record.path)
                except NotFoundError:
                    continue  # a claim whose commit was never stored, or no entry there
                if self._staged.key_of(value, instance) == record.address:
                    published.add(index)
                    break
        return published

    def _check_gc(
        self, records: list[PendingDelete], indexes: list[int], verdicts: list[Verdict | None]
    ) -> None:
        by_run: dict[str, list[int]] = defaultdict(list)
        for index in indexes:
            run = records[index].properties.get(RUN_PROPERTY, "")
            if not run:
                verdicts[index] = Verdict(
                    "invalid", f"a GC record has no {RUN_PROPERTY!r} property"
                )
            else:
                by_run[run].append(index)
        for run, members in by_run.items():
            try:
                marked = self._gc_marks.marked(run, (records[i].address for i in members))
            except (NotFoundError, InvalidInputError) as exc:
                for index in members:
                    verdicts[index] = Verdict("invalid", str(exc))
                continue
            for index in members:
                if records[index].address in marked:
                    verdicts[index] = Verdict("kept", f"GC run {run!r} marked it as referenced")

    def _check_copies(
        self,
        instance: Instance,
        records: list[PendingDelete],
        indexes: list[int],
        verdicts: list[Verdict | None],
    ) -> None:
        """GC candidates a copy shared since their run started: the run cannot know them."""
        uid = instance.repository.instance_uid if instance.repository else ""
        pending = [i for i in indexes if verdicts[i] is None]
        wanted = sorted({keys.shared_key(uid, records[i].address) for i in pending})
        found = self._store.get_many(keys.SHARED, wanted)
        for index in pending:
            record = records[index]
            marker = found.get(keys.shared_key(uid, record.address))
            if marker is None:
                continue
            started = _seconds(record.properties.get(STARTED_PROPERTY, ""))
            if keys.shared_since(marker) >= started:
                verdicts[index] = Verdict(
                    "kept", "a copy shared the address after the GC run started"
                )

    def _shared(self, instance: Instance, records: Iterable[PendingDelete]) -> set[str]:
        uid = instance.repository.instance_uid if instance.repository else ""
        wanted = sorted({keys.shared_key(uid, r.address) for r in records})
        found = self._store.get_many(keys.SHARED, wanted)
        prefix = len(uid) + 1
        return {key[prefix:].decode() for key in found}


def _seconds(text: str) -> float:
    """A run's start as recorded; unreadable or absent counts as the epoch (keeps every copy)."""
    try:
        return float(text)
    except ValueError:
        return 0.0
