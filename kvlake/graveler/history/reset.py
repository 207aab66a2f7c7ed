"""Resetting branches: dropping uncommitted changes, or moving a branch to another commit.

Dropping everything (and a hard reset) gives the branch a fresh staging token
by compare-and-swap; the old tokens are queued for dropping BEFORE the swap, so
a crash leaves them queued, never unreferenced and forgotten. Commits that had
sealed those tokens then fail rather than resurrect the dropped data.

Dropping the changes of one object or of a folder edits staging in place: keys
are deleted from the branch's current token, and keys a running commit has
sealed (which nothing may edit) are shadowed by staging their committed value,
or a tombstone, over them (where the current token is still unstaged there, so
a racing write wins). A commit may seal the current token meanwhile, so the
branch is read again afterwards and the reset repeated on the new token: the
writer flow's loop (`Writer.run`), shadowing also the keys removed from the
token that commit sealed. Removed values are announced to `StagingHooks.before_unstage`
first (the layer above logs their blobs, invariant 4), and committed values
staged as shadows to `before_restage` (they are then in two places).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from kvlake.errors import InvalidInputError, PreconditionFailedError
from kvlake.graveler import keys
from kvlake.graveler.history.compare import SortedLookup
from kvlake.graveler.history.diff import prefix_end
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import Branch, Repository, decode_value, encode
from kvlake.graveler.staging.store import TOMBSTONE
from kvlake.graveler.staging.writer import Writer


class Resetter:
    """Resets branches of one graveler's repositories. Thread-safe."""

    def __init__(self, parts: Parts, *, writer: Writer) -> None:
        self._store, self._refs, self._staging = parts.store, parts.refs, parts.staging
        self._committed, self._resolver = parts.committed, parts.resolver
        self._drop_tokens, self._protection = parts.drop_tokens, parts.protection
        self._writer = writer
        self._hooks = writer.hooks

    def reset_branch(self, repository: Repository, branch: str) -> None:
        """Drop every uncommitted change on the branch (a clean branch is left as it is).

        Raises:
            BranchNotFoundError: no such branch.
            TooManyTriesError: the branch kept changing underneath.
            ProtectedBranchError: a rule blocks staging writes on the branch.
        """
        self._protection.guard(repository, branch, "staging_write")
        self._replace(repository, branch, None)

    def reset_hard(self, repository: Repository, branch: str, ref: str) -> str:
        """Point the branch at the commit `ref` names and drop its uncommitted changes.

        Returns the commit id. Raises RefNotFoundError / InvalidInputError for a
        bad ref, BranchNotFoundError for a missing branch, ProtectedBranchError if a
        rule blocks commits on it.
        """
        self._protection.guard(repository, branch, "commit")
        self._refs.load_branch(repository, branch)  # a missing branch fails before the ref
        commit_id = self._resolver.resolve(repository, ref).commit_id
        self._replace(repository, branch, commit_id)
        return commit_id

    def _replace(self, repository: Repository, name: str, commit_id: str | None) -> None:
        def replace(branch: Branch) -> Branch | None:
            target = commit_id or branch.commit_id
            if (
                target == branch.commit_id
                and not branch.sealed_tokens
                and self._staging.is_empty(branch.staging_token)
            ):
                return None  # nothing to drop, nowhere to move
            # Queue before unreferencing: a crash leaves the tokens queued, never lost
            # (and a swap lost to a seal or commit leaves them queued: re-checked later).
            self._drop_tokens(repository, branch.tokens(), branch=name)
            return branch.with_tokens(
                commit_id=target,
                staging_token=keys.new_staging_token(repository.instance_uid),
                sealed_tokens=(),
            )

        self._refs.update_branch(repository, name, replace, what=f"resetting branch {name!r}")

    def reset_key(self, repository: Repository, branch: str, key: bytes) -> None:
        """Drop the uncommitted change of one object, if any.

        Raises:
            InvalidInputError: an empty key.
            BranchNotFoundError: no such branch.
            ProtectedBranchError: a rule blocks staging writes on the branch.
        """
        self._protection.guard(repository, branch, "staging_write")
        if not isinstance(key, bytes) or not key:
            raise InvalidInputError(f"reset key is {key!r}; pass the non-empty key of an entry")
        self._reset_window(repository, branch, key, key + b"\0")

    def reset_prefix(self, repository: Repository, branch: str, prefix: bytes) -> None:
        """Drop the uncommitted changes under a folder; `a/b` means the folder `a/b/`.

        Raises:
            InvalidInputError: an empty prefix (use `reset_branch` to drop all).
            BranchNotFoundError: no such branch.
            ProtectedBranchError: a rule blocks staging writes on the branch.
        """
        self._protection.guard(repository, branch, "staging_write")
        if not isinstance(prefix, bytes) or not prefix:
            raise InvalidInputError(
                f"reset prefix is {prefix!r}; name a folder, or reset the whole branch instead"
            )
        if not prefix.endswith(b"/"):
            prefix += b"/"
        self._reset_window(repository, branch, prefix, prefix_end(prefix))

    def _reset_window(
        self, repository: Repository, name: str, start: bytes, stop: bytes | None
    ) -> None:
        """Drop the staged changes with keys in [start, stop), through the writer flow's loop."""
        removed: dict[str, set[bytes]] = {}  # by token: what we removed from it

        def reset_on(token: str, branch: Branch | None, again: bool) -> None:
            assert branch is not None  # the loop read it: we pass no token
            # A commit that sealed a token after we removed entries from it may have
            # read them: shadow those keys too while that commit is running.
            read = set().union(*(removed[t] for t in branch.sealed_tokens if t in removed))
            removed[token] = self._remove(repository, token, start, stop)
            tombstones = self._staging.range_tombstones(
                repository.storage_namespace, (token,), branch.tombstone_tokens
            )
            if tombstones is not None:  # a bulk delete's range tombstones are staged changes too
                tombstones.lift(token, start, stop)
            if branch.sealed_tokens:
                shadows = self._shadows(repository, branch, start, stop, read)
                self._stage_shadows(repository, branch.staging_token, shadows)

        # The protection rules were checked by the caller, before the key.
        self._writer.run(repository, name, reset_on, check_protection=False)

    def _remove(
        self, repository: Repository, token: str, start: bytes, stop: bytes | None
    ) -> set[bytes]:
        """Delete the token's entries in [start, stop), announcing their values first."""
        partition = keys.staging_partition(token)
        removed: set[bytes] = set()
        with self._store.scan(partition, start) as scan:
            for page in scan.batches():
                doomed = [(key, raw) for key, raw in page if stop is None or key < stop]
                values = [(key, decode_value(raw)) for key, raw in doomed if raw]
                if values and self._hooks is not None:
                    # Invariant 4: the intent is durable before the staged reference goes.
                    self._hooks.before_unstage(repository, token, values, None)
                self._store.delete_many(partition, [key for key, _ in doomed])
                removed.update(key for key, _ in doomed)
                if len(doomed) < len(page):
                    break
        return removed

    def _stage_shadows(
        self, repository: Repository, token: str, shadows: Iterator[tuple[bytes, bytes]]
    ) -> None:
        """Stage in `token` (the staging token) the committed state over keys a commit has
        sealed (or may have read): the `shadows`.

        Each shadow is staged only where the key is still unstaged in the current
        token (compare-and-swap on absence): a write that raced the reset wins.
        Committed values staged here are also in the commit, so they are announced
        as restaged first (their blobs become shared, never deleted by a replace).
        """
        partition = keys.staging_partition(token)
        staged = list(shadows)
        values = [decode_value(raw) for _, raw in staged if raw]
        if values and self._hooks is not None:
            self._hooks.before_restage(repository, values)
        for key, raw in staged:
            try:
                self._store.set_if(partition, key, raw, None)
            except PreconditionFailedError:
                continue  # a writer staged this key after our reset: its write stands

    def _shadows(
        self,
        repository: Repository,
        branch: Branch,
        start: bytes,
        stop: bytes | None,
        read: set[bytes],
    ) -> Iterator[tuple[bytes, bytes]]:
        """Staged entries that restore the committed state over the sealed tokens' keys."""
        metarange_id = self._refs.get_commit(repository, branch.commit_id).metarange_id
        lookup = SortedLookup(self._committed, repository.storage_namespace, metarange_id)
        staged = self._staging.read(
            repository.storage_namespace, branch.sealed_tokens, branch.tombstone_tokens
        )
        sealed = (key for key, _ in staged.scan(start))
        previous = None
        for key in heapq.merge(sealed, sorted(read)):
            if stop is not None and key >= stop:
                return
            if key == previous:
                continue
            previous = key
            committed = lookup.get(key)
            yield key, TOMBSTONE if committed is None else encode(committed)
