"""The auth layer: users, groups, policies and credentials, stored in the KV."""

from kvlake.auth.acl import GroupAcl, acl_policy_id, read_group_acl, write_group_acl
from kvlake.auth.authenticator import SESSION_COOKIE, Authenticator
from kvlake.auth.credentials import ServerKey, load_master_key
from kvlake.auth.installation import (
    Installation,
    ensure_installation,
    grant_admin,
    install,
    is_installed,
)
from kvlake.auth.policies import (
    Permission,
    branch_arn,
    group_arn,
    object_arn,
    policy_arn,
    repository_arn,
    tag_arn,
    user_arn,
)
from kvlake.auth.ratelimit import LoginLimiter
from kvlake.auth.records import Group, Policy, Statement, User
from kvlake.auth.store import AuthStore

__all__ = [
    "SESSION_COOKIE",
    "AuthStore",
    "Authenticator",
    "Group",
    "GroupAcl",
    "Installation",
    "LoginLimiter",
    "Permission",
    "Policy",
    "ServerKey",
    "Statement",
    "User",
    "acl_policy_id",
    "branch_arn",
    "ensure_installation",
    "grant_admin",
    "group_arn",
    "install",
    "is_installed",
    "load_master_key",
    "object_arn",
    "policy_arn",
    "read_group_acl",
    "repository_arn",
    "tag_arn",
    "user_arn",
    "write_group_acl",
]
