"""Users, groups, policies, their links and credentials, kept in the KV store.

Every fact lives in the KV (nothing in process memory), so any number of server
processes on one store act as one system. A link (membership, attachment) is
stored under both of its ends, written child-index first and removed in the
reverse order; deleting a user, group or policy removes its links before its
record, so a retried deletion after a crash finishes the job and a new record
under an old id never inherits an old link.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvlake import ids
from kvlake.auth import keys
from kvlake.auth.keyring import CredentialRecords
from kvlake.auth.records import (
    Attachment,
    Group,
    Policy,
    Statement,
    User,
    decode_group,
    decode_policy,
    decode_user,
    encode,
)
from kvlake.errors import (
    NotFoundError,
    PreconditionFailedError,
)
from kvlake.kv import MUST_EXIST, get_or_none


class AuthStore(CredentialRecords):
    """Typed access to the auth partitions. Thread-safe; no in-process state."""

    # -- users ------------------------------------------------------------------

    def create_user(
        self, user_id: str, *, friendly_name: str | None = None, email: str | None = None
    ) -> User:
        keys.check_id("user", user_id)
        user = User(
            id=user_id,
            creation_date=self._now(),
            friendly_name=friendly_name,
            email=email,
            uid=ids.new_uid(),
        )
        self._create(keys.USERS, keys.key(user_id), encode(user), f"user {user_id!r}")
        return user

    def get_user(self, user_id: str) -> User:
        keys.check_id("user", user_id)
        return self._load(keys.USERS, keys.key(user_id), decode_user, f"user {user_id!r}")

    def list_users(self, *, prefix: str = "", after: str = "") -> Iterator[User]:
        return self._scan(keys.USERS, decode_user, prefix=prefix, after=after)

    def delete_user(self, user_id: str) -> None:
        self.get_user(user_id)
        for access_key_id in list(self._pairs(keys.USER_CREDENTIALS, user_id)):
            self.delete_credentials(user_id, access_key_id)
        for group_id in list(self._names(keys.USER_GRANTS, keys.user_groups_prefix(user_id))):
            self.remove_member(group_id, user_id)
        for policy_id in list(self._names(keys.USER_GRANTS, keys.user_policies_prefix(user_id))):
            self.detach_from_user(user_id, policy_id)
        for token_id in list(self._pairs(keys.REVOKED_SESSIONS, user_id)):
            self._delete(keys.REVOKED_SESSIONS, keys.pair(user_id, token_id))
        self._delete(keys.USERS, keys.key(user_id))

    # -- groups -----------------------------------------------------------------

    def create_group(self, group_id: str, *, description: str | None = None) -> Group:
        keys.check_id("group", group_id)
        group = Group(id=group_id, creation_date=self._now(), description=description)
        self._create(keys.GROUPS, keys.key(group_id), encode(group), f"group {group_id!r}")
        return group

    def get_group(self, group_id: str) -> Group:
        keys.check_id("group", group_id)
        return self._load(keys.GROUPS, keys.key(group_id), decode_group, f"group {group_id!r}")

    def list_groups(self, *, prefix: str = "", after: str = "") -> Iterator[Group]:
        return self._scan(keys.GROUPS, decode_group, prefix=prefix, after=after)

    def delete_group(self, group_id: str) -> None:
        self.get_group(group_id)
        for user_id in list(self._pairs(keys.GROUP_MEMBERS, group_id)):
            self.remove_member(group_id, user_id)
        for policy_id in list(self._pairs(keys.GROUP_POLICIES, group_id)):
            self.detach_from_group(group_id, policy_id)
        self._delete(keys.GROUPS, keys.key(group_id))

    def add_member(self, group_id: str, user_id: str) -> None:
        self.get_group(group_id)
        self.get_user(user_id)
        value = encode(Attachment(creation_date=self._now()))
        self._set(keys.GROUP_MEMBERS, keys.pair(group_id, user_id), value)
        self._set(keys.USER_GRANTS, keys.user_group(user_id, group_id), value)

    def remove_member(self, group_id: str, user_id: str) -> None:
        keys.check_id("group", group_id)
        keys.check_id("user", user_id)
        if get_or_none(self.kv, keys.GROUP_MEMBERS, keys.pair(group_id, user_id)) is None:
            raise NotFoundError(f"user {user_id!r} is not a member of group {group_id!r}")
        self._delete(keys.USER_GRANTS, keys.user_group(user_id, group_id))
        self._delete(keys.GROUP_MEMBERS, keys.pair(group_id, user_id))

    def group_members(self, group_id: str, *, after: str = "") -> Iterator[str]:
        self.get_group(group_id)
        return self._pairs(keys.GROUP_MEMBERS, group_id, after=after)

    def user_groups(self, user_id: str, *, after: str = "") -> Iterator[str]:
        self.get_user(user_id)
        return self._names(keys.USER_GRANTS, keys.user_groups_prefix(user_id), after=after)

    # -- policies ---------------------------------------------------------------

    def create_policy(
        self, policy_id: str, statements: tuple[Statement, ...], *, acl: str = ""
    ) -> Policy:
        keys.check_id("policy", policy_id)
        policy = Policy(id=policy_id, creation_date=self._now(), statement=statements, acl=acl)
        self._create(keys.POLICIES, keys.key(policy_id), encode(policy), f"policy {policy_id!r}")
        return policy

    def update_policy(
        self, policy_id: str, statements: tuple[Statement, ...], *, acl: str = ""
    ) -> Policy:
        old = self.get_policy(policy_id)
        policy = Policy(
            id=policy_id, creation_date=old.creation_date, statement=statements, acl=acl
        )
        try:
            self._set_if(keys.POLICIES, keys.key(policy_id), encode(policy), MUST_EXIST)
        except PreconditionFailedError:
            raise NotFoundError(f"policy {policy_id!r} not found") from None
        return policy

    def get_policy(self, policy_id: str) -> Policy:
        keys.check_id("policy", policy_id)
        return self._load(
            keys.POLICIES, keys.key(policy_id), decode_policy, f"policy {policy_id!r}"
        )

    def list_policies(self, *, prefix: str = "", after: str = "") -> Iterator[Policy]:
        return self._scan(keys.POLICIES, decode_policy, prefix=prefix, after=after)

    def delete_policy(self, policy_id: str) -> None:
        self.get_policy(policy_id)
        for holder in list(self._pairs(keys.POLICY_HOLDERS, policy_id)):
            kind, _, holder_id = holder.partition("/")
            if kind == "u":
                self.detach_from_user(holder_id, policy_id)
            else:
                self.detach_from_group(holder_id, policy_id)
        self._delete(keys.POLICIES, keys.key(policy_id))

    def attach_to_user(self, user_id: str, policy_id: str) -> None:
        self.get_user(user_id)
        self._attach(
            keys.USER_GRANTS, keys.user_policy(user_id, policy_id), "u", user_id, policy_id
        )

    def detach_from_user(self, user_id: str, policy_id: str) -> None:
        keys.check_id("user", user_id)
        key = keys.user_policy(user_id, policy_id)
        self._detach(keys.USER_GRANTS, key, "u", user_id, policy_id, f"user {user_id!r}")

    def attach_to_group(self, group_id: str, policy_id: str) -> None:
        self.get_group(group_id)
        key = keys.pair(group_id, policy_id)
        self._attach(keys.GROUP_POLICIES, key, "g", group_id, policy_id)

    def detach_from_group(self, group_id: str, policy_id: str) -> None:
        keys.check_id("group", group_id)
        key = keys.pair(group_id, policy_id)
        self._detach(keys.GROUP_POLICIES, key, "g", group_id, policy_id, f"group {group_id!r}")

    def _attach(
        self, partition: bytes, key: bytes, kind: str, holder_id: str, policy_id: str
    ) -> None:
        self.get_policy(policy_id)
        value = encode(Attachment(creation_date=self._now()))
        # The reverse index first: a policy deletion always finds every holder.
        self._set(keys.POLICY_HOLDERS, keys.pair(policy_id, f"{kind}/{holder_id}"), value)
        self._set(partition, key, value)

    def _detach(
        self, partition: bytes, key: bytes, kind: str, holder_id: str, policy_id: str, what: str
    ) -> None:
        keys.check_id("policy", policy_id)
        if get_or_none(self.kv, partition, key) is None:
            raise NotFoundError(f"policy {policy_id!r} is not attached to {what}")
        self._delete(partition, key)
        self._delete(keys.POLICY_HOLDERS, keys.pair(policy_id, f"{kind}/{holder_id}"))

    def user_policies(self, user_id: str, *, after: str = "") -> Iterator[str]:
        self.get_user(user_id)
        return self._names(keys.USER_GRANTS, keys.user_policies_prefix(user_id), after=after)

    def group_policies(self, group_id: str, *, after: str = "") -> Iterator[str]:
        self.get_group(group_id)
        return self._pairs(keys.GROUP_POLICIES, group_id, after=after)

    def effective_policies(self, user_id: str) -> list[Policy]:
        """The user's own policies and those of every group, each once, missing ones skipped."""
        policy_ids: set[str] = set()
        group_ids: list[str] = []
        # One scan finds the user's groups and own policies: a query less on every request.
        for grant in self._pairs(keys.USER_GRANTS, user_id):
            kind, _, name = grant.partition("/")
            if kind == "g":
                group_ids.append(name)
            else:
                policy_ids.add(name)
        for group_id in group_ids:
            policy_ids.update(self._pairs(keys.GROUP_POLICIES, group_id))
        policies = []
        for policy_id in sorted(policy_ids):
            try:
                policies.append(self.get_policy(policy_id))
            except NotFoundError:
                continue  # deleted between the listing and now: it grants nothing
        return policies
