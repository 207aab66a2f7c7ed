"""The auth KV key schema: the only place that spells auth partitions and keys.

Every partition starts with `auth/`, which no graveler partition can (repository
names have no `/`, staging partitions start with `staging/`). Ids are checked by
`check_id` to contain no `/`, so `<a>/<b>` pair keys are unambiguous and a
prefix scan of `<a>/` sees exactly the pairs of `a`.
"""

from __future__ import annotations

import re
from typing import Final

from kvlake.errors import InvalidInputError

USERS: Final = b"auth/users"
"""`<user id>` -> User."""
GROUPS: Final = b"auth/groups"
"""`<group id>` -> Group."""
POLICIES: Final = b"auth/policies"
"""`<policy id>` -> Policy."""
CREDENTIALS: Final = b"auth/credentials"
"""`<access key id>` -> Credential (the secret encrypted with the server key)."""
USER_CREDENTIALS: Final = b"auth/user_credentials"
"""`<user id>/<access key id>` -> creation time: a user's keys, for listing and deletion."""
GROUP_MEMBERS: Final = b"auth/group_members"
"""`<group id>/<user id>` -> membership."""
USER_GRANTS: Final = b"auth/user_grants"
"""`<user id>/g/<group id>` -> membership (the same fact as GROUP_MEMBERS, indexed the
other way) and `<user id>/p/<policy id>` -> attachment: one scan finds both."""
GROUP_POLICIES: Final = b"auth/group_policies"
"""`<group id>/<policy id>` -> attachment."""
POLICY_HOLDERS: Final = b"auth/policy_holders"
"""`<policy id>/u/<user id>` or `<policy id>/g/<group id>` -> attachment (reverse index)."""
LOGIN_FAILURES: Final = b"auth/login_failures"
"""`<access key id>/<client address>` -> LoginFailures: shared by every server process."""
REVOKED_SESSIONS: Final = b"auth/revoked_sessions"
"""`<user id>/<token id>` -> RevokedSession: session tokens logged out before they expire."""
META: Final = b"auth/meta"
"""Installation-wide facts: `key_check` (proves the server key), `installed`."""

KEY_CHECK: Final = b"key_check"
INSTALLED: Final = b"installed"

_ID = re.compile(r"[\w+=,.@:-]{1,128}", re.ASCII)
_POLICY_ID = re.compile(r"[\w+=,.@:()-]{1,136}", re.ASCII)
"""Policy ids also take parentheses and 8 more characters: lakeFS names a group's ACL
policy `ACL(_-_)<group id>` (kvlake/auth/acl.py)."""


def check_id(kind: str, value: str) -> str:
    """Return `value` if it is a valid user, group, policy or access key id."""
    pattern = _POLICY_ID if kind == "policy" else _ID
    if not isinstance(value, str) or not pattern.fullmatch(value):
        if kind == "policy":
            raise InvalidInputError(
                f"policy id {value!r} is invalid; use 1-136 letters, digits and any of '_+=,.@:()-'"
            )
        raise InvalidInputError(
            f"{kind} id {value!r} is invalid; use 1-128 letters, digits and any of '_+=,.@:-'"
        )
    return value


def key(value: str) -> bytes:
    return value.encode()


def pair(first: str, second: str) -> bytes:
    return first.encode() + b"/" + second.encode()


def pair_prefix(first: str) -> bytes:
    return first.encode() + b"/"


def user_group(user_id: str, group_id: str) -> bytes:
    return user_id.encode() + b"/g/" + group_id.encode()


def user_policy(user_id: str, policy_id: str) -> bytes:
    return user_id.encode() + b"/p/" + policy_id.encode()


def user_groups_prefix(user_id: str) -> bytes:
    return user_id.encode() + b"/g/"


def user_policies_prefix(user_id: str) -> bytes:
    return user_id.encode() + b"/p/"
