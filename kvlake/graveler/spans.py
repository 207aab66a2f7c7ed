"""A ref's entries cut into key spans, for readers that work in parallel (Spark tasks).

A planner (the driver) resolves a ref once and cuts its keys at the committed
ranges' first keys: `split` returns one `Span` per range under the prefix. Each
span carries the resolved state (metarange id and staging tokens), so every
task reads the same snapshot even if the branch moves meanwhile, and nothing
but ids crosses to a task. A task reads its span with `read` (the span's
committed entries with the staged changes applied) or `diff` (the changes
against another ref's state over the same keys).

A staging token outlives the commit that consumes it by only
`TOKEN_DROP_DELAY`; a read that finds a token of its span no longer staging or
sealed once done may have missed entries the drop removed, so it fails
(StaleReadError) rather than return a silently incomplete result. Reading a
commit id or tag never has that problem.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import NamedTuple

import msgspec

from kvlake.errors import RepositoryNotFoundError, StaleReadError
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.history.diff import prefix_end
from kvlake.graveler.lifecycle.repositories import Repositories
from kvlake.graveler.records import Repository, Value
from kvlake.graveler.references import References
from kvlake.graveler.refs.refexpr import RefResolver, ResolvedRef
from kvlake.graveler.staging.store import Staging, overlay


class RefState(msgspec.Struct, frozen=True, kw_only=True):
    """What a resolved ref reads: a metarange and, for a branch, its staging tokens."""

    ref: str
    commit_id: str
    metarange_id: str
    tokens: tuple[str, ...] = ()
    tombstone_tokens: tuple[str, ...] = msgspec.field(default=(), name="hiding")
    """The tokens that may hold range tombstones (kvlake/graveler/staging/range_tombstones.py);
    encoded as "hiding", their first name, so spans planned before the rename decode."""


class Span(msgspec.Struct, frozen=True, kw_only=True):
    """Keys in [start, stop) of one ref (stop None: no upper bound), optionally diffed.

    Small and picklable: a planner ships one per task.
    """

    repository: str
    instance_uid: str
    state: RefState
    start: bytes
    stop: bytes | None
    against: RefState | None = None


class SpanChange(NamedTuple):
    """A key whose entry differs between the old and new side (None: no entry there)."""

    key: bytes
    old: Value | None
    new: Value | None


class RefSpans:
    """Plans and reads spans of refs. Thread-safe; holds no state of its own."""

    def __init__(
        self,
        *,
        repositories: Repositories,
        resolver: RefResolver,
        staging: Staging,
        committed: CommittedManager,
        references: References,
    ) -> None:
        self._repositories = repositories
        self._resolver = resolver
        self._staging = staging
        self._committed = committed
        self._references = references

    def split(
        self,
        repository: Repository,
        ref: str,
        *,
        prefix: bytes = b"",
        against: str | None = None,
    ) -> list[Span]:
        """One span per committed range of `ref` under `prefix` (at least one span).

        With `against`, each span diffs `against` (the old side) with `ref`.

        Raises:
            InvalidInputError, RefNotFoundError: a bad or unknown ref.
        """
        state = self._state(repository, ref)
        old = self._state(repository, against) if against is not None else None
        end = prefix_end(prefix) if prefix else None
        ranges = self._committed.ranges(repository.storage_namespace, state.metarange_id)
        under = [
            info
            for info in ranges
            if info.max_key >= prefix and (end is None or info.min_key < end)
        ]
        cuts = [info.min_key for info in under[1:]]  # the first range's span starts at prefix
        starts = [prefix, *cuts]
        stops: list[bytes | None] = [*cuts, end]
        return [
            Span(
                repository=repository.name,
                instance_uid=repository.instance_uid,
                state=state,
                start=start,
                stop=stop,
                against=old,
            )
            for start, stop in zip(starts, stops, strict=True)
        ]

    def read(self, span: Span) -> Iterator[tuple[bytes, Value]]:
        """The span's entries in key order (staged changes applied, deletions left out).

        Raises:
            RepositoryNotFoundError: the repository instance is gone.
            StaleReadError: a staging token was dropped while the span was read.
        """
        repository = self._repository(span)
        yield from self._entries(repository, span.state, span.start, span.stop)
        self._check_tokens(repository, span.state)

    def diff(self, span: Span) -> Iterator[SpanChange]:
        """What changed over the span from `span.against` to `span.state`, in key order.

        Unlike graveler's diffs, both sides carry values (old side's too), so a
        reader can show both addresses.
        """
        if span.against is None:
            raise ValueError("a diff span needs `against`; split with against=<ref>")
        repository = self._repository(span)
        old = self._entries(repository, span.against, span.start, span.stop)
        new = self._entries(repository, span.state, span.start, span.stop)
        yield from _changes(old, new)
        self._check_tokens(repository, span.against)
        self._check_tokens(repository, span.state)

    def _state(self, repository: Repository, ref: str) -> RefState:
        resolved: ResolvedRef = self._resolver.resolve(repository, ref)
        return RefState(
            ref=ref,
            commit_id=resolved.commit_id,
            metarange_id=resolved.commit.metarange_id,
            tokens=resolved.staging_tokens,
            tombstone_tokens=resolved.tombstone_tokens,
        )

    def _repository(self, span: Span) -> Repository:
        repository = self._repositories.get(span.repository)
        if repository.instance_uid != span.instance_uid:
            raise RepositoryNotFoundError(
                f"repository {span.repository!r} was deleted (and perhaps created again)"
                " since the read was planned; plan the read again"
            )
        return repository

    def _entries(
        self, repository: Repository, state: RefState, start: bytes, stop: bytes | None
    ) -> Iterator[tuple[bytes, Value]]:
        committed = self._committed.scan(repository.storage_namespace, state.metarange_id, start)
        sources: list[Iterator[tuple[bytes, Value | None]]] = [committed]
        if state.tokens:
            staged = self._staging.read(
                repository.storage_namespace, state.tokens, state.tombstone_tokens
            )
            sources.insert(0, staged.scan(start))
        for key, value in overlay(sources):
            if stop is not None and key >= stop:
                return
            if value is not None:
                yield key, value

    def _check_tokens(self, repository: Repository, state: RefState) -> None:
        if not state.tokens:
            return
        states = self._references.token_states(repository, state.tokens)
        gone = sorted(token for token, now in states.items() if now not in ("staging", "sealed"))
        if gone:
            raise StaleReadError(
                f"branch {state.ref!r} was committed while it was read, and its uncommitted"
                f" entries (staging tokens {', '.join(gone)}) may be gone from the read;"
                " read it again, or read a commit id for a stable snapshot"
            )


def _changes(
    old: Iterator[tuple[bytes, Value]], new: Iterator[tuple[bytes, Value]]
) -> Iterator[SpanChange]:
    """Merge two sorted entry streams into the keys whose identities differ."""
    tagged_old = ((key, 0, value) for key, value in old)
    tagged_new = ((key, 1, value) for key, value in new)
    pending: tuple[bytes, Value] | None = None  # an old entry waiting for its new twin
    for key, side, value in heapq.merge(tagged_old, tagged_new, key=lambda item: item[:2]):
        if pending is not None and pending[0] != key:
            yield SpanChange(pending[0], pending[1], None)
            pending = None
        if side == 0:
            pending = (key, value)
        elif pending is None:
            yield SpanChange(key, None, value)
        else:
            if pending[1].identity != value.identity:
                yield SpanChange(key, pending[1], value)
            pending = None
    if pending is not None:
        yield SpanChange(pending[0], pending[1], None)
