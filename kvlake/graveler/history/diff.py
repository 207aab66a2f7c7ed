"""Diffs: between two refs (two-dot or three-dot) and of a branch's uncommitted changes.

Every diff is a sorted stream of `Difference`s that can start at any key and
stop before another, so a page reads only what it returns: committed diffs skip
ranges both sides share by id (see `compare`), and an uncommitted diff reads
the staged entries plus the committed ranges they fall into. A delimiter folds
the changes below a common prefix into one entry and restarts the stream past
that prefix, so a changed folder of a million objects costs one row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final, Literal

from kvlake.errors import InvalidInputError
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.history.compare import Difference, SortedLookup, compare, identity_of
from kvlake.graveler.history.mergebase import find_merge_base
from kvlake.graveler.parts import Parts
from kvlake.graveler.records import DiffEntry, DiffPage, DiffType, Repository, Value
from kvlake.graveler.staging.store import StagedRead
from kvlake.graveler.validation import check_branch_name

MAX_AMOUNT: Final = 1000
"""The most entries one diff page returns, as in lakeFS."""

DiffMode = Literal["two_dot", "three_dot"]
DiffSource = Callable[[bytes, bytes | None], Iterator[Difference]]
"""Differences with keys in [start, stop), ascending."""
ValueSize = Callable[[Value], int]
RemovedSize = Callable[[bytes], int]
"""The size a removed key had on the left side (keys asked in ascending order)."""


def prefix_end(prefix: bytes) -> bytes | None:
    """The smallest key above every key that starts with `prefix` (None: there is none)."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes([trimmed[-1] + 1])


def check_page(amount: int, delimiter: bytes) -> None:
    if not isinstance(amount, int) or not 1 <= amount <= MAX_AMOUNT:
        raise InvalidInputError(f"diff amount is {amount!r}; ask for 1 to {MAX_AMOUNT} entries")
    if len(delimiter) > 1:
        raise InvalidInputError(f"diff delimiter is {delimiter!r}; use one byte such as b'/'")


def diff_page(
    source: DiffSource,
    *,
    prefix: bytes,
    delimiter: bytes,
    after: bytes,
    amount: int,
    value_size: ValueSize,
    removed_size: RemovedSize | None = None,
) -> DiffPage:
    """One page of differences under `prefix`, after `after`, folded at `delimiter`.

    A removed entry's size is `removed_size` of its key (lakeFS reports the
    size the object had), or 0 without it (a staged tombstone has no size).
    """
    check_page(amount, delimiter)
    start, stop = prefix, prefix_end(prefix) if prefix else None
    if after:
        if delimiter and after.endswith(delimiter) and after.startswith(prefix):
            skip = prefix_end(after)  # `after` was a common prefix: skip all of it
            if skip is None:
                return DiffPage(entries=[], has_more=False, next_offset=b"")
            start = max(start, skip)
        else:
            start = max(start, after + b"\0")
    entries: list[DiffEntry] = []
    while len(entries) <= amount:
        jumped = False
        for difference in source(start, stop):
            cut = difference.key.find(delimiter, len(prefix)) if delimiter else -1
            if cut < 0:
                entries.append(_entry(difference, value_size, removed_size))
                if len(entries) > amount:
                    break
                continue
            common = difference.key[: cut + len(delimiter)]
            entries.append(
                DiffEntry(
                    type=_type(difference),
                    path=common,
                    path_type="common_prefix",
                    size=0,
                    value=None,
                )
            )
            skip = prefix_end(common)
            jumped = skip is not None
            if skip is not None:
                start = skip
            break
        if not jumped:
            break
    has_more = len(entries) > amount
    del entries[amount:]
    return DiffPage(
        entries=entries,
        has_more=has_more,
        next_offset=entries[-1].path if has_more else b"",
    )


def _type(difference: Difference) -> DiffType:
    if difference.left_identity is None:
        return "added"
    if difference.right is None:
        return "removed"
    return "changed"


def _entry(
    difference: Difference, value_size: ValueSize, removed_size: RemovedSize | None
) -> DiffEntry:
    value = difference.right
    if value is not None:
        size = value_size(value)
    else:
        size = 0 if removed_size is None else removed_size(difference.key)
    return DiffEntry(
        type=_type(difference),
        path=difference.key,
        path_type="object",
        size=size,
        value=value,
    )


def committed_source(
    committed: CommittedManager, namespace: str, left: str, right: str
) -> DiffSource:
    """Differences between two metaranges."""
    return lambda start, stop: compare(committed, namespace, left, right, start=start, stop=stop)


def staged_differences(
    staged: StagedRead,
    committed: CommittedManager,
    namespace: str,
    metarange_id: str,
    start: bytes = b"",
    stop: bytes | None = None,
) -> Iterator[Difference]:
    """What the `staged` entries change against a metarange, ascending by key.

    A staged value equal (by identity) to the committed one, and a tombstone
    for a key that is not committed, change nothing and are not yielded.
    """
    lookup = SortedLookup(committed, namespace, metarange_id)
    for key, staged_value in staged.scan(start):
        if stop is not None and key >= stop:
            return
        current = lookup.identity(key)
        if current != identity_of(staged_value):
            yield Difference(key, current, staged_value)


class Differ:
    """Diffs of one graveler's repositories. Thread-safe."""

    def __init__(self, parts: Parts, *, value_size: ValueSize) -> None:
        self._refs, self._resolver = parts.refs, parts.resolver
        self._staging, self._committed = parts.staging, parts.committed
        self._value_size = value_size

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
        """One page of what changed from `left` to `right` (their commits; staging ignored).

        Three-dot (the default) compares `right` with the merge base of both,
        so it shows what merging `right` into `left` would bring.

        Raises:
            InvalidInputError: a bad mode, amount or delimiter; a three-dot diff
                of refs that share no history.
            RefNotFoundError: either ref names nothing.
        """
        check_page(amount, delimiter)
        source, left_metarange = self._source(repository, left, right, mode=mode)
        # Removed keys come in ascending order, so one lookup reads each left range once.
        lookup = SortedLookup(self._committed, repository.storage_namespace, left_metarange)

        def removed_size(key: bytes) -> int:
            old = lookup.value(key)
            return 0 if old is None else self._value_size(old)

        return self._page(source, prefix, delimiter, after, amount, removed_size)

    def source(
        self, repository: Repository, left: str, right: str, *, mode: DiffMode = "three_dot"
    ) -> DiffSource:
        """The differences between two refs as a source a page (or a caller) can stream."""
        return self._source(repository, left, right, mode=mode)[0]

    def _source(
        self, repository: Repository, left: str, right: str, *, mode: DiffMode
    ) -> tuple[DiffSource, str]:
        """The differences between two refs, and the left metarange they start from."""
        if mode not in ("two_dot", "three_dot"):
            raise InvalidInputError(f"diff mode is {mode!r}; use 'two_dot' or 'three_dot'")
        left_ref = self._resolver.resolve(repository, left)
        right_ref = self._resolver.resolve(repository, right)
        left_metarange = left_ref.commit.metarange_id
        if mode == "three_dot":
            base = find_merge_base(self._refs, repository, left_ref.commit_id, right_ref.commit_id)
            if base is None:
                raise InvalidInputError(
                    f"refs {left!r} and {right!r} share no history, so a three-dot diff has "
                    f"no merge base to start from; use a two-dot diff"
                )
            left_metarange = self._refs.get_commit(repository, base).metarange_id
        namespace = repository.storage_namespace
        source = committed_source(
            self._committed, namespace, left_metarange, right_ref.commit.metarange_id
        )
        return source, left_metarange

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
        """One page of the branch's staged changes against its commit.

        Raises:
            BranchNotFoundError: no such branch.
            InvalidInputError: a bad branch name, amount or delimiter.
        """
        check_branch_name(branch)
        check_page(amount, delimiter)
        current, _ = self._refs.load_branch(repository, branch)
        metarange_id = self._refs.get_commit(repository, current.commit_id).metarange_id
        namespace = repository.storage_namespace
        staged = self._staging.read(namespace, current.tokens(), current.tombstone_tokens)

        def source(start: bytes, stop: bytes | None) -> Iterator[Difference]:
            return staged_differences(staged, self._committed, namespace, metarange_id, start, stop)

        return self._page(source, prefix, delimiter, after, amount)

    def _page(
        self,
        source: DiffSource,
        prefix: bytes,
        delimiter: bytes,
        after: bytes,
        amount: int,
        removed_size: RemovedSize | None = None,
    ) -> DiffPage:
        """One page of `source`, its entries sized by this graveler's `value_size`."""
        return diff_page(
            source,
            prefix=prefix,
            delimiter=delimiter,
            after=after,
            amount=amount,
            value_size=self._value_size,
            removed_size=removed_size,
        )
