"""A branch read together with its repository record: the start of a hot request.

A stat or an upload needs the repository record (invariant 1), the branch and,
for a write, the protection rules. `Graveler.read_branch` reads them in one round
trip (`Repositories.get_with`), and the request hands this record down instead
of reading each again. It is a read made at the request's start, like the reads
it replaces, so nothing here is older than the request: read-after-write across
processes holds as before. It must not outlive the request, and the writer flow's
re-read of the branch after its step (invariant 2) never uses it.

A stat also needs its path's staged entry, in the branch's staging tokens, which
are only known once the branch is read. `read_branch(..., path=)` reads the path
in the tokens this process saw on the branch last time (`TokenMemory`) within the
same statement, and `StagedGuess` keeps what it found only if those tokens are
the ones the branch names in that very read: a branch that moved on (a commit
sealed its token) makes the guess void, and the stat reads its entry as before.
The memory is a hint of which partitions to read, never an answer, so it can be
wrong for any time without a stale result; a wrong guess costs one round trip.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlake.graveler import keys
from kvlake.graveler.records import (
    Branch,
    BranchProtection,
    Repository,
    decode_branch,
    decode_branch_protection,
)
from kvlake.graveler.refs.protection import SETTING

BRANCH_READ_SETTINGS = (keys.setting_key(SETTING),)
"""The instance keys read beside the branch: its protection rules."""


TOKEN_MEMORY = 10_000
"""Branches whose staging tokens a process remembers (`TokenMemory`)."""


class TokenMemory:
    """(repository, branch) -> the staging tokens last read on that branch, in this process.

    Only a guess of which partitions to read a path in beside the branch: it is checked
    against the branch read in the same statement before anything read with it is used,
    so it may be stale for any length of time and never serves a stale answer.
    Bounded: full, it is emptied (refilling costs one round trip per branch). Plain
    dict operations, safe under the GIL for many threads.
    """

    def __init__(self) -> None:
        self._tokens: dict[tuple[str, str], tuple[str, ...]] = {}

    def get(self, repository: str, branch: str) -> tuple[str, ...]:
        return self._tokens.get((repository, branch), ())

    def remember(self, repository: str, branch: str, tokens: tuple[str, ...]) -> None:
        if len(self._tokens) >= TOKEN_MEMORY:
            self._tokens.clear()
        self._tokens[(repository, branch)] = tokens


@dataclass(frozen=True, slots=True)
class StagedGuess:
    """One path's raw staged values in the branch's tokens, read in the branch's statement.

    `values` maps each token that holds the path to its raw value (b"" is a tombstone);
    a token of `tokens` absent from it holds nothing at the path.
    """

    key: bytes
    tokens: tuple[str, ...]
    values: dict[str, bytes]


@dataclass(frozen=True, slots=True)
class BranchRead:
    """One request's read of a repository, one of its branches and its protection rules."""

    repository: Repository
    name: str
    branch: Branch | None
    """None: no branch by that name (the caller's usual path raises the error)."""
    protection: BranchProtection
    staged: StagedGuess | None = None
    """A path's staged values, read with the branch in the tokens it names (see module)."""

    @classmethod
    def from_rows(
        cls,
        repository: Repository,
        name: str,
        rows: dict[bytes, bytes],
        staged: StagedGuess | None = None,
    ) -> BranchRead:
        """Decode the rows `Repositories.get_with` read for `instance_keys(name)`; `staged`
        is kept only if its tokens are exactly those of the branch read."""
        raw_branch = rows.get(keys.branch_key(name))
        raw_rules = rows.get(BRANCH_READ_SETTINGS[0])
        branch = decode_branch(raw_branch) if raw_branch is not None else None
        if staged is not None and (branch is None or branch.tokens() != staged.tokens):
            staged = None
        return cls(
            repository=repository,
            name=name,
            branch=branch,
            protection=(
                decode_branch_protection(raw_rules) if raw_rules is not None else BranchProtection()
            ),
            staged=staged,
        )

    def staged_values(self, key: bytes, tokens: tuple[str, ...]) -> dict[str, bytes] | None:
        """The staged values of `key` per token if this read holds them for exactly `tokens`,
        else None (read them from the store)."""
        staged = self.staged
        if staged is None or staged.key != key or staged.tokens != tokens:
            return None
        return staged.values

    @staticmethod
    def instance_keys(name: str) -> list[bytes]:
        return [keys.branch_key(name), *BRANCH_READ_SETTINGS]
