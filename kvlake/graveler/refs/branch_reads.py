"""A branch read together with its repository record: the start of a hot request.

A stat or an upload needs the repository record (invariant 1), the branch and,
for a write, the protection rules. `Graveler.read_branch` reads them in one round
trip (`Repositories.get_with`), and the request hands this record down instead
of reading each again. It is a read made at the request's start, like the reads
it replaces, so nothing here is older than the request: read-after-write across
processes holds as before. It must not outlive the request, and the writer flow's
re-read of the branch after its step (invariant 2) never uses it.
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


@dataclass(frozen=True, slots=True)
class BranchRead:
    """One request's read of a repository, one of its branches and its protection rules."""

    repository: Repository
    name: str
    branch: Branch | None
    """None: no branch by that name (the caller's usual path raises the error)."""
    protection: BranchProtection

    @classmethod
    def from_rows(cls, repository: Repository, name: str, rows: dict[bytes, bytes]) -> BranchRead:
        """Decode the rows `Repositories.get_with` read for `instance_keys(name)`."""
        raw_branch = rows.get(keys.branch_key(name))
        raw_rules = rows.get(BRANCH_READ_SETTINGS[0])
        return cls(
            repository=repository,
            name=name,
            branch=decode_branch(raw_branch) if raw_branch is not None else None,
            protection=(
                decode_branch_protection(raw_rules) if raw_rules is not None else BranchProtection()
            ),
        )

    @staticmethod
    def instance_keys(name: str) -> list[bytes]:
        return [keys.branch_key(name), *BRANCH_READ_SETTINGS]
