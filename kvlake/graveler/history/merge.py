"""Three-way merge of committed data, and merging a ref into a branch.

`merge_metaranges` brings the changes from a base to a source into a
destination. Whole metaranges short-cut first (the source equals the base or
the destination: nothing to do; the destination equals the base: the result is
the source). Otherwise the walk compares base and source range by range: a
range the source shares with the base (nothing changed there) or with the
destination (both sides already agree) is skipped by id, unopened. Each
remaining key is decided by identity against the destination: unchanged there,
the source's value wins; equal to the source, nothing to do; otherwise it is a
conflict, settled by the strategy or reported. The decided changes stream into
`CommittedManager.apply`, which rewrites only the destination ranges they fall
into. Work and memory follow the size of the change, not of the data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, Literal

import msgspec

from kvlake.errors import (
    BranchNotFoundError,
    InvalidInputError,
    MergeConflictError,
    NoChangesError,
    RefNotFoundError,
)
from kvlake.graveler.committed import Change, CommittedManager
from kvlake.graveler.events import Event, EventHooks
from kvlake.graveler.history.commits import Committer
from kvlake.graveler.history.compare import Difference, SortedLookup, compare, identity_of
from kvlake.graveler.history.mergebase import find_merge_base
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import Commit, Repository, Value, commit_time
from kvlake.graveler.validation import check_branch_name, is_branch_name

MergeStrategy = Literal["none", "source-wins", "dest-wins"]
STRATEGIES: Final = ("none", "source-wins", "dest-wins")

MAX_LISTED_CONFLICTS: Final = 100
"""A conflict error names at most this many paths (and counts the rest)."""


def merge_metaranges(
    committed: CommittedManager,
    namespace: str,
    *,
    base: str,
    source: str,
    destination: str,
    strategy: MergeStrategy = "none",
) -> str:
    """Apply the changes from `base` to `source` onto `destination`; return the metarange id.

    Raises:
        MergeConflictError: with strategy "none", some keys changed differently
            on both sides (the error lists them); nothing is returned.
        InvalidInputError: an unknown strategy.
        MetarangeNotFoundError, RangeNotFoundError: a file is missing.
    """
    if strategy not in STRATEGIES:
        raise InvalidInputError(
            f"merge strategy is {strategy!r}; use one of {', '.join(map(repr, STRATEGIES))}"
        )
    if source in (base, destination):
        return destination
    if destination == base:
        return source
    shared = {info.id for info in committed.ranges(namespace, destination)}
    differences = compare(committed, namespace, base, source, ignore_ranges=shared)
    decided = _decide(differences, SortedLookup(committed, namespace, destination), strategy)
    conflicts: list[bytes] = []

    def changes() -> Iterator[Change]:
        for key, value, conflict in decided:
            if conflict:
                conflicts.append(key)
                # Stop building ranges that will never be published.
                raise MergeConflictError("merge conflict", paths=(key,))
            yield key, value

    try:
        return committed.apply(namespace, destination, changes())
    except MergeConflictError:
        if not conflicts:
            raise
    total = len(conflicts)
    for key, _, conflict in decided:  # list the rest of them, without writing anything
        if conflict:
            total += 1
            if len(conflicts) < MAX_LISTED_CONFLICTS:
                conflicts.append(key)
    listed = ", ".join(repr(k.decode(errors="replace")) for k in conflicts[:10])
    more = f" and {total - 10} more" if total > 10 else ""
    raise MergeConflictError(
        f"merge conflict: {total} path(s) changed differently on both sides: {listed}{more}; "
        f"choose strategy 'source-wins' or 'dest-wins', or change one side",
        paths=tuple(conflicts),
    )


def _decide(
    differences: Iterator[Difference], destination: SortedLookup, strategy: MergeStrategy
) -> Iterator[tuple[bytes, Value | None, bool]]:
    """(key, value to put, None to delete, is-conflict) for each key the source changed."""
    for key, base_identity, source_value in differences:
        # Values are compared by identity: None (no entry) equals only None.
        current = destination.identity(key)
        if current == base_identity:  # only the source changed it
            yield key, source_value, False
        elif current == identity_of(source_value):  # both made the same change
            continue
        elif strategy == "source-wins":
            yield key, source_value, False
        elif strategy == "none":
            yield key, None, True
        # "dest-wins": keep the destination's value


def _nothing_new(source_id: str, source: Commit, base_id: str, base: Commit) -> bool:
    """Whether the source brings nothing since the merge base (lakeFS's "no changes").

    lakeFS compares the two trees' metarange ids. Its first commit of a
    repository has no metarange at all, so a source tree never equals that
    base's unless the source is that very commit; kvlake's first commit holds
    the (content-addressed) empty metarange, hence the parents check, which
    keeps lakeFS's answer for a source whose later commits emptied the tree.
    """
    if source_id == base_id:
        return True
    return bool(base.parents) and source.metarange_id == base.metarange_id


class Merger:
    """Merges refs into branches of one graveler's repositories. Thread-safe."""

    def __init__(self, parts: Parts, *, committer: Committer) -> None:
        self._refs, self._resolver, self._committed = parts.refs, parts.resolver, parts.committed
        self._clock = parts.clock
        self._committer = committer
        self.events: EventHooks | None = None
        """The actions run around merges (set by `Graveler.set_event_hooks`)."""

    def merge_base(self, repository: Repository, left: str, right: str) -> str | None:
        """The best common ancestor of two refs' commits, or None when they are unrelated."""
        left_id = self._resolver.resolve(repository, left).commit_id
        right_id = self._resolver.resolve(repository, right).commit_id
        return find_merge_base(self._refs, repository, left_id, right_id)

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
        """Merge the commit `source` names into branch `destination`; return the new commit id.

        The merge commit's parents are the destination's head and the source
        commit (only the head when `squash`). Staging on the source is ignored.

        Raises:
            DirtyBranchError: the destination has uncommitted changes.
            MergeConflictError: conflicting changes and strategy "none".
            NoChangesError: the source has no changes since the merge base (its
                tree is the base's), and `allow_empty` is false. A source with
                changes is merged even when the result equals the destination.
            InvalidInputError: the destination is not a branch (a tag or a
                commit), the refs share no history, or a bad strategy.
            BranchNotFoundError, RefNotFoundError: either side names nothing.
        """
        self.check_destination(repository, destination)
        resolved = self._resolver.resolve(repository, source)
        source_id, source_commit = resolved.commit_id, resolved.commit
        namespace = repository.storage_namespace
        event = Event(
            event_type="pre-merge",
            repository_id=repository.name,
            source_ref=source_id,
            branch_id=destination,
            commit_message=message,
            committer=committer,
            commit_metadata=dict(metadata or {}),
            merge_source=source,
        )
        if self.events is not None:  # outside the commit's compare-and-swap: no lock held
            self.events.pre(repository, event)

        def build(head_id: str, head: Commit) -> Commit:
            base_id = find_merge_base(self._refs, repository, head_id, source_id)
            if base_id is None:
                raise InvalidInputError(
                    f"{source!r} and branch {destination!r} share no history, so there is no "
                    f"merge base; merge refs that have a common ancestor"
                )
            base = self._refs.get_commit(repository, base_id)
            if not allow_empty and _nothing_new(source_id, source_commit, base_id, base):
                raise NoChangesError(
                    f"merging {source!r} into {destination!r}: no changes in {source!r} since "
                    f"the merge base {base_id[:12]}; pass allow_empty to record the merge anyway"
                )
            # lakeFS's rule: a source with changes is merged even when the result
            # equals the destination, so the merge commit keeps the ancestry and a
            # later merge finds the right base.
            metarange_id = merge_metaranges(
                self._committed,
                namespace,
                base=base.metarange_id,
                source=source_commit.metarange_id,
                destination=head.metarange_id,
                strategy=strategy,
            )
            parents = (head_id,) if squash else (head_id, source_id)
            generation = max(head.generation, 0 if squash else source_commit.generation)
            seconds, nanos = commit_time(self._clock())
            return Commit(
                committer=committer,
                message=message or f"Merge '{source}' into '{destination}'",
                metarange_id=metarange_id,
                creation_date=seconds,
                creation_nanos=nanos,
                parents=parents,
                metadata=dict(metadata or {}),
                generation=generation + 1,
            )

        commit_id = self._committer.commit_on_clean_head(repository, destination, build)
        if self.events is not None:
            post = msgspec.structs.replace(
                event, event_type="post-merge", source_ref=commit_id, commit_id=commit_id
            )
            self.events.post(repository, post)
        return commit_id

    def check_destination(self, repository: Repository, destination: str) -> None:
        """Refuse, before any work, a destination that is a tag or commit rather than a branch.

        Raises:
            InvalidInputError: it names a tag or commit, or is no valid name at all.
            BranchNotFoundError: it names nothing.
        """
        missing: BranchNotFoundError | None = None
        if is_branch_name(destination):
            try:
                self._refs.load_branch(repository, destination)
                return
            except BranchNotFoundError as exc:
                missing = exc
        try:
            self._resolver.resolve(repository, destination)
        except RefNotFoundError:
            if missing is not None:
                raise missing from None
            check_branch_name(destination)
            raise
        raise InvalidInputError(
            f"{destination!r} is a tag or a commit in repository {repository.name!r}, not a "
            f"branch; only a branch can be changed: create a branch from it first"
        )
