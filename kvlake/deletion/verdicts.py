"""The fresh check's verdicts, and the repository instance it judges records against
(kvlake/deletion/checks.py, kvlake/deletion/staged_refs.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from kvlake.blockstore import StorageAddress
from kvlake.graveler import Repository

Action = Literal["delete", "in_use", "wait", "kept", "invalid", "retry"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do with one record: delete the blob, retry later, keep it, or dead-letter it.

    `in_use`: referenced now, check again later (counts as an attempt); `wait`: a
    commit in progress may reference it, check again later (does not count);
    `retry`: the check itself failed (counts); `kept`: referenced for good, drop
    the record and keep the blob; `invalid`: bad input, dead-letter it.
    """

    action: Action
    reason: str = ""


DELETE: Final = Verdict("delete")


@dataclass(slots=True)
class Instance:
    """One repository instance as the check sees it, read once per batch."""

    kind: Literal["live", "purged", "deleted", "creating", "unknown"]
    namespace: str = ""
    repository: Repository | None = None
    tokens: list[str] = field(default_factory=list)
    sealed: set[str] = field(default_factory=set)
    shared_with: str | None = None
    taken_by: str | None = None
    place: StorageAddress | None = None
    """A live instance's namespace in canonical form, for imported entries' URLs."""
