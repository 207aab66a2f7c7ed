"""Branch protection rules: patterns of branch names, and the actions blocked on them.

The rules of a repository are one record under `settings/branch_protection` in
its instance partition, changed only by compare-and-swap, so two admins editing
rules at once never lose one another's rule. Every guarded call reads the
record afresh: a rule applies from the moment it is stored, in every process.
Patterns are fnmatch-style (`main`, `release-*`) and match whole branch names,
case-sensitively. The guarded actions are staging writes (writes, deletes and
resets of uncommitted changes), commits (commit, revert, cherry-pick, hard
reset) and branch deletion. Merging into a protected branch stays allowed, as
in lakeFS: merges are how protected branches are meant to change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase
from typing import Final, get_args

from kvlake.errors import (
    InvalidInputError,
    NotFoundError,
    ProtectedBranchError,
)
from kvlake.graveler import keys
from kvlake.graveler.records import (
    BranchProtection,
    ProtectedAction,
    Repository,
    decode_branch_protection,
    encode,
)
from kvlake.graveler.refs.store import partition_of
from kvlake.graveler.validation import check_branch_name
from kvlake.kv import Store, get_or_none, update

Rules = dict[str, tuple[ProtectedAction, ...]]
_Change = Callable[[Rules], Rules]

SETTING: Final = "branch_protection"
ACTIONS: Final[tuple[ProtectedAction, ...]] = get_args(ProtectedAction)
MAX_PATTERN: Final = 256


class BranchProtectionRules:
    """Reads, edits and enforces branch protection rules. Thread-safe."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get_rules(self, repository: Repository) -> Rules:
        """The rules by pattern (empty when the repository has none)."""
        return dict(self._load(repository).rules)

    def set_rule(
        self, repository: Repository, pattern: str, blocked: Iterable[ProtectedAction]
    ) -> None:
        """Create or replace the rule for `pattern`.

        Raises:
            InvalidInputError: an empty or overlong pattern, no actions, or an
                unknown action; nothing was changed.
        """
        _check_pattern(pattern)
        actions = tuple(sorted(set(blocked)))
        if isinstance(blocked, str) or not actions or any(a not in ACTIONS for a in actions):
            raise InvalidInputError(
                f"blocked actions for pattern {pattern!r} are {blocked!r}; "
                f"pass one or more of {', '.join(ACTIONS)}"
            )
        self._update(repository, lambda rules: {**rules, pattern: actions})

    def delete_rule(self, repository: Repository, pattern: str) -> None:
        """Remove the rule for `pattern`.

        Raises:
            NotFoundError: the repository has no rule with exactly that pattern.
        """
        _check_pattern(pattern)

        def without(rules: Rules) -> Rules:
            if pattern not in rules:
                raise NotFoundError(
                    f"no branch protection rule has pattern {pattern!r} in repository "
                    f"{repository.name!r}; list the rules to see their patterns"
                )
            return {p: a for p, a in rules.items() if p != pattern}

        self._update(repository, without)

    def guard(self, repository: Repository, branch: str, action: ProtectedAction) -> None:
        """Check the branch name, then that no rule blocks `action` on it.

        Raises:
            InvalidInputError: a malformed branch name.
            ProtectedBranchError: a rule blocks the action.
        """
        check_branch_name(branch)
        self.check(repository, branch, action)

    def check(
        self,
        repository: Repository,
        branch: str,
        action: ProtectedAction,
        *,
        rules: BranchProtection | None = None,
    ) -> None:
        """Raise ProtectedBranchError if a rule blocks `action` on `branch`.

        The writer flow and every guarded operation check it themselves; this is
        for callers that must refuse before doing expensive work of their own.
        `rules` are the rules this request read already (`Graveler.read_branch`).
        """
        current = self._load(repository) if rules is None else rules
        for pattern, blocked in current.rules.items():
            if action in blocked and fnmatchcase(branch, pattern):
                raise ProtectedBranchError(
                    f"cannot write to protected branch {branch!r}: rule {pattern!r} of "
                    f"repository {repository.name!r} blocks {action.replace('_', ' ')}; "
                    f"merge into it instead, or change the rule"
                )

    def _load(self, repository: Repository) -> BranchProtection:
        loaded = get_or_none(self._store, partition_of(repository), keys.setting_key(SETTING))
        return BranchProtection() if loaded is None else decode_branch_protection(loaded[0])

    def _update(self, repository: Repository, change: _Change) -> None:
        def edit(raw: bytes | None) -> bytes:
            # Run again on another edit's rules when it landed first.
            current = BranchProtection() if raw is None else decode_branch_protection(raw)
            return encode(BranchProtection(rules=change(dict(current.rules))))

        what = f"editing branch protection rules of {repository.name!r}"
        update(self._store, partition_of(repository), keys.setting_key(SETTING), edit, what=what)


def _check_pattern(pattern: str) -> None:
    if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN or "\0" in pattern:
        raise InvalidInputError(
            f"branch protection pattern {pattern!r} is invalid; use 1-{MAX_PATTERN} characters "
            f"without NUL, e.g. 'main' or 'release-*'"
        )
