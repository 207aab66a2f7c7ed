"""Group ACLs: lakeFS's simplified permissions (getGroupACL, setGroupACL), kept as policies.

lakeFS's open-source edition grants by ACL: a group gets Read, Write, Super or
Admin, which lakeFS writes as one policy, `ACL(_-_)<group>`, holding the
statements of that level, attached to the group alone (the group's other
policies are detached). kvlake keeps that shape: the ACL policy is an ordinary
policy, evaluated like any other, that also records its level (`Policy.acl`),
so reading a group's ACL finds it again; a policy written as statements has no
level, and a group holding one (or several policies) has no ACL to report.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from kvlake.auth.policies import BUILTIN_POLICIES
from kvlake.auth.records import Statement
from kvlake.auth.store import AuthStore
from kvlake.errors import AclPermissionError, ConflictError, NotFoundError

POLICY_PREFIX: Final = "ACL(_-_)"
_READ_CONFIG: Final = Statement(effect="allow", action=("fs:ReadConfig",), resource="*")
_LEVELS: Final[dict[str, tuple[str, ...]]] = {
    "Read": ("FSReadAll", "AuthManageOwnCredentials"),
    "Write": ("FSReadWriteAll", "AuthManageOwnCredentials", "RepoManagementReadAll"),
    "Super": ("FSFullAccess", "AuthManageOwnCredentials", "RepoManagementReadAll"),
    "Admin": ("AllAccess",),
}
"""Each level's statements, as lakeFS's ACL translation composes them from its policies."""


class GroupAcl(NamedTuple):
    """A group's ACL level ("" for none), or why it has none (`problem`)."""

    permission: str = ""
    problem: str = ""


def acl_policy_id(group_id: str) -> str:
    """The id of the group's ACL policy, as lakeFS names it."""
    return POLICY_PREFIX + group_id


def statements(permission: str) -> tuple[Statement, ...]:
    """The statements of an ACL level. Raises AclPermissionError for another word."""
    names = _LEVELS.get(permission)
    if names is None:
        raise AclPermissionError(
            f"ACL permission {permission!r} is unknown; use Read, Write, Super or Admin"
        )
    found = tuple(s for name in names for s in BUILTIN_POLICIES[name])
    return (*found, _READ_CONFIG) if permission == "Read" else found


def write_group_acl(store: AuthStore, group_id: str, permission: str) -> None:
    """Give the group exactly this ACL: write its ACL policy, attach it, detach the rest.

    Raises:
        NotFoundError: no such group (nothing written).
        AclPermissionError: an unknown level (nothing written).
    """
    wanted = statements(permission)
    store.get_group(group_id)
    acl_id = acl_policy_id(group_id)
    try:
        store.update_policy(acl_id, wanted, acl=permission)
    except NotFoundError:
        try:
            store.create_policy(acl_id, wanted, acl=permission)
        except ConflictError:  # a racing write created it first: ours wins, as last writer
            store.update_policy(acl_id, wanted, acl=permission)
    held = list(store.group_policies(group_id))
    if acl_id not in held:
        store.attach_to_group(group_id, acl_id)
    for other in held:
        if other != acl_id:
            store.detach_from_group(group_id, other)


def read_group_acl(store: AuthStore, group_id: str) -> GroupAcl:
    """The group's ACL as lakeFS reports it (its problems in lakeFS's words).

    Raises:
        NotFoundError: no such group.
    """
    held = []
    for name in store.group_policies(group_id):
        held.append(name)
        if len(held) > 1:
            return GroupAcl(problem="Multiple policies attached to group - no ACL")
    if not held:
        return GroupAcl()  # no ACL is valid, and allows nothing
    try:
        policy = store.get_policy(held[0])
    except NotFoundError:
        return GroupAcl()  # detached meanwhile
    if not policy.acl:
        return GroupAcl(problem="Policy attached to group has no ACL")
    return GroupAcl(permission=policy.acl)
