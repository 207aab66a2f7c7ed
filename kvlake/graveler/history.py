"""The history half of the `Graveler` facade: log, diff, merge, revert, reset, rules, dumps.

`Graveler` inherits these methods; each checks its arguments and the branch
protection rules, then delegates to the module that owns the operation (whose
docstrings hold the full contracts). Every call takes a `Repository` from
`Graveler.get_repository`, so it never reaches a deleted repository's data
(invariant 1), and every branch change publishes by compare-and-swap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kvlake.blockstore.store import BlockStore
from kvlake.errors import ConfigError, InvalidInputError
from kvlake.graveler.commits import Committer
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.diff import Differ, DiffMode
from kvlake.graveler.dump import RefsDumper
from kvlake.graveler.log import CommitLog
from kvlake.graveler.merge import Merger, MergeStrategy
from kvlake.graveler.mergebase import find_merge_base
from kvlake.graveler.protection import BranchProtectionRules, Rules
from kvlake.graveler.records import (
    DiffPage,
    LogPage,
    ProtectedAction,
    RefsManifest,
    Repository,
    Value,
)
from kvlake.graveler.refexpr import RefResolver
from kvlake.graveler.refs import Refs
from kvlake.graveler.reset import DropTokens, Resetter
from kvlake.graveler.revert import ChangeApplier
from kvlake.graveler.staging import Staging
from kvlake.graveler.validation import check_branch_name
from kvlake.graveler.writer import Writer
from kvlake.kv import Store


class HistoryOperations:
    """Log, diff, merge base, merge, revert, cherry-pick, reset, protection, refs dumps."""

    refs: Refs
    _resolver: RefResolver
    _protection: BranchProtectionRules
    _log: CommitLog
    _differ: Differ
    _merger: Merger
    _applier: ChangeApplier
    _resetter: Resetter
    _dumper: RefsDumper | None

    def _init_history(
        self,
        *,
        store: Store,
        refs: Refs,
        staging: Staging,
        committed: CommittedManager,
        committer: Committer,
        drop_tokens: DropTokens,
        clock: Callable[[], float],
        value_size: Callable[[Value], int],
        blockstore: BlockStore | None,
        writer: Writer,
    ) -> None:
        self._resolver = resolver = RefResolver(refs)
        self._log = CommitLog(refs=refs, resolver=resolver, committed=committed)
        self._differ = Differ(
            refs=refs,
            resolver=resolver,
            staging=staging,
            committed=committed,
            value_size=value_size,
        )
        self._merger = Merger(
            refs=refs, resolver=resolver, committed=committed, committer=committer, clock=clock
        )
        self._applier = ChangeApplier(
            refs=refs, resolver=resolver, committed=committed, committer=committer, clock=clock
        )
        self._resetter = Resetter(
            store=store,
            refs=refs,
            staging=staging,
            committed=committed,
            resolver=resolver,
            drop_tokens=drop_tokens,
            writer=writer,
        )
        self._dumper = None
        if blockstore is not None:
            self._dumper = RefsDumper(refs=refs, blockstore=blockstore, clock=clock)

    # -- log and diff ----------------------------------------------------------------

    def log(
        self,
        repository: Repository,
        ref: str,
        *,
        after: str = "",
        amount: int = 100,
        limit: bool = False,
        first_parent: bool = False,
        since: float | None = None,
        paths: Sequence[bytes] = (),
        prefixes: Sequence[bytes] = (),
    ) -> LogPage:
        """One page of commits reachable from `ref`, newest first (see `CommitLog.log`)."""
        return self._log.log(
            repository,
            ref,
            after=after,
            amount=amount,
            limit=limit,
            first_parent=first_parent,
            since=since,
            paths=paths,
            prefixes=prefixes,
        )

    def diff(
        self,
        repository: Repository,
        left: str,
        right: str,
        *,
        mode: DiffMode = "three_dot",
        prefix: bytes = b"",
        delimiter: bytes = b"",
        after: bytes = b"",
        amount: int = 100,
    ) -> DiffPage:
        """One page of what changed from `left` to `right` (see `Differ.diff`)."""
        return self._differ.diff(
            repository,
            left,
            right,
            mode=mode,
            prefix=prefix,
            delimiter=delimiter,
            after=after,
            amount=amount,
        )

    def diff_uncommitted(
        self,
        repository: Repository,
        branch: str,
        *,
        prefix: bytes = b"",
        delimiter: bytes = b"",
        after: bytes = b"",
        amount: int = 100,
    ) -> DiffPage:
        """One page of the branch's uncommitted changes (see `Differ.diff_uncommitted`)."""
        check_branch_name(branch)
        return self._differ.diff_uncommitted(
            repository, branch, prefix=prefix, delimiter=delimiter, after=after, amount=amount
        )

    def merge_base(self, repository: Repository, left: str, right: str) -> str | None:
        """The best common ancestor of two refs' commits, or None when they are unrelated."""
        left_id = self._resolver.resolve(repository, left).commit_id
        right_id = self._resolver.resolve(repository, right).commit_id
        return find_merge_base(self.refs, repository, left_id, right_id)

    # -- merge, revert, cherry-pick ---------------------------------------------------------

    def merge(
        self,
        repository: Repository,
        source: str,
        destination: str,
        *,
        committer: str,
        message: str = "",
        metadata: dict[str, str] | None = None,
        strategy: MergeStrategy = "none",
        squash: bool = False,
        allow_empty: bool = False,
    ) -> str:
        """Merge `source` into branch `destination`; return the merge commit id.

        Allowed on protected branches: merging is how they are meant to change.
        See `Merger.merge` for the errors.
        """
        return self._merger.merge(
            repository,
            source,
            destination,
            committer=committer,
            message=message,
            metadata=metadata,
            strategy=strategy,
            squash=squash,
            allow_empty=allow_empty,
        )

    def revert(
        self,
        repository: Repository,
        branch: str,
        ref: str,
        *,
        committer: str,
        parent_number: int = 0,
        metadata: dict[str, str] | None = None,
        allow_empty: bool = False,
    ) -> str:
        """Commit the inverse of `ref`'s change on `branch` (see `ChangeApplier.revert`)."""
        self._check_branch(repository, branch, "commit")
        return self._applier.revert(
            repository,
            branch,
            ref,
            committer=committer,
            parent_number=parent_number,
            metadata=metadata,
            allow_empty=allow_empty,
        )

    def cherry_pick(
        self,
        repository: Repository,
        branch: str,
        ref: str,
        *,
        committer: str,
        parent_number: int = 0,
        allow_empty: bool = False,
    ) -> str:
        """Commit `ref`'s change again on `branch` (see `ChangeApplier.cherry_pick`)."""
        self._check_branch(repository, branch, "commit")
        return self._applier.cherry_pick(
            repository,
            branch,
            ref,
            committer=committer,
            parent_number=parent_number,
            allow_empty=allow_empty,
        )

    # -- reset --------------------------------------------------------------------------------

    def reset_branch(self, repository: Repository, branch: str) -> None:
        """Drop every uncommitted change on the branch."""
        self._check_branch(repository, branch, "staging_write")
        self._resetter.reset_branch(repository, branch)

    def reset_key(self, repository: Repository, branch: str, key: bytes) -> None:
        """Drop the uncommitted change of the entry at `key`, if any."""
        self._check_branch(repository, branch, "staging_write")
        if not isinstance(key, bytes) or not key:
            raise InvalidInputError(f"reset key is {key!r}; pass the non-empty key of an entry")
        self._resetter.reset_key(repository, branch, key)

    def reset_prefix(self, repository: Repository, branch: str, prefix: bytes) -> None:
        """Drop the uncommitted changes under a folder (`a/b` means `a/b/`)."""
        self._check_branch(repository, branch, "staging_write")
        self._resetter.reset_prefix(repository, branch, prefix)

    def reset_hard(self, repository: Repository, branch: str, ref: str) -> str:
        """Point the branch at `ref`'s commit, dropping uncommitted changes; return its id."""
        self._check_branch(repository, branch, "commit")
        return self._resetter.reset_hard(repository, branch, ref)

    # -- branch protection -----------------------------------------------------------------

    def get_branch_protection_rules(self, repository: Repository) -> Rules:
        """Blocked actions by branch name pattern."""
        return self._protection.get_rules(repository)

    def set_branch_protection_rule(
        self, repository: Repository, pattern: str, blocked: Iterable[ProtectedAction]
    ) -> None:
        """Create or replace the rule for an fnmatch-style branch name pattern."""
        self._protection.set_rule(repository, pattern, blocked)

    def delete_branch_protection_rule(self, repository: Repository, pattern: str) -> None:
        """Remove the rule for `pattern`; NotFoundError if there is none."""
        self._protection.delete_rule(repository, pattern)

    def check_branch_protection(
        self, repository: Repository, branch: str, action: ProtectedAction
    ) -> None:
        """Raise ProtectedBranchError if a rule blocks `action` on `branch`.

        The writer flow and every guarded operation check it themselves; this is
        for callers that must refuse before doing expensive work of their own.
        """
        self._protection.check(repository, branch, action)

    def _check_branch(self, repository: Repository, branch: str, action: ProtectedAction) -> None:
        check_branch_name(branch)
        self._protection.check(repository, branch, action)

    # -- refs dump and restore --------------------------------------------------------------

    def dump_refs(self, repository: Repository) -> RefsManifest:
        """Write branches, tags and commits to the storage namespace (see `RefsDumper`)."""
        return self._require_dumper().dump(repository)

    def restore_refs(self, repository: Repository, dump_id: str) -> RefsManifest:
        """Restore a dump into a bare repository (see `RefsDumper.restore`)."""
        return self._require_dumper().restore(repository, dump_id)

    def _require_dumper(self) -> RefsDumper:
        if self._dumper is None:
            raise ConfigError(
                "this Graveler was made without a blockstore, so it cannot dump or restore "
                "refs; pass blockstore= when making it"
            )
        return self._dumper
