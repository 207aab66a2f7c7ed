"""Graveler's entry methods: staging writes through the writer flow, and reads of a
ref's entries, staged changes applied.

A part of `Graveler` (kvlake/graveler/graveler.py) kept apart so that module stays
readable; `Graveler` inherits it, so callers see one class. Writes go through
`Writer` (writer.py, invariant 2); reads take a `StagedRead` (staging.py) of the
ref's tokens over its commit's entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from kvlake.errors import EntryNotFoundError, KeyNotFoundError
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.history.commits import Committer
from kvlake.graveler.records import Branch, BranchProtection, Repository, Value
from kvlake.graveler.refs.branch_reads import BranchRead
from kvlake.graveler.refs.refexpr import RefResolver, ResolvedRef
from kvlake.graveler.refs.store import Refs
from kvlake.graveler.staging.range_tombstones import RangeTombstone
from kvlake.graveler.staging.store import StagedRead, Staging, overlay_two
from kvlake.graveler.staging.writer import StagingHooks, Writer
from kvlake.graveler.validation import check_branch_name


class EntryMethods:
    """Entries: `set`, `update`, `delete`, `delete_many`, `stage_range_tombstones` (staged
    through the writer flow); `get`, `list`, `list_staged` (read). Mixed into `Graveler`,
    which sets these fields."""

    committed: CommittedManager
    _refs: Refs
    _resolver: RefResolver
    _staging: Staging
    _writer: Writer
    _committer: Committer
    _token_drop_delay: float

    def set(
        self,
        repository: Repository,
        branch: str,
        key: bytes,
        value: Value,
        *,
        if_absent: bool = False,
        token: str = "",
        attempted: list[str] | None = None,
        protection: BranchProtection | None = None,
    ) -> None:
        """Stage a value; returns once it is durable and will reach a commit (invariant 2).

        The writer flow (see `Writer.write`): `if_absent` refuses with
        PreconditionFailedError when the path holds an object (atomically: of
        racing conditional writes exactly one succeeds); `token` is the branch's
        staging token if the caller read it moments ago; `attempted` collects the
        tokens a write was tried on; `protection` the rules read with `token`.
        """
        self._writer.write(
            repository,
            branch,
            key,
            value,
            if_absent=if_absent,
            token=token,
            attempted=attempted,
            protection=protection,
        )

    def update(
        self, repository: Repository, branch: str, key: bytes, change: Callable[[Value], Value]
    ) -> None:
        """Stage `change(value)` over the value at `key` on the branch, staged or committed,
        by compare-and-swap (see `Writer.update`). Raises EntryNotFoundError if none."""
        self._writer.update(repository, branch, key, change)

    def delete(
        self,
        repository: Repository,
        branch: str,
        key: bytes,
        *,
        attempted: list[str] | None = None,
    ) -> None:
        """Stage a deletion (a tombstone) of `key`, through the writer flow as `set` does."""
        self._writer.write(repository, branch, key, None, attempted=attempted)

    def delete_many(self, repository: Repository, branch: str, keys_: Sequence[bytes]) -> None:
        """Stage tombstones at many keys at once (see `Writer.write_tombstones`: keys with
        nothing staged are written blind, so the caller keeps uploads out with a lock)."""
        self._writer.write_tombstones(repository, branch, keys_)

    def stage_range_tombstones(
        self,
        repository: Repository,
        branch: str,
        records: Sequence[RangeTombstone],
        *,
        metarange_id: str,
    ) -> None:
        """Stage a tombstone at every key of these committed ranges (of metarange
        `metarange_id`) but their `keep` keys, one record per range
        (kvlake/graveler/staging/range_tombstones.py; see Writer.stage_range_tombstones)."""
        self._writer.stage_range_tombstones(repository, branch, records, metarange_id=metarange_id)

    @property
    def token_drop_delay(self) -> float:
        """Seconds a staging token outlives the last branch state that referenced it: how
        long a listing of a resolved branch may stay open and still read all of it."""
        return self._token_drop_delay

    def untangle_range_tombstones(self, repository: Repository, branch: str) -> int:
        """Rewrite the branch's overlapping range tombstones as tombstones; return how
        many records were rewritten (0: nothing to repair).

        Tokens staged before range tombstones were guarded
        (kvlake/graveler/staging/range_tombstones.py) may hold overlapping records of
        two bulk deletes, which fail every commit and reset of the branch. What the
        branch shows is unchanged, nobody's staged writes are touched, and running it
        again is harmless.

        Raises:
            BranchNotFoundError: no such branch.
        """
        found = self._branch(repository, branch)
        tombstones = self._staging.range_tombstones(
            repository.storage_namespace, found.tokens(), found.tombstone_tokens
        )
        if tombstones is None:
            return 0
        return sum(tombstones.untangle(token) for token in sorted(tombstones.tokens))

    def check_clean(self, repository: Repository, branch: str) -> None:
        """Raise DirtyBranchError unless the branch has nothing staged or being committed.

        Raises:
            BranchNotFoundError: no such branch.
        """
        self._committer.check_clean(branch, self._branch(repository, branch))

    @property
    def staging_hooks(self) -> StagingHooks | None:
        """The hooks the writer flow and resets call (None: staged values are just replaced)."""
        return self._writer.hooks

    def get(
        self, repository: Repository, ref: str, key: bytes, *, read: BranchRead | None = None
    ) -> Value:
        """The value at `key` on a ref: staged first (for a branch), then committed.

        `read` is this request's `read_branch`, saving the branch's read.

        Raises:
            EntryNotFoundError: nothing there (or a staged deletion).
        """
        resolved = self._resolver.resolve(repository, ref, read=read)
        if resolved.staging_tokens:
            # Read with the branch when it named exactly these tokens (read_branch's path).
            known = read.staged_values(key, resolved.staging_tokens) if read is not None else None
            try:
                staged = self._staged(repository, resolved).get(key, known=known)
            except KeyNotFoundError:
                pass
            else:
                if staged is None:
                    raise EntryNotFoundError(
                        f"path {key.decode(errors='replace')!r} not found on {ref!r}"
                    )
                return staged
        return self.committed.get(repository.storage_namespace, resolved.commit.metarange_id, key)

    def list(
        self,
        repository: Repository,
        ref: str | ResolvedRef,
        *,
        start: bytes = b"",
        stop: bytes | None = None,
    ) -> Iterator[tuple[bytes, Value]]:
        """Entries with `start` <= key < `stop` on a ref, in key order, staged changes applied.

        `ref` may be one the caller resolved already, so a listing that restarts
        (past a common prefix) reads one branch state instead of one per restart.
        No committed range that starts at or after `stop` is read, nor any that the
        branch's range tombstones hide whole (`StagedRead.wholly_tombstoned`): a branch
        after a bulk delete lists in O(ranges) of what it hides, not O(keys).
        """
        resolved = ref if isinstance(ref, ResolvedRef) else self._resolver.resolve(repository, ref)
        namespace, metarange_id = repository.storage_namespace, resolved.commit.metarange_id
        if not resolved.staging_tokens:
            yield from self.committed.scan(namespace, metarange_id, start, stop)
            return
        staged = self._staged(repository, resolved)
        hidden = staged.wholly_tombstoned(metarange_id, start, stop)
        committed = self.committed.scan(namespace, metarange_id, start, stop, skip=hidden)
        window = _window(staged.without(hidden).scan(start), stop)
        for key, value in overlay_two(window, committed):
            if value is not None:
                yield key, value

    def list_staged(
        self,
        repository: Repository,
        ref: str | ResolvedRef,
        start: bytes = b"",
        stop: bytes | None = None,
    ) -> Iterator[tuple[bytes, Value | None]]:
        """A branch's staged state with `start` <= key < `stop`, in key order: the newest
        staged value of each key, or None where it is deleted (range tombstones included).
        Nothing for a ref that is not a branch."""
        resolved = ref if isinstance(ref, ResolvedRef) else self._resolver.resolve(repository, ref)
        if not resolved.staging_tokens:
            return
        yield from _window(self._staged(repository, resolved).scan(start), stop)

    def _staged(self, repository: Repository, resolved: ResolvedRef) -> StagedRead:
        return self._staging.read(
            repository.storage_namespace, resolved.staging_tokens, resolved.tombstone_tokens
        )

    def _branch(self, repository: Repository, name: str) -> Branch:
        check_branch_name(name)
        return self._refs.load_branch(repository, name)[0]


def _window(
    entries: Iterator[tuple[bytes, Value | None]], stop: bytes | None
) -> Iterator[tuple[bytes, Value | None]]:
    """`entries` (ascending) below `stop`."""
    for key, value in entries:
        if stop is not None and key >= stop:
            return
        yield key, value
