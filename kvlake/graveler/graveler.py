"""Graveler: the versioning engine's entry point, over the KV store and committed ranges.

Every repository-scoped call takes a `Repository` obtained from
`get_repository`, which reads the record first (invariant 1): no call can
reach a deleted or half-created repository's data. Writes follow the writer
flow (writer.py: write to the branch's staging token by compare-and-swap, then
re-read the branch and write again if a commit sealed the token meanwhile), so
an acknowledged write is never lost to a racing commit (invariant 2).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Final

import msgspec

from kvlake.blockstore.store import BlockStore
from kvlake.errors import (
    ConfigError,
    DefaultBranchError,
)
from kvlake.graveler import keys
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.dump import RefsDumper
from kvlake.graveler.entry_methods import EntryMethods
from kvlake.graveler.events import Event, EventHooks
from kvlake.graveler.history.commits import Committer
from kvlake.graveler.history.diff import Differ
from kvlake.graveler.history.imports import Imports
from kvlake.graveler.history.log import CommitLog
from kvlake.graveler.history.merge import Merger
from kvlake.graveler.history.reset import Resetter
from kvlake.graveler.history.revert import ChangeApplier
from kvlake.graveler.lifecycle.namespaces import Namespaces
from kvlake.graveler.lifecycle.repositories import INITIAL_TIMEOUT, Repositories
from kvlake.graveler.lifecycle.retention import Retention
from kvlake.graveler.metadata import RepositoryMetadataSettings
from kvlake.graveler.parts import Parts
from kvlake.graveler.pulls import PullRequests
from kvlake.graveler.records import (
    Branch,
    Commit,
    Repository,
    Tag,
    TokenState,
    Value,
)
from kvlake.graveler.references import References
from kvlake.graveler.refs.branch_reads import BranchRead, TokenMemory
from kvlake.graveler.refs.protection import BranchProtectionRules
from kvlake.graveler.refs.refexpr import RefResolver, ResolvedRef
from kvlake.graveler.refs.store import COMMIT_CACHE_SIZE, Refs, dropped_token_items
from kvlake.graveler.repository_methods import RepositoryMethods
from kvlake.graveler.spans import RefSpans
from kvlake.graveler.staging.batches import Batches
from kvlake.graveler.staging.store import Staging
from kvlake.graveler.staging.writer import StagingHooks, Writer
from kvlake.graveler.uploads import MultipartUploads
from kvlake.graveler.validation import (
    check_branch_name,
    check_tag_name,
)
from kvlake.kv import Store

TOKEN_DROP_DELAY: Final = 60.0
"""Seconds an unreferenced staging token stays readable, for readers that still hold it."""

__all__ = ["TOKEN_DROP_DELAY", "Graveler", "StagingHooks", "TokenState", "data_size"]


def data_size(value: Value) -> int:
    """The default `value_size`: the size of the value's opaque data."""
    return len(value.data)


class Graveler(RepositoryMethods, EntryMethods):
    """Repositories, branches, tags, commits, entries and their history. Thread-safe.

    Repositories, branches, tags, commits and entries are its methods; history
    operations are its engines (`history`, `diffs`, `merges`, `changes`, `resets`,
    `protection`, `dumps`), each documented where it is implemented. The only
    in-process state is caches of immutable things (commits, ranges).
    `value_size` tells diffs the size of an entry (the catalog decodes its object
    size); `blockstore` is needed only to dump and restore refs.
    """

    def __init__(
        self,
        store: Store,
        committed: CommittedManager,
        *,
        check_namespace: Callable[[str], str],
        clock: Callable[[], float] = time.time,
        token_drop_delay: float = TOKEN_DROP_DELAY,
        initial_timeout: float = INITIAL_TIMEOUT,
        value_size: Callable[[Value], int] = data_size,
        blockstore: BlockStore | None = None,
        staging_hooks: StagingHooks | None = None,
        commit_cache_size: int = COMMIT_CACHE_SIZE,
    ) -> None:
        self.store = store
        """The KV store this graveler was given (shared with the rest of the lake)."""
        self.clock = clock
        self._check_namespace = check_namespace
        self._token_drop_delay = token_drop_delay
        self._blockstore = blockstore
        # Storage internals: graveler's own modules (the cleaner) reach them, nobody else.
        self._repositories = Repositories(store, clock=clock, initial_timeout=initial_timeout)
        self._namespaces = Namespaces(store, clock=clock, is_live=self._repositories.is_live)
        self._refs = Refs(store, commit_cache_size=commit_cache_size)
        self._branch_tokens = TokenMemory()  # a hint for stats (read_branch)
        self._staging = Staging(store, committed)
        self._resolver = resolver = RefResolver(self._refs)
        self.protection = protection = BranchProtectionRules(store)
        """Branch protection rules: get, set, delete, check."""
        parts = Parts(
            store=store,
            refs=self._refs,
            staging=self._staging,
            committed=committed,
            resolver=resolver,
            protection=protection,
            drop_tokens=self.queue_token_drops,
            clock=clock,
        )
        self._writer = Writer(parts, hooks=staging_hooks)
        self._committer = committer = Committer(parts)
        # The engines: each method's contract is documented where it is implemented.
        self.committed = committed
        """Committed ranges and metaranges (immutable, cached)."""
        self.history = CommitLog(parts)
        """`log`: pages of commits reachable from a ref."""
        self.diffs = Differ(parts, value_size=value_size)
        """`diff` between refs and `diff_uncommitted` of a branch."""
        self.merges = Merger(parts, committer=committer)
        """`merge` (allowed on protected branches: it is how they are meant to change) and
        `merge_base`."""
        self.changes = ChangeApplier(parts, committer=committer)
        """`revert` and `cherry_pick`: one commit's change applied to a branch."""
        self.resets = Resetter(parts, writer=self._writer)
        """`reset_branch`, `reset_key`, `reset_prefix` (uncommitted changes) and `reset_hard`."""
        self.references = References(store, self._refs, committed, self._namespaces)
        """Reads for the deletion layer: instances, live tokens, staged entries, commits."""
        self.spans = RefSpans(
            repositories=self._repositories,
            resolver=resolver,
            staging=self._staging,
            committed=committed,
            references=self.references,
        )
        """`split` a ref into key spans and `read` or `diff` one: for parallel readers."""
        self.metadata = RepositoryMetadataSettings(store)
        """Repository metadata: `get`, `set` (add or replace keys), `delete` (keys)."""
        self.retention = Retention(store, self._refs)
        """Garbage collection rules (`get_rules`, `set_rules`, `delete_rules`), `list_commits`
        and `retained_commits`: the commits the rules keep at a given time."""
        self.pulls = PullRequests(store, self._refs, self.merges, clock)
        """Pull requests: `create`, `get`, `list`, `update`, `merge`."""
        self.imports = Imports(store, committed=committed, committer=committer, clock=clock)
        """`commit_metarange` (an import's one commit) and import statuses."""
        self.uploads = MultipartUploads(store)
        """S3 multipart uploads in progress: `add`, `remove`, `scan`."""
        self.batches = Batches(parts, committer=committer, writer=self._writer)
        """Staged batches: `fill` a fresh token, `shadow_staged`, `publish` it in one swap."""
        self.events: EventHooks | None = None
        """The actions run around commits, merges, branches and tags (kvlake/graveler/events.py);
        None runs none. Set it with `set_event_hooks` so merges, reverts and cherry-picks see
        it too."""

    def set_event_hooks(self, hooks: EventHooks | None) -> None:
        """Call `hooks` around every commit, merge, branch and tag creation and deletion."""
        self.events = hooks
        self.merges.events = hooks
        self.changes.events = hooks

    def _pre(self, repository: Repository, event: Event) -> None:
        if self.events is not None:
            self.events.pre(repository, event)

    def _post(self, repository: Repository, event: Event) -> None:
        if self.events is not None:
            self.events.post(repository, event)

    @property
    def dumps(self) -> RefsDumper:
        """`dump` refs to the storage namespace and `restore` them into a bare repository.

        Raises:
            ConfigError: this graveler was made without a blockstore.
        """
        if self._blockstore is None:
            raise ConfigError(
                "this Graveler was made without a blockstore, so it cannot dump or restore "
                "refs; pass blockstore= when making it"
            )
        return RefsDumper(
            refs=self._refs,
            blockstore=self._blockstore,
            clock=self.clock,
            on_restored=self._namespaces.restored,
        )

    # Repositories: repository_methods.py; entries: entry_methods.py.

    # -- branches and tags ----------------------------------------------------------

    def create_branch(
        self,
        repository: Repository,
        name: str,
        source: str,
        *,
        hidden: bool = False,
        read: BranchRead | None = None,
    ) -> Branch:
        """Create a branch at `source`'s commit. A hidden one (lakeFS's transactions' ephemeral
        branches) is an ordinary branch that listings leave out unless asked. `read` is this
        request's `read_branch` of `source`, saving that branch's read."""
        check_branch_name(name)
        resolved = self.resolve_ref(repository, source, read=read)
        event = Event(
            event_type="pre-create-branch",
            repository_id=repository.name,
            source_ref=resolved.commit_id,
            branch_id=name,
            commit_id=resolved.commit_id,
        )
        self._pre(repository, event)
        branch = Branch(
            commit_id=resolved.commit_id,
            staging_token=keys.new_staging_token(repository.instance_uid),
            hidden=hidden,
        )
        self._refs.create_branch(repository, name, branch)
        self._post(repository, msgspec.structs.replace(event, event_type="post-create-branch"))
        return branch

    def get_branch(self, repository: Repository, name: str) -> Branch:
        check_branch_name(name)
        return self._refs.load_branch(repository, name)[0]

    def list_branches(
        self,
        repository: Repository,
        *,
        after: str = "",
        prefix: str = "",
        visible_only: bool = False,
    ) -> Iterator[tuple[str, Branch]]:
        """Branches in name order; `visible_only` leaves hidden ones out without reading
        them."""
        return self._refs.list_branches(
            repository, after=after, prefix=prefix, visible_only=visible_only
        )

    def delete_branch(self, repository: Repository, name: str) -> None:
        """Delete a branch; its staged data is queued for dropping first."""
        check_branch_name(name)
        self.protection.check(repository, name, "delete")
        if name == repository.default_branch:
            raise DefaultBranchError(
                f"branch {name!r} is the default branch of {repository.name!r};"
                " make another branch the default before deleting it"
            )
        event = Event(
            event_type="pre-delete-branch",
            repository_id=repository.name,
            source_ref=name,
            branch_id=name,
        )
        self._pre(repository, event)
        # Read after the hooks: a commit while they ran moved the staging token.
        branch, _ = self._refs.load_branch(repository, name)
        self.queue_token_drops(repository, branch.tokens(), branch=name)
        self._refs.delete_branch_record(repository, name)
        post = msgspec.structs.replace(
            event, event_type="post-delete-branch", source_ref=branch.commit_id
        )
        self._post(repository, post)

    def create_tag(self, repository: Repository, name: str, ref: str) -> str:
        check_tag_name(name)
        commit_id = self.resolve_ref(repository, ref).commit_id
        event = _tag_event("pre-create-tag", repository, name, commit_id)
        self._pre(repository, event)
        self._refs.create_tag(repository, name, Tag(commit_id=commit_id))
        self._post(repository, msgspec.structs.replace(event, event_type="post-create-tag"))
        return commit_id

    def get_tag(self, repository: Repository, name: str) -> str:
        check_tag_name(name)
        return self._refs.get_tag(repository, name).commit_id

    def list_tags(
        self, repository: Repository, *, after: str = "", prefix: str = ""
    ) -> Iterator[tuple[str, str]]:
        for name, tag in self._refs.list_tags(repository, after=after, prefix=prefix):
            yield name, tag.commit_id

    def delete_tag(self, repository: Repository, name: str) -> None:
        check_tag_name(name)
        commit_id = self._refs.get_tag(repository, name).commit_id
        event = _tag_event("pre-delete-tag", repository, name, commit_id)
        self._pre(repository, event)
        self._refs.delete_tag(repository, name)
        self._post(repository, msgspec.structs.replace(event, event_type="post-delete-tag"))

    # -- refs and commits -------------------------------------------------------------

    def resolve_ref(
        self, repository: Repository, ref: str, *, read: BranchRead | None = None
    ) -> ResolvedRef:
        """Resolve a ref expression (see `refexpr`): `main`, `v1`, `a1b2c3d4`, `main~2`, `main@`.

        Raises:
            InvalidInputError: a malformed or ambiguous expression.
            RefNotFoundError: nothing has that name.
        """
        return self._resolver.resolve(repository, ref, read=read)

    def get_commit(self, repository: Repository, commit_id: str) -> Commit:
        return self._refs.get_commit(repository, commit_id)

    def commit(
        self,
        repository: Repository,
        branch: str,
        *,
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        allow_empty: bool = False,
        date: int | None = None,
        source_metarange: str | None = None,
    ) -> str:
        """Commit the branch's staged changes, or with `source_metarange` that metarange
        on a clean branch (see `Committer.commit` and `commit_metarange`)."""
        check_branch_name(branch)
        self.protection.check(repository, branch, "commit")
        event = Event(
            event_type="pre-commit",
            repository_id=repository.name,
            source_ref=branch,
            branch_id=branch,
            commit_message=message,
            committer=committer,
            commit_metadata=dict(metadata or {}),
        )
        # Hooks run before the commit seals the staging token and after it moved the
        # branch: outside its compare-and-swap, so writers never wait for a hook.
        self._pre(repository, msgspec.structs.replace(event, event_type="prepare-commit"))
        self._pre(repository, event)
        if source_metarange is not None:
            commit_id = self._committer.commit_metarange(
                repository,
                branch,
                source_metarange,
                committer=committer,
                message=message,
                metadata=metadata,
                date=date,
            )
        else:
            commit_id = self._committer.commit(
                repository,
                branch,
                committer=committer,
                message=message,
                metadata=metadata,
                allow_empty=allow_empty,
                date=date,
            )
        self._post(
            repository,
            msgspec.structs.replace(
                event, event_type="post-commit", source_ref=commit_id, commit_id=commit_id
            ),
        )
        return commit_id

    def create_commit_record(self, repository: Repository, commit_id: str, commit: Commit) -> None:
        """Store a commit built elsewhere under its id (see `Committer.create_record`)."""
        self._committer.create_record(repository, commit_id, commit)

    def queue_token_drops(
        self, repository: Repository, tokens: Sequence[str], *, branch: str = ""
    ) -> None:
        """Record that these staging tokens may be dropped once no branch references them.

        `branch` names the branch whose record names them now: the cleaner then reads
        that record alone, not every branch. Without it the cleaner scans the branches.
        """
        due = self.clock() + self._token_drop_delay
        items = list(dropped_token_items(repository, tokens, due, branch=branch))
        # The token-keyed index first, so the orphan sweep never misses a queued token.
        by_token = [(keys.dropped_token_of(key).encode(), key) for key, _ in items]
        self.store.set_many(keys.DROPPED_BY_TOKEN, by_token)
        self.store.set_many(keys.DROPPED_TOKENS, items)


def _tag_event(event_type: str, repository: Repository, tag: str, commit_id: str) -> Event:
    """The event of a tag's creation or deletion (lakeFS's fields: the tag's commit twice)."""
    return Event(
        event_type=event_type,
        repository_id=repository.name,
        source_ref=commit_id,
        tag_id=tag,
        commit_id=commit_id,
    )
