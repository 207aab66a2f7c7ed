"""Policies as lakeFS writes them, and the one function that decides a request.

A statement allows or denies actions (`fs:ReadObject`, `auth:*`, `fs:Read*`) on
resources named by ARNs (`arn:lakefs:fs:::repository/<repo>/object/<path>`),
with `*` matching any run of characters and `?` one character, and `${user}`
standing for the caller's id. A request needs every one of its permissions; a
permission is granted when some statement allows it and none denies it, so a
deny always wins and nothing is allowed by default.

A permission may name every resource under a prefix (`under=True`: a bulk
delete of a folder, reading any blob of a repository). It is granted when an
allowing statement matches all of them and no denying statement matches any:
a deny on `object/data/secret/*` refuses a bulk delete of `object/data/`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple

from kvlake.auth.records import Policy, Statement
from kvlake.auth.wildcard import MAX_PATTERN_LENGTH, covers_under, match, matches_under
from kvlake.errors import InvalidInputError

_ACTION = re.compile(r"(\*|[a-z]+:[A-Za-z*?]+)")
_MAX_STATEMENTS: Final = 100


class Permission(NamedTuple):
    """One thing a request needs: an action on a resource, or on every resource that
    starts with `resource` when `under` is set."""

    action: str
    resource: str
    under: bool = False

    def describe(self) -> str:
        return f"{self.action} on {self.resource}{'*' if self.under else ''}"


def repository_arn(repository: str) -> str:
    return f"arn:lakefs:fs:::repository/{repository}"


def object_arn(repository: str, path: str) -> str:
    return f"arn:lakefs:fs:::repository/{repository}/object/{path}"


def branch_arn(repository: str, branch: str) -> str:
    return f"arn:lakefs:fs:::repository/{repository}/branch/{branch}"


def tag_arn(repository: str, tag: str) -> str:
    return f"arn:lakefs:fs:::repository/{repository}/tag/{tag}"


def user_arn(user_id: str) -> str:
    return f"arn:lakefs:auth:::user/{user_id}"


def group_arn(group_id: str) -> str:
    return f"arn:lakefs:auth:::group/{group_id}"


def policy_arn(policy_id: str) -> str:
    return f"arn:lakefs:auth:::policy/{policy_id}"


ALL: Final = "*"


def check_statements(statements: Sequence[Statement]) -> None:
    """Refuse statements that could never be evaluated as written (nothing is stored)."""
    if not statements:
        raise InvalidInputError("a policy needs at least one statement")
    if len(statements) > _MAX_STATEMENTS:
        raise InvalidInputError(f"a policy holds at most {_MAX_STATEMENTS} statements")
    for statement in statements:
        if not statement.action:
            raise InvalidInputError("a statement needs at least one action, e.g. 'fs:ReadObject'")
        for action in statement.action:
            if not _ACTION.fullmatch(action):
                raise InvalidInputError(
                    f"action {action!r} is invalid; write 'service:Action' such as"
                    " 'fs:ReadObject', 'fs:Read*' or '*'"
                )
        if not statement.resource:
            raise InvalidInputError(
                "a statement needs a resource such as '*' or"
                " 'arn:lakefs:fs:::repository/<repository>/object/*'"
            )
        if len(statement.resource) > MAX_PATTERN_LENGTH:
            raise InvalidInputError(
                f"resource {statement.resource[:40]!r}... is {len(statement.resource)}"
                f" characters long; use at most {MAX_PATTERN_LENGTH}"
            )


def is_allowed(policies: Iterable[Policy], needed: Sequence[Permission], *, user_id: str) -> bool:
    """Whether the policies grant every needed permission (deny wins; default deny)."""
    return refusal(policies, needed, user_id=user_id) is None


def refusal(
    policies: Iterable[Policy], needed: Sequence[Permission], *, user_id: str
) -> str | None:
    """Why the policies do not grant every needed permission, or None when they do.

    The reason names the permission and, for a deny, the policy and statement
    resource that deny it, so a refusal says which rule to change.
    """
    statements = [(policy.id, s) for policy in policies for s in policy.statement]
    for permission in needed:
        allowed = False
        for policy_id, statement in statements:
            if not _acts_on(statement, permission.action):
                continue
            resource = statement.resource.replace("${user}", user_id)
            if statement.effect == "deny":
                if _denies(resource, permission):
                    return (
                        f"policy {policy_id!r} denies {permission.action} on {resource}, which"
                        f" {'lies under' if permission.under else 'matches'}"
                        f" {permission.describe()}"
                    )
            elif _grants(resource, permission):
                allowed = True
        if not allowed:
            return f"no policy allows {permission.describe()}"
    return None


def _acts_on(statement: Statement, action: str) -> bool:
    return any(match(pattern, action) for pattern in statement.action)


def _denies(resource: str, permission: Permission) -> bool:
    if permission.under:
        return matches_under(resource, permission.resource)
    return match(resource, permission.resource)


def _grants(resource: str, permission: Permission) -> bool:
    if permission.under:
        return covers_under(resource, permission.resource)
    return match(resource, permission.resource)


def _statement(actions: tuple[str, ...], resource: str = ALL) -> Statement:
    return Statement(effect="allow", action=actions, resource=resource)


BUILTIN_POLICIES: Final = {
    "AllAccess": (_statement(("fs:*", "auth:*", "ci:*", "retention:*")),),
    "FSFullAccess": (_statement(("fs:*",)),),
    "FSReadAll": (_statement(("fs:List*", "fs:Read*")),),
    "FSReadWriteAll": (
        _statement(
            (
                "fs:Read*",
                "fs:List*",
                "fs:WriteObject",
                "fs:DeleteObject",
                "fs:RevertBranch",
                "fs:CreateBranch",
                "fs:CreateTag",
                "fs:DeleteBranch",
                "fs:DeleteTag",
                "fs:CreateCommit",
            )
        ),
    ),
    "AuthFullAccess": (_statement(("auth:*",)),),
    "AuthManageOwnCredentials": (
        _statement(
            (
                "auth:CreateCredentials",
                "auth:DeleteCredentials",
                "auth:ListCredentials",
                "auth:ReadCredentials",
            ),
            "arn:lakefs:auth:::user/${user}",
        ),
    ),
    "RepoManagementFullAccess": (_statement(("ci:*", "retention:*")),),
    "RepoManagementReadAll": (_statement(("ci:Read*", "retention:Get*")),),
}
"""lakeFS's built-in policies, created on first start."""

BUILTIN_GROUPS: Final = {
    "Admins": ("AllAccess",),
    "SuperUsers": ("FSFullAccess", "AuthManageOwnCredentials", "RepoManagementFullAccess"),
    "Developers": ("FSFullAccess", "AuthManageOwnCredentials", "RepoManagementReadAll"),
    "Viewers": ("FSReadAll", "AuthManageOwnCredentials"),
}
"""lakeFS's built-in groups and the policies attached to each."""
