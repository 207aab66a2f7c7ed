"""Ref expressions: how a user names a commit, and the one place that resolves them.

A ref expression is a base ref (a branch, a tag, a full commit id, or an
unambiguous prefix of one, tried in that order) followed by modifiers:
`@` (only right after a branch: its committed state, ignoring staging), then
any of `~N` / `~` (the N-th first-parent ancestor) and `^N` / `^` (the N-th
parent; `^0` is the commit itself), as in git. `~`, `^` and `@` occur in no
branch, tag or commit id, so where the base ends is never ambiguous. The whole
expression is parsed before anything is read, so a malformed one fails with
`InvalidInputError` having touched nothing.
"""

from __future__ import annotations

import re
from typing import Final

from kvlake.errors import (
    BranchNotFoundError,
    CommitNotFoundError,
    InvalidInputError,
    RefNotFoundError,
    TagNotFoundError,
)
from kvlake.graveler.records import Commit, Repository
from kvlake.graveler.refs.branch_reads import BranchRead
from kvlake.graveler.refs.lineage import first_parent_ancestor, lineage_of
from kvlake.graveler.refs.store import Refs
from kvlake.graveler.validation import is_branch_name, is_commit_id, is_tag_name

MIN_PREFIX: Final = 4
"""A commit id prefix must have this many hex digits, as in git."""

_MODIFIER = re.compile(r"([~^])([0-9]{0,9})")
_HEX = re.compile(r"[0-9a-f]+")
_GRAMMAR = "use <branch|tag|commit id>[@][~N|^N]..., e.g. main~2 or main@"


class ResolvedRef:
    """A ref resolved to a commit, and to the branch's staging tokens when it names a branch.

    `branch` is set when the expression is a branch with no `~` or `^`
    modifier; `staging_tokens` is empty for `branch@`, whose reads ignore staging;
    `tombstone_tokens` are those of them that may hold range tombstones.
    """

    __slots__ = ("commit_id", "commit", "staging_tokens", "branch", "tombstone_tokens")

    def __init__(
        self,
        commit_id: str,
        commit: Commit,
        branch: str | None,
        tokens: tuple[str, ...],
        tombstone_tokens: tuple[str, ...] = (),
    ):
        self.commit_id = commit_id
        self.commit = commit
        self.branch = branch
        self.staging_tokens = tokens
        self.tombstone_tokens = tombstone_tokens


class RefExpression:
    """A parsed ref expression: base name, whether `@` follows it, and ancestry steps."""

    __slots__ = ("base", "committed_only", "steps")

    def __init__(self, base: str, committed_only: bool, steps: tuple[tuple[str, int], ...]):
        self.base = base
        self.committed_only = committed_only
        self.steps = steps


def parse_ref(ref: str) -> RefExpression:
    """Split a ref expression into its base and modifiers.

    Raises:
        InvalidInputError: empty, NUL, whitespace, a modifier without a base,
            `@` anywhere but right after the base, or a step that is not a number.
    """
    if not isinstance(ref, str) or not ref:
        raise InvalidInputError(f"ref {ref!r} is empty; {_GRAMMAR}")
    if "\0" in ref or any(c.isspace() for c in ref) or len(ref) > 1024:
        raise InvalidInputError(
            f"ref {ref!r} is invalid: it holds NUL or whitespace or is too long; {_GRAMMAR}"
        )
    cut = min((i for i in (ref.find("~"), ref.find("^"), ref.find("@")) if i >= 0), default=-1)
    base, rest = (ref, "") if cut < 0 else (ref[:cut], ref[cut:])
    if not base:
        raise InvalidInputError(f"ref {ref!r} is invalid: nothing before {rest[0]!r}; {_GRAMMAR}")
    committed_only = rest.startswith("@")
    if committed_only:
        rest = rest[1:]
    steps: list[tuple[str, int]] = []
    position = 0
    while position < len(rest):
        match = _MODIFIER.match(rest, position)
        if match is None:
            raise InvalidInputError(
                f"ref {ref!r} is invalid at {rest[position:]!r}: '~' and '^' take an optional "
                f"number and '@' may only follow the branch name; {_GRAMMAR}"
            )
        steps.append((match.group(1), int(match.group(2) or "1")))
        position = match.end()
    return RefExpression(base, committed_only, tuple(steps))


class RefResolver:
    """Resolves ref expressions against one repository's refs. Thread-safe."""

    def __init__(self, refs: Refs) -> None:
        self._refs = refs

    def resolve(
        self, repository: Repository, ref: str, *, read: BranchRead | None = None
    ) -> ResolvedRef:
        """Resolve `ref` to a commit (and a branch's staging tokens, for a plain branch).

        `read` is this request's read of a branch (`Graveler.read_branch`): when `ref`
        starts with that branch, its record is used instead of reading it again.

        Raises:
            InvalidInputError: a malformed expression, an ambiguous commit id
                prefix, or `@` after something that is not a branch.
            RefNotFoundError: no branch, tag or commit by that name, or an
                ancestry step goes past the first commit or a missing parent.
        """
        expression = parse_ref(ref)
        resolved = self._resolve_base(repository, ref, expression, read)
        commit_id, commit = resolved.commit_id, resolved.commit
        for kind, count in expression.steps:
            if kind == "~":
                commit_id, commit = self._first_parent(repository, ref, commit_id, commit, count)
            elif count:
                commit_id, commit = self._parent(repository, ref, commit_id, commit, count)
        if expression.steps:
            return ResolvedRef(commit_id, commit, None, ())
        return resolved

    def _resolve_base(
        self,
        repository: Repository,
        ref: str,
        expression: RefExpression,
        read: BranchRead | None = None,
    ) -> ResolvedRef:
        base = expression.base
        if is_branch_name(base):
            same = read is not None and read.repository.instance_uid == repository.instance_uid
            branch = read.branch if read is not None and same and read.name == base else None
            if branch is None:
                try:
                    branch = self._refs.load_branch(repository, base)[0]
                except BranchNotFoundError:
                    pass
            if branch is not None:
                commit = self._refs.get_commit(repository, branch.commit_id)
                tokens = () if expression.committed_only else branch.tokens()
                tombstone_tokens = branch.tombstone_tokens_among(tokens)
                return ResolvedRef(branch.commit_id, commit, base, tokens, tombstone_tokens)
        if expression.committed_only:
            raise InvalidInputError(
                f"ref {ref!r} is invalid: '@' follows only a branch name, and {base!r} is no "
                f"branch of repository {repository.name!r}; drop the '@'"
            )
        commit_id = self._commit_of(repository, ref, base)
        return ResolvedRef(commit_id, self._refs.get_commit(repository, commit_id), None, ())

    def _commit_of(self, repository: Repository, ref: str, base: str) -> str:
        """The commit id a tag, full commit id or commit id prefix names."""
        if is_tag_name(base):
            try:
                return self._refs.get_tag(repository, base).commit_id
            except TagNotFoundError:
                pass
        if is_commit_id(base):
            try:
                self._refs.get_commit(repository, base)
            except CommitNotFoundError:
                pass
            else:
                return base
        elif MIN_PREFIX <= len(base) < 64 and _HEX.fullmatch(base):
            matches = []
            for identifier in self._refs.commit_ids_with_prefix(repository, base):
                matches.append(identifier)
                if len(matches) > 1:
                    raise InvalidInputError(
                        f"ref {ref!r} is ambiguous: commit id prefix {base!r} matches "
                        f"{matches[0][:12]}... and {matches[1][:12]}...; give more digits"
                    )
            if matches:
                return matches[0]
        elif not is_tag_name(base):
            raise InvalidInputError(
                f"ref {ref!r} is invalid: {base!r} cannot name a branch, tag or commit; {_GRAMMAR}"
            )
        raise RefNotFoundError(
            f"ref {ref!r} not found in repository {repository.name!r}: no branch, tag or "
            f"commit (at least {MIN_PREFIX} hex digits of an id) is named {base!r}"
        )

    def _first_parent(
        self, repository: Repository, ref: str, commit_id: str, commit: Commit, count: int
    ) -> tuple[str, Commit]:
        """The `count`-th first-parent ancestor, reached by the commits' skip pointers in
        O(log count) reads where they are recorded (`lineage.first_parent_ancestor`);
        the commits between are read as lineages, cached where whole commits would not
        fit (issue 33)."""
        if count == 0:
            return commit_id, commit
        reached, left = first_parent_ancestor(
            lambda i: self._refs.get_lineage(repository, i), commit_id, lineage_of(commit), count
        )
        if left:
            raise RefNotFoundError(
                f"ref {ref!r} not found in repository {repository.name!r}: commit "
                f"{reached[:12]}... has 0 parents, so it has no parent number 1"
            )
        return reached, self._refs.get_commit(repository, reached)

    def _parent(
        self, repository: Repository, ref: str, commit_id: str, commit: Commit, number: int
    ) -> tuple[str, Commit]:
        if number > len(commit.parents):
            has = f"{len(commit.parents)} parent" + ("" if len(commit.parents) == 1 else "s")
            raise RefNotFoundError(
                f"ref {ref!r} not found in repository {repository.name!r}: commit "
                f"{commit_id[:12]}... has {has}, so it has no parent number {number}"
            )
        parent_id = commit.parents[number - 1]
        return parent_id, self._refs.get_commit(repository, parent_id)
