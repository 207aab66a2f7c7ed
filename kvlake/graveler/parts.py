"""The storage pieces one graveler's engines share, built once and handed over whole.

`Graveler` makes one `Parts`; each engine (writer, committer, merger, ...) takes
it and keeps the pieces it uses, so no constructor spells out the list again and
every engine of one graveler sees the same ref cache, staging and clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.refs.protection import BranchProtectionRules
from kvlake.graveler.refs.refexpr import RefResolver
from kvlake.graveler.refs.store import DropTokens, Refs
from kvlake.graveler.staging.store import Staging
from kvlake.kv import Store


@dataclass(frozen=True, kw_only=True)
class Parts:
    store: Store
    """The KV store (shared with the rest of the lake)."""
    refs: Refs
    """Branches, tags and commits, with the commit cache."""
    staging: Staging
    """Staged entries per token."""
    committed: CommittedManager
    """Immutable ranges and metaranges."""
    resolver: RefResolver
    """Ref expressions to commits."""
    protection: BranchProtectionRules
    """Branch protection rules, checked before writes and commits."""
    drop_tokens: DropTokens
    """Queues staging tokens a commit or reset let go of, to be dropped once unreferenced."""
    clock: Callable[[], float]
    """Seconds since the epoch: the time commits and merges record."""
