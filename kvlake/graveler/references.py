"""What references a blob, read for the deletion layer without it knowing graveler's keys.

The deletion worker must decide from the KV as it is now whether a logged blob
is still referenced, and the purge must know which repository instances exist.
These reads are graveler's to spell (its key schema is private to it), so they
live here, as `Graveler.references`, and the deletion layer calls them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field

from kvlake.errors import KeyNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.lifecycle.namespaces import NamespaceClaim, Namespaces
from kvlake.graveler.records import (
    ConsumedToken,
    DeletedRepository,
    Repository,
    TokenState,
    Value,
    decode_deleted_repository,
    decode_dropped_token,
    decode_repository,
    decode_value,
)
from kvlake.graveler.refs.store import Refs
from kvlake.graveler.staging.range_tombstones import FIRST_PATH
from kvlake.kv import Store

StagedPage = list[tuple[bytes, Value | None]]
"""Staged entries of one token, in key order; a tombstone's value is None."""


@dataclass(slots=True)
class LiveTokens:
    """The staging tokens an in-use check looks in, and the tokens it counts as sealed."""

    all: list[str] = field(default_factory=list)
    sealed: set[str] = field(default_factory=set)


class References:
    """Reads of repository instances, live tokens, staged entries and commits. Thread-safe."""

    def __init__(
        self, store: Store, refs: Refs, committed: CommittedManager, namespaces: Namespaces
    ) -> None:
        self._store = store
        self._refs = refs
        self._committed = committed
        self._namespaces = namespaces

    # -- repository instances ---------------------------------------------------------

    def repository_record(self, name: str) -> Repository | None:
        """The record under `name` in any state (`deleted` tombstones included), or None."""
        try:
            raw, _ = self._store.get(keys.REPOSITORIES, keys.repository_key(name))
        except KeyNotFoundError:
            return None
        return decode_repository(raw)

    def repository_records(self) -> Iterator[Repository]:
        """Every repository record in any state, in name order."""
        with self._store.scan(keys.REPOSITORIES, keys.repository_key("")) as scan:
            for _, raw in scan:
                yield decode_repository(raw)

    def deleted_instance(self, name: str, instance_uid: str) -> DeletedRepository | None:
        """The instance if it awaits the cleaner, else None."""
        try:
            raw, _ = self._store.get(
                keys.DELETED_REPOSITORIES, keys.deleted_repository_key(name, instance_uid)
            )
        except KeyNotFoundError:
            return None
        return decode_deleted_repository(raw)

    def namespace_owner(self, namespace: str) -> NamespaceClaim | None:
        """Who holds a (normalised) storage namespace, in what state; None if never claimed."""
        return self._namespaces.owner(namespace)

    # -- tokens, staged entries and commits ------------------------------------------

    def live_tokens(self, repository: Repository) -> LiveTokens:
        """Each branch's staging token and sealed tokens, hidden branches included: one
        scan of every branch record (the in-use check reads `tokens_to_check` instead)."""
        live = LiveTokens()
        for _, branch in self._refs.list_branches(repository):
            live.all.append(branch.staging_token)
            live.all.extend(branch.sealed_tokens)
            live.sealed.update(branch.sealed_tokens)
        return live

    def tokens_to_check(self, repository: Repository) -> LiveTokens:
        """The tokens whose staging an in-use check looks in, and those it counts as sealed,
        read before any staging lookup, at a cost that grows with the non-empty staging
        partitions, not with branches whose staging is empty (issue 33, item 2).

        Exactly the live tokens holding entries, not every non-empty partition: a
        token a commit consumed, or one dropped and not yet cleaned, still holds the
        entries its commit or reset replaced, and counting them kept blobs garbage
        collection had to delete. Read in this order:

        1. The non-empty staging partitions of the instance (a listing).
        2. Of those tokens, the consumed-token records, and the drop queue's entries
           (by token, then the entries, which name the token's branch).
        3. The sealing index and, in one `get_many`, the branches it names and those
           the drop queue named (kvlake/graveler/refs/sealing.py): `sealed`.
        4. The listing again: `all` is its tokens minus those found dead in 3.

        A token is dead when step 3 proves no branch names it: consumed in step 2 yet
        not sealed in step 3 (a token is consumed only while sealed, and a sealed
        token never becomes a staging token again, so it has left its branch), or
        queued in step 2 yet not named by its branch's record in step 3 (a token
        belongs to one branch; once it left, nothing names it again). Reading
        step 2 before step 3 is what makes this hold: read after, a token still
        staging at step 3 could have been sealed and consumed since, and counted
        dead while its commit is in progress. A token the drop queue names without
        its branch (older entries) or whose queue entry is gone is looked in.
        Listing again after step 3 means every token live at step 3 that holds an
        entry by the end of step 4 is looked in, as a scan of every branch record
        followed by the lookups found them. Rows read: the index, the branches it
        names, and two to four per non-empty partition (the listings, its consumed
        record and queue entries).
        """
        uid = repository.instance_uid
        listed = list(self.tokens_with_entries(uid))
        consumed = set(self._refs.consumed_by(repository, listed))
        queued = self._queued_branches([token for token in listed if token not in consumed])
        read = self._refs.sealed_tokens(repository, also=set(queued.values()))
        dead = {token for token in consumed if token not in read.sealed}
        for token, name in queued.items():
            branch = read.branches.get(name)
            if branch is None or token not in branch.tokens():
                dead.add(token)
        tokens = [token for token in self.tokens_with_entries(uid) if token not in dead]
        return LiveTokens(tokens, read.sealed)

    def _queued_branches(self, tokens: Sequence[str]) -> dict[str, str]:
        """Of `tokens`, those the drop queue holds with the branch that named them: the
        token-keyed index (`keys.DROPPED_BY_TOKEN`), then the queue entries it names (an
        index entry without its queue entry, or an entry without a branch, counts for
        nothing)."""
        if not tokens:
            return {}
        index = self._store.get_many(keys.DROPPED_BY_TOKEN, sorted(t.encode() for t in tokens))
        if not index:
            return {}
        entries = self._store.get_many(keys.DROPPED_TOKENS, sorted(set(index.values())))
        queued: dict[str, str] = {}
        for token, key in index.items():
            raw = entries.get(key)
            if raw is not None:
                entry = decode_dropped_token(raw)
                if entry.branch and entry.token == token.decode():
                    queued[entry.token] = entry.branch
        return queued

    def token_states(
        self, repository: Repository, tokens: Collection[str]
    ) -> dict[str, TokenState]:
        """What each staging token is now: for deciding whether its entries' blobs may go.

        "sealed" if a branch lists it among its sealed tokens (a commit may be reading
        it; this wins over "consumed"), "staging" if it is a branch's staging token,
        "consumed" if a commit recorded consuming it (its blobs are committed data,
        garbage collection's alone), else "dropped". One scan of the branches, then
        point reads of the consumed records for the rest. A token's state only moves
        forward (staging, sealed, consumed or dropped), except that a reset may drop
        a sealed token that a commit then never publishes: its stale consumed record
        only keeps blobs for garbage collection.
        """
        staging, sealed = self._refs.referenced_tokens(repository)
        states: dict[str, TokenState] = {}
        for token in tokens:
            if token in sealed:
                states[token] = "sealed"
            elif token in staging:
                states[token] = "staging"
        rest = [token for token in tokens if token not in states]
        records = self._refs.consumed_by(repository, rest)
        for token in rest:
            consumed = token in records and records[token].commit_ids
            states[token] = "consumed" if consumed else "dropped"
        return states

    def consumers(
        self, repository: Repository, tokens: Collection[str]
    ) -> dict[str, ConsumedToken]:
        """The consumed-token record of each token that has one."""
        return self._refs.consumed_by(repository, tokens)

    def committed_value(self, repository: Repository, commit_id: str, key: bytes) -> Value:
        """The value at `key` in that commit. Raises a NotFoundError subclass if none."""
        commit = self._refs.get_commit(repository, commit_id)
        return self._committed.get(repository.storage_namespace, commit.metarange_id, key)

    def staged_values(self, token: str, paths: Sequence[bytes]) -> dict[bytes, Value | None]:
        """The entries of `token` at those paths that exist (a tombstone as None)."""
        found = self._store.get_many(keys.staging_partition(token), paths)
        return {path: (decode_value(raw) if raw else None) for path, raw in found.items()}

    def staged_values_across(
        self, tokens: Collection[str], paths: Sequence[bytes]
    ) -> dict[str, dict[bytes, Value | None]]:
        """The entries at those paths in each of `tokens` that exist (a tombstone as None).

        One round trip per chunk of tokens, however many branches the repository
        has: a path checked in every live token must not cost a call per branch.
        """
        names = {keys.staging_partition(token): token for token in tokens}
        found: dict[str, dict[bytes, Value | None]] = {}
        for partition, values in self._store.get_across(names, paths).items():
            found[names[partition]] = {
                path: (decode_value(raw) if raw else None) for path, raw in values.items()
            }
        return found

    def tokens_with_entries(self, instance_uid: str) -> Iterator[str]:
        """The instance's staging tokens whose partitions hold any key, in order: live,
        sealed, or dropped and not yet cleaned. A listing of the non-empty partitions
        only, so the many branches whose staging is empty cost nothing (issue 33)."""
        prefix = keys.staging_prefix(instance_uid)
        for partition in self._store.partitions(after=prefix):
            if not partition.startswith(prefix):
                return
            yield partition[len(keys.STAGING_PREFIX) :].decode()

    def staged_pages(
        self, token: str, *, batch_size: int = 1000, start: bytes = FIRST_PATH
    ) -> Iterator[StagedPage]:
        """Every entry of `token` from path `start` on, a page at a time, so callers hold
        one page."""
        partition = keys.staging_partition(token)
        # From the first path at least: range tombstones below it name no blob.
        with self._store.scan(partition, max(start, FIRST_PATH), batch_size=batch_size) as scan:
            for page in scan.batches():
                yield [(key, decode_value(raw) if raw else None) for key, raw in page]
