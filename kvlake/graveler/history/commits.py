"""The lock-free commit: writers keep writing while a commit runs (invariant 3).

1. Seal: one compare-and-swap moves the branch's staging token to the front of
   its sealed tokens and gives it a fresh token. Writers that raced the seal see
   the token change and write again to the new one (invariant 2).
2. Build: apply the sealed tokens, newest first, to the parent's metarange, and
   store the commit under its content address (idempotent).
3. Record: add the commit's id to `consumed_tokens/<token>` of each token it
   is about to publish, so the deletion worker can tell committed data (garbage
   collection's alone) from dropped data without walking history.
4. Publish: compare-and-swap the branch to the new commit, minus our sealed
   tokens. If that loses a race, re-read the branch: with the same parent, only
   newer seals happened, so retry the swap without rebuilding; with a new
   parent, an earlier commit took our oldest tokens, so rebuild with the tokens
   still sealed; if none are left, either a later commit published them (the
   records name a commit the branch's history holds: return it) or a reset
   dropped them (fail: nothing was committed).

A commit that finds nothing to commit after sealing takes its tokens off the
branch again before raising, so the branch is left clean.

Tokens a commit stops referencing are queued for dropping before the branch
stops referencing them, so a crash can only leave a token queued, never lost.

Merges, reverts and cherry-picks publish through `commit_on_clean_head`: they
need a clean branch, so there is nothing to seal; they build a commit on the
head and swap it in, rebuilding on the new head when another commit wins.
`commit_under_staged` does the same on a dirty branch, keeping its staging and
sealed tokens: a commit in progress then loses its publishing swap, finds its
tokens still sealed on a new parent, and rebuilds on it (step 4), so its
changes land on top of ours and nothing staged is lost or committed twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from kvlake.errors import (
    DirtyBranchError,
    InvalidInputError,
    MetarangeNotFoundError,
    NoChangesError,
    PreconditionFailedError,
    TooManyTriesError,
)
from kvlake.graveler import keys
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import Branch, Commit, Repository, commit_time
from kvlake.kv import MAX_TRIES

log = logging.getLogger(__name__)

MAX_DATE = 253_402_300_799
"""9999-12-31T23:59:59Z: the latest commit `date` a caller may give."""

MAX_HISTORY = 10_000
"""Commits walked back from the head to find the commit that took a committer's tokens."""


def check_date(date: int | None) -> None:
    """Refuse a commit date before the epoch or after the year 9999 (InvalidInputError)."""
    if date is not None and not (isinstance(date, int) and 0 <= date <= MAX_DATE):
        raise InvalidInputError(
            f"commit date {date!r} is out of range; give seconds since 1970, up to {MAX_DATE}"
        )


BuildCommit = Callable[[str, Commit], Commit]
"""Builds the commit to publish on top of a head (given as id and commit)."""


class Committer:
    """Runs commits on branches. Many committers may run on one branch at once."""

    def __init__(self, parts: Parts) -> None:
        self._refs, self._staging, self._committed = parts.refs, parts.staging, parts.committed
        self._drop_tokens, self._clock = parts.drop_tokens, parts.clock

    def commit(
        self,
        repository: Repository,
        branch_name: str,
        *,
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        allow_empty: bool = False,
        date: int | None = None,
    ) -> str:
        """Commit everything staged on the branch; return the commit id.

        `date` (seconds since the epoch) replaces the commit's creation time, as
        lakeFS's `date` does; the log orders by it like any other date.

        When a concurrent commit on the same branch already committed all of our
        sealed data, its id is returned: the data is committed either way.
        A reset that dropped our sealed data makes the commit fail instead.

        Raises:
            NoChangesError: nothing would change, and `allow_empty` is false (the
                tokens sealed for it are unsealed first: the branch is left clean).
            InvalidInputError: a `date` before the epoch or after the year 9999.
            BranchNotFoundError: no such branch.
            PreconditionFailedError: the branch was reset while committing; nothing
                was committed.
            TooManyTriesError: racing commits kept winning.
        """
        check_date(date)
        branch = self._seal(repository, branch_name, allow_empty=allow_empty)
        mine = branch.sealed_tokens
        parent_id = branch.commit_id
        for _ in range(MAX_TRIES):
            parent = self._refs.get_commit(repository, parent_id)
            namespace = repository.storage_namespace
            staged = self._staging.read(namespace, mine, branch.tombstone_tokens)
            # A bulk delete's range tombstones go whole, unread (issue 26: O(ranges)).
            dropped = staged.wholly_tombstoned(parent.metarange_id)
            metarange_id = self._committed.apply_batches(
                namespace, parent.metarange_id, staged.without(dropped).batches(), dropped=dropped
            )
            if metarange_id == parent.metarange_id and not allow_empty:
                self._unseal(repository, branch_name, mine, parent_id)
                raise NoChangesError(f"branch {branch_name!r} has no changes to commit")
            commit = self.next_commit(
                parent_id, parent, metarange_id, committer, message, metadata, date
            )
            commit_id = self._refs.add_commit(repository, commit)
            # Before the publishing swap: once published, the tokens' blobs are committed
            # data, garbage collection's alone; the deletion worker reads this, not history.
            self._refs.record_consumed(repository, mine, commit_id)
            branch, published = self._publish(repository, branch_name, commit_id, mine, parent_id)
            if published:
                return commit_id
            remaining = tuple(token for token in mine if token in branch.sealed_tokens)
            if not remaining:
                return self._taken_by(repository, branch_name, mine, branch.commit_id, parent_id)
            mine, parent_id = remaining, branch.commit_id
        raise TooManyTriesError(
            f"commit on branch {branch_name!r} kept losing races with other commits; retry"
        )

    def create_record(self, repository: Repository, commit_id: str, commit: Commit) -> None:
        """Store a commit built elsewhere (a restore) under its content address; no ref
        changes. Its metarange must exist; its parents are not looked up, so commits may
        come in any order (lakeFS's CreateCommitRecord).

        Raises:
            InvalidInputError: the id is not the commit's content address, or a bad date.
            InvalidInputError: no such metarange in the namespace.
            ConflictError: the commit exists.
        """
        check_date(commit.creation_date)
        self._check_metarange(repository, commit.metarange_id)
        self._refs.create_commit(repository, commit_id, commit)

    def commit_metarange(
        self,
        repository: Repository,
        branch_name: str,
        metarange_id: str,
        *,
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        date: int | None = None,
    ) -> str:
        """Commit an existing metarange as the branch's next commit (lakeFS's
        `source_metarange`); the branch must be clean. Returns the commit id.

        No blob changes hands: a metarange is only ever written by a commit, so
        every blob it names is committed data already (garbage collection's).

        Raises:
            DirtyBranchError: the branch has staged or sealed changes.
            InvalidInputError: no such metarange (or a malformed id), or a `date` out
                of range.
        """
        check_date(date)
        self._check_metarange(repository, metarange_id)

        def build(parent_id: str, head: Commit) -> Commit:
            return self.next_commit(
                parent_id, head, metarange_id, committer, message, metadata, date
            )

        return self.commit_on_clean_head(repository, branch_name, build)

    def next_commit(
        self,
        parent_id: str,
        parent: Commit,
        metarange_id: str,
        committer: str,
        message: str,
        metadata: dict[str, str] | None,
        date: int | None,
    ) -> Commit:
        """The commit after `parent` (one parent, the next generation), dated now or `date`
        (a caller's date is whole seconds)."""
        seconds, nanos = commit_time(self._clock()) if date is None else (date, 0)
        return Commit(
            committer=committer,
            message=message,
            metarange_id=metarange_id,
            creation_date=seconds,
            creation_nanos=nanos,
            parents=(parent_id,),
            metadata=dict(metadata or {}),
            generation=parent.generation + 1,
        )

    def _check_metarange(self, repository: Repository, metarange_id: str) -> None:
        """A commit may name only a metarange that is there: its reads would fail."""
        try:
            self._committed.ranges(repository.storage_namespace, metarange_id)
        except MetarangeNotFoundError:
            raise InvalidInputError(
                f"metarange {metarange_id!r} is not in the storage namespace of repository"
                f" {repository.name!r}; name one of its commits' metaranges"
            ) from None

    def commit_on_clean_head(
        self, repository: Repository, branch_name: str, build: BuildCommit
    ) -> str:
        """Publish the commit `build` makes on the head of a clean branch; return its id.

        The branch's record is swapped by compare-and-swap; when a racing commit
        moved the head first, the commit is built again on the new head.
        Writes staged while this runs stay staged on top of the new commit.

        Raises:
            DirtyBranchError: the branch has staged or sealed (committing) changes.
            BranchNotFoundError: no such branch.
            TooManyTriesError: racing commits kept winning.
            Whatever `build` raises (nothing is published then).
        """
        return self._publish_on_head(repository, branch_name, build, clean=True)

    def commit_under_staged(
        self, repository: Repository, branch_name: str, build: BuildCommit
    ) -> str:
        """Publish the commit `build` makes on the head, under what the branch has staged.

        Like `commit_on_clean_head`, but a dirty branch is fine: its staging and
        sealed tokens stay, so staged changes stay staged (and win over the new
        commit's entries at the same keys, as they did over the old head's).

        Raises:
            BranchNotFoundError: no such branch.
            TooManyTriesError: racing commits kept winning.
            Whatever `build` raises (nothing is published then).
        """
        return self._publish_on_head(repository, branch_name, build, clean=False)

    def publish_token(
        self,
        repository: Repository,
        branch_name: str,
        token: str,
        build: BuildCommit | None = None,
    ) -> str:
        """Make a filled staging token visible on the branch in one swap; return the head.

        The token becomes the newest sealed token, above everything staged so
        far, and the branch gets a fresh staging token, as a seal does: writers
        racing the swap write again to the fresh token (invariant 2), so their
        writes win over the token's, and what was staged before loses to it. A
        reader sees all of the token's entries or none. With `build`, the same
        swap also moves the head to the commit `build` makes (as
        `commit_under_staged`), so a commit and staged changes land together.
        The token stays sealed until the branch's next commit takes it.

        Raises:
            BranchNotFoundError: no such branch.
            TooManyTriesError: racing commits kept winning.
            Whatever `build` raises (nothing is published then).
        """
        return self._publish_on_head(repository, branch_name, build, clean=False, above=token)

    def _publish_on_head(
        self,
        repository: Repository,
        branch_name: str,
        build: BuildCommit | None,
        *,
        clean: bool,
        above: str = "",
    ) -> str:
        commit_id = ""

        def publish(branch: Branch) -> Branch:
            nonlocal commit_id
            if clean:
                self.check_clean(branch_name, branch)
            commit_id = branch.commit_id
            if build is not None:
                head = self._refs.get_commit(repository, branch.commit_id)
                commit_id = self._refs.add_commit(repository, build(branch.commit_id, head))
            # A clean branch has no sealed tokens; a dirty one keeps them for the commit
            # that sealed them (it rebuilds on our commit when its swap loses).
            if not above:
                return branch.with_tokens(commit_id=commit_id)
            # A seal with the token on top: only prepends, as any seal. Indexed before the
            # swap, as any seal (kvlake/graveler/refs/sealing.py).
            self._refs.index_sealing(
                repository, branch_name, branch.staging_token, (above, branch.staging_token)
            )
            return branch.with_tokens(
                commit_id=commit_id,
                staging_token=keys.new_staging_token(repository.instance_uid),
                sealed_tokens=(above, branch.staging_token, *branch.sealed_tokens),
            )

        self._refs.update_branch(
            repository, branch_name, publish, what=f"updating branch {branch_name!r}"
        )
        return commit_id

    def check_clean(self, branch_name: str, branch: Branch) -> None:
        """Raise DirtyBranchError unless the branch has nothing staged or being committed."""
        if branch.sealed_tokens or not self._staging.is_empty(branch.staging_token):
            raise DirtyBranchError(
                f"branch {branch_name!r} has uncommitted changes (dirty branch); "
                f"commit or reset them first"
            )

    def _seal(self, repository: Repository, branch_name: str, *, allow_empty: bool) -> Branch:
        def seal(branch: Branch) -> Branch:
            if (
                not allow_empty
                and not branch.sealed_tokens
                and self._staging.is_empty(branch.staging_token)
            ):
                raise NoChangesError(f"branch {branch_name!r} has no changes to commit")
            # Indexed before the swap: the deletion worker's in-use check reads the sealed
            # tokens from the index, not every branch (kvlake/graveler/refs/sealing.py).
            self._refs.index_sealing(
                repository, branch_name, branch.staging_token, (branch.staging_token,)
            )
            return branch.with_tokens(
                staging_token=keys.new_staging_token(repository.instance_uid),
                sealed_tokens=(branch.staging_token, *branch.sealed_tokens),
            )

        return self._refs.update_branch(
            repository, branch_name, seal, what=f"sealing branch {branch_name!r}"
        )

    def _taken_by(
        self,
        repository: Repository,
        branch_name: str,
        mine: Sequence[str],
        head_id: str,
        parent_id: str,
    ) -> str:
        """The commit that published our last tokens, if the branch's history holds it.

        Our tokens left the branch without our publish: later commits took them
        (they sealed them too and recorded consuming them, maybe one commit the
        older tokens and another the rest), a later commit found them to change
        nothing together with its own and unsealed them, or a reset dropped them.
        Only the records tell these apart. If every token was consumed by a commit
        on the branch since our parent (or unsealed as empty), the newest such
        commit holds all our data: it is the answer.

        Raises:
            NoChangesError: later commits found nothing to commit in them.
            PreconditionFailedError: the branch was reset; nothing of ours was committed.
        """
        records = self._refs.consumed_by(repository, mine)
        pending = {token for token in mine if not (token in records and records[token].empty_over)}
        newest = ""
        if len(records) == len(set(mine)):
            floor = self._refs.get_commit(repository, parent_id).generation
            commit_id, walked = head_id, 0
            while pending and walked < MAX_HISTORY and commit_id != parent_id:
                commit = self._refs.get_commit(repository, commit_id)
                if commit.generation <= floor:
                    break
                took = {t for t in pending if commit_id in records[t].commit_ids}
                if took:
                    newest = newest or commit_id
                    pending -= took
                if not commit.parents:
                    break
                commit_id, walked = commit.parents[0], walked + 1
        if not pending and newest:
            log.info("commit on %s/%s: racing commits took our data", repository.name, branch_name)
            return newest
        if not pending:
            # A later commit found our tokens and its own to change nothing together,
            # and unsealed them all: nothing to commit, as it said.
            raise NoChangesError(f"branch {branch_name!r} has no changes to commit")
        raise PreconditionFailedError(
            f"branch {branch_name!r} was reset while committing; nothing was committed"
        )

    def _unseal(
        self, repository: Repository, branch_name: str, mine: Sequence[str], parent_id: str
    ) -> None:
        """Take our sealed tokens off a branch we found nothing to commit on.

        Their entries change nothing over the parent (each equals the committed
        value or deletes an absent key), so readers see the same without them;
        they are queued for dropping first, like a publish does, so their
        entries' blobs are logged or kept as the cleaner decides, and the branch
        is clean again (not dirty for merges, nothing waiting on a sealed token).
        A commit or reset that took them first leaves nothing to do.
        """

        def unseal(branch: Branch) -> Branch | None:
            ours = [token for token in mine if token in branch.sealed_tokens]
            if not ours or branch.commit_id != parent_id:
                return None
            # Tell a commit still running on older ones of these tokens why they went.
            self._refs.record_consumed(repository, ours, parent_id, empty=True)
            self._drop_tokens(repository, ours, branch=branch_name)
            return branch.with_tokens(
                sealed_tokens=tuple(t for t in branch.sealed_tokens if t not in ours)
            )

        self._refs.update_branch(
            repository, branch_name, unseal, what=f"unsealing branch {branch_name!r}"
        )

    def _publish(
        self,
        repository: Repository,
        branch_name: str,
        commit_id: str,
        mine: Sequence[str],
        parent_id: str,
    ) -> tuple[Branch, bool]:
        """Point the branch at the commit while its parent is unchanged and it still
        seals all of `mine`.

        Returns the branch as last read (or written) and whether the commit is on it.
        A swap lost to newer seals is retried at once: they only prepend tokens, so
        our commit is still valid.
        """
        published = False

        def publish(branch: Branch) -> Branch | None:
            nonlocal published
            published = False
            if branch.commit_id != parent_id or not all(t in branch.sealed_tokens for t in mine):
                return None  # a commit or reset took some of our tokens: the caller decides
            # Queue before unreferencing: a crash leaves the tokens queued, never lost.
            ours = [t for t in mine if t in branch.sealed_tokens]
            self._drop_tokens(repository, ours, branch=branch_name)
            published = True
            return branch.with_tokens(
                commit_id=commit_id,
                sealed_tokens=tuple(t for t in branch.sealed_tokens if t not in mine),
            )

        branch = self._refs.update_branch(
            repository, branch_name, publish, what=f"commit on branch {branch_name!r}"
        )
        return branch, published
