"""Branches, tags and commits of one repository instance.

All of them live in the instance partition `<name>-<uid>`, so deleting a
repository never races with reads of a new repository of the same name. Commit
ids are content addresses: the same commit always has the same id, which makes
storing a commit idempotent and lets a retried commit reuse its own record. It
also makes commits safe to cache: a cached commit, keyed by instance uid and
id, can never be stale, whatever other processes do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Final, Protocol, TypeVar

import msgspec

from kvlake.errors import (
    BranchNotFoundError,
    CommitIdError,
    CommitNotFoundError,
    ConflictError,
    KeyNotFoundError,
    PreconditionFailedError,
    TagNotFoundError,
)
from kvlake.graveler import keys
from kvlake.graveler.records import (
    Branch,
    Commit,
    ConsumedToken,
    DroppedToken,
    Repository,
    Tag,
    decode_branch,
    decode_commit,
    decode_consumed_token,
    decode_tag,
    encode,
)
from kvlake.graveler.refs.lineage import Lineage, lineage_of, stamp, unstamped
from kvlake.graveler.refs.lru import Lru
from kvlake.graveler.refs.sealing import SealedRead, SealingIndex
from kvlake.graveler.refs.visible import VisibleBranches
from kvlake.kv import Predicate, Store, get_or_none, update

_R = TypeVar("_R")

COMMIT_CACHE_SIZE: Final = 20_000
"""Commits kept decoded (a few hundred bytes each): a long log reads each only once."""
LINEAGE_CACHE_SIZE: Final = 200_000
"""Commits whose parents, generation and date walks keep (about 300 bytes each), so
`main~100000`, merge bases and merges of long-forked branches read each commit once,
not on every call, where the full-commit cache holds far fewer (issue 33)."""


def commit_id(commit: Commit) -> str:
    """sha256 over a canonical, length-prefixed encoding of every commit field."""
    digest = hashlib.sha256()

    def field(text: str) -> None:
        data = text.encode()
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)

    field(commit.committer)
    field(commit.message)
    field(commit.metarange_id)
    field(str(commit.creation_date))
    digest.update(len(commit.metadata).to_bytes(8, "big"))
    for name in sorted(commit.metadata):
        field(name)
        field(commit.metadata[name])
    digest.update(len(commit.parents).to_bytes(8, "big"))
    for parent in commit.parents:
        field(parent)
    return digest.hexdigest()


class DropTokens(Protocol):
    """Queues staging tokens for dropping (`Graveler.queue_token_drops`)."""

    def __call__(self, repository: Repository, tokens: Sequence[str], *, branch: str) -> None:
        """`branch` is the branch whose record names the tokens as they are queued."""


def dropped_token_items(
    repository: Repository, tokens: Sequence[str], due: float, *, branch: str = ""
) -> Iterator[tuple[bytes, bytes]]:
    """The `graveler_dropped_tokens` entries that queue these tokens for dropping at `due`."""
    for token in tokens:
        record = DroppedToken(
            repository=repository.name,
            instance_uid=repository.instance_uid,
            token=token,
            branch=branch,
        )
        yield keys.dropped_token_key(due, token), encode(record)


def partition_of(repository: Repository) -> bytes:
    return keys.instance_partition(repository.name, repository.instance_uid)


class Refs:
    """Typed access to the records of a repository instance. Thread-safe.

    Commits are read through a bounded cache of `commit_cache_size` commits, and
    walks through a larger one of `lineage_cache_size` lineages (parents only).
    """

    def __init__(
        self,
        store: Store,
        *,
        commit_cache_size: int = COMMIT_CACHE_SIZE,
        lineage_cache_size: int = LINEAGE_CACHE_SIZE,
    ) -> None:
        self._store = store
        self._commits: Lru[Commit] = Lru(commit_cache_size)
        self._lineages: Lru[Lineage] = Lru(lineage_cache_size)
        self._visible = VisibleBranches(store)
        self._sealing = SealingIndex(store)

    # -- branches ---------------------------------------------------------------

    def load_branch(self, repository: Repository, name: str) -> tuple[Branch, Predicate]:
        loaded = get_or_none(self._store, partition_of(repository), keys.branch_key(name))
        if loaded is None:
            raise _branch_not_found(repository, name)
        return decode_branch(loaded[0]), loaded[1]

    def update_branch(
        self,
        repository: Repository,
        name: str,
        change: Callable[[Branch], Branch | None],
        *,
        what: str,
    ) -> Branch:
        """Write `change(branch)` over the branch's record unless another writer got there
        first; then call `change` again on what that writer left (`kvlake.kv.update`, up
        to `kvlake.kv.MAX_TRIES` times). Every change of a branch record goes through here.

        `change` returns the new record (make it with `Branch.with_tokens`), or None to
        leave the record as it is; it may raise to refuse. It runs right before each
        attempt's compare-and-swap, so a step that must come before the write (queueing
        the tokens it unreferences for dropping) goes in it, and must be harmless when
        the write then loses: the cleaner re-checks every queued token against its branch.

        Returns:
            The record now stored: the one written, or the one `change` left alone.

        Raises:
            BranchNotFoundError: no such branch (or it was deleted meanwhile).
            TooManyTriesError: racing writers kept winning; `what` names the change
                (as in "sealing branch 'main'").
        """
        stored: Branch | None = None

        def change_raw(raw: bytes | None) -> bytes | None:
            nonlocal stored
            if raw is None:
                raise _branch_not_found(repository, name)
            current = decode_branch(raw)
            changed = change(current)
            stored = current if changed is None else changed
            return None if changed is None else encode(changed)

        update(self._store, partition_of(repository), keys.branch_key(name), change_raw, what=what)
        assert stored is not None  # `update` returned, so `change_raw` ran and did not raise
        return stored

    def create_branch(self, repository: Repository, name: str, branch: Branch) -> None:
        partition = partition_of(repository)
        self._sealing.build(partition)  # a new repository's first branch: the index is empty
        if not branch.hidden:  # indexed before, and checked after (see visible.py)
            self._visible.add(partition, name)
        try:
            self._store.set_if(partition, keys.branch_key(name), encode(branch), None)
        except PreconditionFailedError:
            raise ConflictError(
                f"branch {name!r} already exists in repository {repository.name!r}"
            ) from None
        if not branch.hidden:
            self._visible.keep(partition, name)

    def swap_branch(
        self, repository: Repository, name: str, branch: Branch, predicate: Predicate
    ) -> Predicate:
        """Replace the branch if unchanged since read; return the predicate of the new record.

        Raises PreconditionFailedError when it changed.
        """
        encoded = encode(branch)
        self._store.set_if(partition_of(repository), keys.branch_key(name), encoded, predicate)
        return Predicate(encoded)

    def delete_branch_record(self, repository: Repository, name: str) -> None:
        self._store.delete(partition_of(repository), keys.branch_key(name))
        self._visible.remove(partition_of(repository), name)

    def list_branches(
        self,
        repository: Repository,
        *,
        after: str = "",
        prefix: str = "",
        visible_only: bool = False,
    ) -> Iterator[tuple[str, Branch]]:
        """Branches in name order; `visible_only` leaves hidden ones out, reading the
        visible-branch index, never the hidden records (issue 33)."""
        if visible_only:
            first = prefix.encode()
            start = max(after.encode() + b"\0" if after else first, first)
            yield from self._visible.branches(partition_of(repository), first, start)
            return
        yield from self._scan_names(
            repository, keys.BRANCH_PREFIX, after, decode_branch, name_prefix=prefix
        )

    def get_branches(self, repository: Repository, names: Sequence[str]) -> dict[str, Branch]:
        """The records of those branches that exist, in one `get_many`."""
        found = self._store.get_many(
            partition_of(repository), [keys.branch_key(name) for name in names]
        )
        by_key = {keys.branch_key(name): name for name in names}
        return {by_key[key]: decode_branch(raw) for key, raw in found.items()}

    # -- tags -------------------------------------------------------------------

    def create_tag(self, repository: Repository, name: str, tag: Tag) -> None:
        try:
            self._store.set_if(partition_of(repository), keys.tag_key(name), encode(tag), None)
        except PreconditionFailedError:
            raise ConflictError(
                f"tag {name!r} already exists in repository {repository.name!r}"
            ) from None

    def get_tag(self, repository: Repository, name: str) -> Tag:
        try:
            raw, _ = self._store.get(partition_of(repository), keys.tag_key(name))
        except KeyNotFoundError:
            raise TagNotFoundError(
                f"tag {name!r} not found in repository {repository.name!r}"
            ) from None
        return decode_tag(raw)

    def delete_tag(self, repository: Repository, name: str) -> None:
        self.get_tag(repository, name)
        self._store.delete(partition_of(repository), keys.tag_key(name))

    def list_tags(
        self, repository: Repository, *, after: str = "", prefix: str = ""
    ) -> Iterator[tuple[str, Tag]]:
        yield from self._scan_names(
            repository, keys.TAG_PREFIX, after, decode_tag, name_prefix=prefix
        )

    # -- the sealing index (sealing.py) ------------------------------------------

    def index_sealing(
        self, repository: Repository, name: str, anchor: str, tokens: Iterable[str]
    ) -> None:
        """Before a seal's swap (in its change function): index the tokens it seals, with
        the branch's staging token as this attempt read it (`anchor`)."""
        self._sealing.add(partition_of(repository), name, anchor, tokens)

    def sealed_tokens(self, repository: Repository, also: Collection[str] = ()) -> SealedRead:
        """Every token sealed when called (and maybe some sealed or gone since), without
        reading the branches that seal none, and the branches in `also` read in the same
        call (see sealing.py)."""
        return self._sealing.read(partition_of(repository), also)

    def referenced_tokens(self, repository: Repository) -> tuple[set[str], set[str]]:
        """Every branch's staging token, and every branch's sealed tokens: one branch scan."""
        staging: set[str] = set()
        sealed: set[str] = set()
        for _, branch in self.list_branches(repository):
            staging.add(branch.staging_token)
            sealed.update(branch.sealed_tokens)
        return staging, sealed

    # -- consumed staging tokens --------------------------------------------------

    def record_consumed(
        self, repository: Repository, tokens: Iterable[str], commit_id: str, *, empty: bool = False
    ) -> None:
        """Add `commit_id` to the commits about to publish these tokens (before its swap).

        With `empty`, `commit_id` is instead the parent over which these tokens
        were found to change nothing (a commit unsealing them, see commits.py).
        Compare-and-swap per token, so a racing commit's claim is kept, not overwritten.
        """
        partition = partition_of(repository)

        def add_ours(raw: bytes | None) -> bytes | None:
            record = ConsumedToken() if raw is None else decode_consumed_token(raw)
            ids = record.empty_over if empty else record.commit_ids
            if commit_id in ids:
                return None
            if empty:
                return encode(msgspec.structs.replace(record, empty_over=(*ids, commit_id)))
            return encode(msgspec.structs.replace(record, commit_ids=(*ids, commit_id)))

        for token in tokens:
            what = f"recording the tokens of commit {commit_id}"
            update(self._store, partition, keys.consumed_token_key(token), add_ours, what=what)

    def consumed_by(
        self, repository: Repository, tokens: Iterable[str]
    ) -> dict[str, ConsumedToken]:
        """The consumed-token record of each token that has one (one `get_many`)."""
        found: dict[str, ConsumedToken] = {}
        partition = partition_of(repository)
        wanted = {keys.consumed_token_key(token): token for token in tokens}
        for key, raw in self._store.get_many(partition, sorted(wanted)).items():
            found[wanted[key]] = decode_consumed_token(raw)
        return found

    # -- commits ----------------------------------------------------------------

    def add_commit(self, repository: Repository, commit: Commit) -> str:
        """Store the commit under its content address, with its walk fields set from its
        first parent (`lineage.stamp`); storing it twice is a no-op."""
        identifier = commit_id(commit)
        record = stamp(lambda i: self.get_lineage(repository, i), commit)
        try:
            self._store.set_if(
                partition_of(repository), keys.commit_key(identifier), encode(record), None
            )
        except PreconditionFailedError:
            pass  # same id, same content: already stored by an earlier try
        return identifier

    def create_commit(self, repository: Repository, identifier: str, commit: Commit) -> None:
        """Store a commit a caller built, under the id it claims (lakeFS's CreateCommitRecord).

        Raises:
            CommitIdError: the id is not the commit's content address.
            ConflictError: a commit with that id exists.
        """
        if commit_id(commit) != identifier:
            raise CommitIdError(
                f"commit id {identifier!r} is not the content address of the commit given"
                " (sha256 of its fields, as kvlake computes it); send the id kvlake gave it"
            )
        record = stamp(lambda i: self.get_lineage(repository, i), commit)
        try:
            self._store.set_if(
                partition_of(repository), keys.commit_key(identifier), encode(record), None
            )
        except PreconditionFailedError:
            raise ConflictError(f"commit {identifier!r} already exists") from None

    def add_commits(self, repository: Repository, commits: Iterable[tuple[str, Commit]]) -> None:
        """Store many commits under ids the caller has checked (`commit_id`), in batches,
        with their walk fields stamped as `add_commit` would: a restored history then
        walks by skips as a native one does, not one read a commit.

        The walk fields given are dropped, not trusted: each commit is stamped again from
        its first parent, in generation order (a parent's generation is below its
        child's, so parents come first), the parent taken from this call's commits, else
        from the stored ones. A commit whose first parent is neither is stored without
        walk fields (walks take it one read at a time). Orders the commits of one call in
        memory, so pass a history, not an endless stream.
        """
        given = sorted(commits, key=lambda item: item[1].generation)
        lineages: dict[str, Lineage] = {}

        def read(identifier: str) -> Lineage:
            lineage = lineages.get(identifier)
            return lineage if lineage is not None else self.get_lineage(repository, identifier)

        def records() -> Iterator[tuple[bytes, bytes]]:
            for identifier, commit in given:
                try:
                    record = stamp(read, commit)
                except CommitNotFoundError:  # its first parent is nowhere: nothing to count from
                    record = unstamped(commit)
                lineages[identifier] = lineage_of(record)
                yield keys.commit_key(identifier), encode(record)

        self._store.set_many(partition_of(repository), records())

    def get_commit(self, repository: Repository, identifier: str) -> Commit:
        cache_key = (repository.instance_uid, identifier)
        cached = self._commits.get(cache_key)
        if cached is not None:
            return cached
        commit = self._read_commit(repository, identifier)
        self._commits.put(cache_key, commit)
        return commit

    def _read_commit(self, repository: Repository, identifier: str) -> Commit:
        """One KV read of a commit record. Raises CommitNotFoundError."""
        try:
            raw, _ = self._store.get(partition_of(repository), keys.commit_key(identifier))
        except KeyNotFoundError:
            raise _commit_not_found(repository, identifier) from None
        return decode_commit(raw)

    def get_lineage(self, repository: Repository, identifier: str) -> Lineage:
        """A commit's lineage (`lineage.Lineage`), for walks.

        Raises:
            CommitNotFoundError: no such commit.
        """
        return self.get_lineages(repository, (identifier,))[identifier]

    def get_lineages(
        self, repository: Repository, identifiers: Sequence[str]
    ) -> dict[str, Lineage]:
        """The lineages of these commits: from the lineage cache, else the commit cache,
        else one batched KV read for all the others (kept as lineages only, so a long
        walk does not evict the decoded commits other calls use).

        Raises:
            CommitNotFoundError: one of them is not stored.
        """
        uid = repository.instance_uid
        found: dict[str, Lineage] = {}
        missing = []
        for identifier in identifiers:
            lineage = self._lineages.get((uid, identifier))
            if lineage is None:
                commit = self._commits.get((uid, identifier))
                if commit is None:
                    missing.append(identifier)
                    continue
                lineage = lineage_of(commit)
                self._lineages.put((uid, identifier), lineage)
            found[identifier] = lineage
        for identifier, commit in self._read_commits(repository, missing):
            found[identifier] = lineage = lineage_of(commit)
            self._lineages.put((uid, identifier), lineage)
        return found

    def _read_commits(
        self, repository: Repository, identifiers: list[str]
    ) -> Iterator[tuple[str, Commit]]:
        """These commits, read in one batched KV read. Raises CommitNotFoundError."""
        if not identifiers:
            return
        raws = self._store.get_many(
            partition_of(repository), [keys.commit_key(i) for i in identifiers]
        )
        for identifier in identifiers:
            raw = raws.get(keys.commit_key(identifier))
            if raw is None:
                raise _commit_not_found(repository, identifier)
            yield identifier, decode_commit(raw)

    def get_commits(self, repository: Repository, identifiers: Sequence[str]) -> list[Commit]:
        """The commits with these ids, in order: one batched KV read for those not cached.

        Raises:
            CommitNotFoundError: one of them is not stored.
        """
        uid = repository.instance_uid
        found = {i: c for i in identifiers if (c := self._commits.get((uid, i))) is not None}
        missing = [i for i in dict.fromkeys(identifiers) if i not in found]
        for identifier, commit in self._read_commits(repository, missing):
            found[identifier] = commit
            self._commits.put((uid, identifier), commit)
        return [found[i] for i in identifiers]

    def list_commits(self, repository: Repository) -> Iterator[tuple[str, Commit]]:
        """Every commit of the repository, in id order."""
        yield from self._scan_names(repository, keys.COMMIT_PREFIX, "", decode_commit)

    def has_refs(self, repository: Repository) -> bool:
        """Whether the repository has any branch, commit or tag (a bare one has none)."""
        for prefix in (keys.BRANCH_PREFIX, keys.COMMIT_PREFIX, keys.TAG_PREFIX):
            with self._store.scan(partition_of(repository), prefix, batch_size=1) as scan:
                first = next(scan, None)
            if first is not None and first[0].startswith(prefix):
                return True
        return False

    def commit_ids_with_prefix(self, repository: Repository, prefix: str) -> Iterator[str]:
        start = keys.commit_key(prefix)
        with self._store.scan(partition_of(repository), start) as scan:
            for key, _ in scan:
                if not key.startswith(start):
                    return
                yield key[len(keys.COMMIT_PREFIX) :].decode()

    def _scan_names(
        self,
        repository: Repository,
        prefix: bytes,
        after: str,
        decode: Callable[[bytes], _R],
        *,
        name_prefix: str = "",
    ) -> Iterator[tuple[str, _R]]:
        """Names after `after` that start with `name_prefix`: the scan seeks to the name
        prefix and stops past it, never reading the names before it (issue 33)."""
        first = prefix + name_prefix.encode()
        start = max(prefix + after.encode() + b"\0" if after else first, first)
        with self._store.scan(partition_of(repository), start) as scan:
            for key, raw in scan:
                if not key.startswith(first):
                    return
                yield key[len(prefix) :].decode(), decode(raw)


def _branch_not_found(repository: Repository, name: str) -> BranchNotFoundError:
    return BranchNotFoundError(f"branch {name!r} not found in repository {repository.name!r}")


def _commit_not_found(repository: Repository, identifier: str) -> CommitNotFoundError:
    return CommitNotFoundError(f"commit {identifier!r} not found in repository {repository.name!r}")
