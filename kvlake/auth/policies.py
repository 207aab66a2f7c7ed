"""Policies as lakeFS writes them, and the one function that decides a request.

A statement allows or denies actions (`fs:ReadObject`, `auth:*`, `fs:Read*`) on
resources named by ARNs (`arn:lakefs:fs:::repository/<repo>/object/<path>`),
with `*` matching any run of characters and `?` one character, and `${user}`
standing for the caller's id. A request needs every one of its permissions; a
permission is granted when some statement allows it and none denies it, so a
deny always wins and nothing is allowed by default.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple

from kvlake.auth.records import Policy, Statement
from kvlake.auth.wildcard import MAX_PATTERN_LENGTH, match
from kvlake.errors import InvalidInputError

_ACTION = re.compile(r"(\*|[a-z]+:[A-Za-z*?]+)")
_MAX_STATEMENTS: Final = 100


class Permission(NamedTuple):
    """One thing a request needs: an action on a resource."""

    action: str
    resource: str


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
    statements = [s for policy in policies for s in policy.statement]
    for permission in needed:
        allowed = False
        for statement in statements:
            if not _statement_matches(statement, permission, user_id):
                continue
            if statement.effect == "deny":
                return False
            allowed = True
        if not allowed:
            return False
    return True


def _statement_matches(statement: Statement, permission: Permission, user_id: str) -> bool:
    resource = statement.resource.replace("${user}", user_id)
    if not match(resource, permission.resource):
        return False
    return any(match(action, permission.action) for action in statement.action)


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
