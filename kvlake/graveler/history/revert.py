"""Revert and cherry-pick: applying one commit's change, backwards or forwards, to a branch.

Both are three-way merges onto the branch's head. Reverting commit C merges
C's parent with C as the base (undoing exactly what C did, keeping what came
after); cherry-picking C merges C with its parent as the base (redoing what C
did). A merge commit has several parents, so the caller must say which one the
change is measured against. The branch must be clean, and a change that
conflicts with what happened since is reported, not guessed.
"""

from __future__ import annotations

import msgspec

from kvlake.errors import InvalidInputError, NoChangesError
from kvlake.graveler.events import Event, EventHooks
from kvlake.graveler.history.commits import Committer
from kvlake.graveler.history.merge import merge_metaranges
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import Commit, Repository

CHERRY_PICK_ORIGIN = "cherry-pick-origin"
CHERRY_PICK_COMMITTER = "cherry-pick-committer"


class ChangeApplier:
    """Applies one commit's change to a branch: inverted to revert, as is to cherry-pick.

    Thread-safe.
    """

    def __init__(self, parts: Parts, *, committer: Committer) -> None:
        self._refs, self._resolver, self._committed = parts.refs, parts.resolver, parts.committed
        self._protection = parts.protection
        self._committer = committer
        self.events: EventHooks | None = None
        """The actions run around reverts and cherry-picks (set by `Graveler.set_event_hooks`)."""

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
        """Commit on `branch` the inverse of the change `ref` made; return the new commit id.

        Raises:
            InvalidInputError: `ref` is a merge commit and `parent_number` is not
                1..number of parents, or `ref` is a first commit (nothing to undo).
            DirtyBranchError: the branch has uncommitted changes.
            MergeConflictError: later commits changed the same paths differently.
            NoChangesError: nothing would change, and `allow_empty` is false.
            ProtectedBranchError: a rule blocks commits on the branch.
        """
        self._protection.guard(repository, branch, "commit")
        _, commit, parent = self._change_of(repository, ref, parent_number, "revert")
        return self._apply(
            repository,
            branch,
            base=commit.metarange_id,
            source=parent.metarange_id,
            message=f"Revert {ref}",
            committer=committer,
            metadata=dict(metadata or {}),
            allow_empty=allow_empty,
            what=f"reverting {ref!r}",
            event_name="revert",
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
        """Commit on `branch` the change `ref` made, with its message and metadata.

        The new commit's metadata adds `cherry-pick-origin` (the picked commit's
        id) and `cherry-pick-committer` (its committer); `committer` commits it.

        Raises:
            The same as `revert`.
        """
        self._protection.guard(repository, branch, "commit")
        commit_id, commit, parent = self._change_of(repository, ref, parent_number, "cherry-pick")
        metadata = {
            **commit.metadata,
            CHERRY_PICK_ORIGIN: commit_id,
            CHERRY_PICK_COMMITTER: commit.committer,
        }
        return self._apply(
            repository,
            branch,
            base=parent.metarange_id,
            source=commit.metarange_id,
            message=commit.message,
            committer=committer,
            metadata=metadata,
            allow_empty=allow_empty,
            what=f"cherry-picking {ref!r}",
            event_name="cherry-pick",
        )

    def _change_of(
        self, repository: Repository, ref: str, parent_number: int, verb: str
    ) -> tuple[str, Commit, Commit]:
        """The commit `ref` names and the parent its change is measured against."""
        if not isinstance(parent_number, int) or parent_number < 0:
            raise InvalidInputError(
                f"parent number is {parent_number!r}; pass 1 for the first parent, 2 for the second"
            )
        resolved = self._resolver.resolve(repository, ref)
        parents = resolved.commit.parents
        if not parents:
            raise InvalidInputError(
                f"cannot {verb} {ref!r}: commit {resolved.commit_id[:12]}... has no parent, so "
                f"there is no change to {verb}; name a later commit"
            )
        if len(parents) > 1 and not 1 <= parent_number <= len(parents):
            raise InvalidInputError(
                f"cannot {verb} {ref!r}: it is a merge commit with {len(parents)} parents; pass "
                f"parent_number 1..{len(parents)} to say which side's change to {verb}"
            )
        if len(parents) == 1 and parent_number not in (0, 1):
            raise InvalidInputError(
                f"cannot {verb} {ref!r} with parent number {parent_number}: it has one parent; "
                f"pass 1 or leave parent_number out"
            )
        parent_id = parents[max(parent_number, 1) - 1]
        return resolved.commit_id, resolved.commit, self._refs.get_commit(repository, parent_id)

    def _apply(
        self,
        repository: Repository,
        branch: str,
        *,
        base: str,
        source: str,
        message: str,
        committer: str,
        metadata: dict[str, str],
        allow_empty: bool,
        what: str,
        event_name: str,
    ) -> str:
        event = Event(
            event_type=f"pre-{event_name}",
            repository_id=repository.name,
            source_ref=branch,
            branch_id=branch,
            commit_message=message,
            committer=committer,
            commit_metadata=metadata,
        )
        if self.events is not None:  # outside the commit's compare-and-swap: no lock held
            self.events.pre(repository, event)

        def build(head_id: str, head: Commit) -> Commit:
            metarange_id = merge_metaranges(
                self._committed,
                repository.storage_namespace,
                base=base,
                source=source,
                destination=head.metarange_id,
            )
            if metarange_id == head.metarange_id and not allow_empty:
                raise NoChangesError(
                    f"{what} onto branch {branch!r} changes nothing; "
                    f"pass allow_empty to commit anyway"
                )
            return self._committer.next_commit(
                head_id, head, metarange_id, committer, message, metadata, None
            )

        commit_id = self._committer.commit_on_clean_head(repository, branch, build)
        if self.events is not None:
            post = msgspec.structs.replace(
                event, event_type=f"post-{event_name}", source_ref=commit_id, commit_id=commit_id
            )
            self.events.post(repository, post)
        return commit_id
