"""Garbage collection rules: how many days each branch's history is retained.

One record under `settings/gc_rules` in the repository's instance partition, so
rules die with their repository: a new repository of the same name reads a
new partition and has none (invariant 1). lakeFS keeps the same rules as a
file in the storage namespace; kvlake keeps all mutable metadata in the KV.
Setting replaces the whole record, as lakeFS's setGCRules does (the last
writer wins); deleting a repository's rules when it has none is not an error,
as in lakeFS. Rules are checked in full before anything is written: a negative
day count, a malformed branch name or a branch named twice changes nothing
(invariant 6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from kvlake.errors import InvalidInputError, KeyNotFoundError, NotFoundError
from kvlake.graveler import keys
from kvlake.graveler.records import (
    GarbageCollectionRules,
    Repository,
    decode_gc_rules,
    encode,
)
from kvlake.graveler.refs.store import partition_of
from kvlake.graveler.validation import is_branch_name
from kvlake.kv import Store

MAX_DAYS: Final = 2**31 - 1
"""lakeFS stores retention days as int32; a longer retention could not round-trip."""
MAX_BRANCH_RULES: Final = 10_000
"""Branch rules one repository may have: the record is read by every GC run, whole."""


def make_rules(
    default_retention_days: int, branches: Mapping[str, int] | Iterable[tuple[str, int]] = ()
) -> GarbageCollectionRules:
    """Checked rules from a default and (branch, days) pairs or a mapping.

    Raises:
        InvalidInputError: a day count that is not a whole number from 0 to MAX_DAYS,
            a malformed branch name, a branch named twice, or over MAX_BRANCH_RULES
            branches.
    """
    _check_days("default_retention_days", default_retention_days)
    pairs = list(branches.items() if isinstance(branches, Mapping) else branches)
    if len(pairs) > MAX_BRANCH_RULES:
        raise InvalidInputError(
            f"garbage collection rules name {len(pairs)} branches, over {MAX_BRANCH_RULES};"
            " give most branches the default retention instead"
        )
    by_branch: dict[str, int] = {}
    for branch, days in pairs:
        if not is_branch_name(branch):
            raise InvalidInputError(
                f"garbage collection rule names branch {branch!r}, which is not a valid branch"
                " name; use letters, digits, '_' and '-' (at most 256 characters)"
            )
        if branch in by_branch:
            raise InvalidInputError(
                f"garbage collection rules name branch {branch!r} twice; give each branch one"
                " retention_days"
            )
        _check_days(f"retention_days of branch {branch!r}", days)
        by_branch[branch] = days
    return GarbageCollectionRules(
        default_retention_days=default_retention_days,
        branch_retention_days=dict(sorted(by_branch.items())),
    )


def _check_days(name: str, days: object) -> None:
    # bool is an int in Python, but `true` days is a client's bug, not a retention.
    if isinstance(days, bool) or not isinstance(days, int):
        raise InvalidInputError(f"{name} is {days!r}; give a whole number of days")
    if days < 0:
        raise InvalidInputError(
            f"{name} is {days}, a negative retention; give 0 (keep only branch heads) or more days"
        )
    if days > MAX_DAYS:
        raise InvalidInputError(f"{name} is {days}; give at most {MAX_DAYS} days")


class GarbageCollectionRuleSettings:
    """Reads, replaces and deletes repositories' garbage collection rules. Thread-safe."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, repository: Repository) -> GarbageCollectionRules:
        """The repository's rules.

        Raises:
            NotFoundError: the repository has no rules (lakeFS answers 404 too).
        """
        try:
            raw, _ = self._store.get(partition_of(repository), keys.GC_RULES)
        except KeyNotFoundError:
            raise NotFoundError(
                f"repository {repository.name!r} has no garbage collection rules; set them"
                " with `kvlake gc rules set` or the setGCRules API"
            ) from None
        return decode_gc_rules(raw)

    def set(self, repository: Repository, rules: GarbageCollectionRules) -> None:
        """Replace the repository's rules with `rules`, checked again first.

        Raises:
            InvalidInputError: as `make_rules`; nothing was changed.
        """
        checked = make_rules(rules.default_retention_days, rules.branch_retention_days)
        self._store.set(partition_of(repository), keys.GC_RULES, encode(checked))

    def delete(self, repository: Repository) -> None:
        """Remove the repository's rules (none is fine): GC then refuses to run on it."""
        self._store.delete(partition_of(repository), keys.GC_RULES)
