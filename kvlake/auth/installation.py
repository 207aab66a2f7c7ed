"""First start: built-in policies and groups, and the first admin user with its keys.

Every step is idempotent and ordered so that a crash or a second server process
starting at the same moment cannot leave the installation half made: built-ins
are created only if missing, the admin is reused if a crashed start created it,
and the `installed` marker is written last, by compare-and-swap.
"""

from __future__ import annotations

import msgspec

from kvlake.auth import keys
from kvlake.auth.policies import BUILTIN_GROUPS, BUILTIN_POLICIES
from kvlake.auth.store import AuthStore
from kvlake.config import InstallationSettings
from kvlake.errors import ConflictError, NotFoundError, PreconditionFailedError
from kvlake.kv import get_or_none

ADMINS_GROUP = "Admins"
DEFAULT_ADMIN = "admin"


class Installation(msgspec.Struct, frozen=True, kw_only=True):
    """Who the first admin is; `secret` is empty when it came from the environment."""

    user_name: str
    access_key_id: str
    secret: str


def ensure_builtins(store: AuthStore) -> None:
    """Create lakeFS's built-in policies and groups where missing (attachments re-made)."""
    for policy_id, statements in BUILTIN_POLICIES.items():
        try:
            store.create_policy(policy_id, statements)
        except ConflictError:
            pass  # created by an earlier start; an admin may have edited it: keep theirs
    for group_id, policy_ids in BUILTIN_GROUPS.items():
        try:
            store.create_group(group_id, description=f"built-in {group_id} group")
        except ConflictError:
            continue  # exists: its attachments are an admin's business now
        for policy_id in policy_ids:
            store.attach_to_group(group_id, policy_id)


def is_installed(store: AuthStore) -> bool:
    return get_or_none(store.kv, keys.META, keys.INSTALLED) is not None


def install(
    store: AuthStore, *, user_name: str, access_key_id: str = "", secret: str = ""
) -> Installation:
    """Create the first admin (in Admins) with credentials, then mark the installation made.

    Raises:
        ConflictError: already installed.
    """
    if is_installed(store):
        raise ConflictError("kvlake is already set up; log in with the admin's access key")
    ensure_builtins(store)
    try:
        store.create_user(user_name)
    except ConflictError:
        pass  # an earlier start crashed after creating it: finish its job
    store.add_member(ADMINS_GROUP, user_name)
    try:
        credential = store.get_credential(access_key_id) if access_key_id else None
    except NotFoundError:
        credential = None
    if credential is None or credential.user_id != user_name:
        credential, secret = store.create_credentials(
            user_name, access_key_id=access_key_id, secret=secret
        )
    try:
        store.kv.set_if(keys.META, keys.INSTALLED, user_name.encode(), None)
    except PreconditionFailedError:
        pass  # a racing process finished first; these credentials are valid all the same
    return Installation(user_name=user_name, access_key_id=credential.access_key_id, secret=secret)


def ensure_installation(store: AuthStore, wanted: InstallationSettings) -> Installation | None:
    """Install on first start; returns what was created, or None if already installed.

    The returned secret is empty when the keys came from the settings (the
    operator knows them), so callers print a secret only when it is new.
    """
    ensure_builtins(store)
    if is_installed(store):
        return None
    made = install(
        store,
        user_name=wanted.user_name or DEFAULT_ADMIN,
        access_key_id=wanted.access_key_id,
        secret=wanted.secret_access_key,
    )
    if wanted.secret_access_key:
        return msgspec.structs.replace(made, secret="")
    return made


def grant_admin(
    store: AuthStore, *, user_name: str, access_key_id: str = "", secret: str = ""
) -> Installation:
    """`kvlake superuser`: make `user_name` an admin with new credentials, returned once.

    Creates the user if missing, adds it to Admins and gives it a new access key (its
    other keys stay valid), so an operator who lost every admin key regains access from
    the stores. On a store not yet installed it is the installation itself.

    Raises:
        ConflictError: `access_key_id` is taken.
    """
    if not is_installed(store):
        return install(store, user_name=user_name, access_key_id=access_key_id, secret=secret)
    ensure_builtins(store)
    try:
        store.create_user(user_name)
    except ConflictError:
        pass  # an existing user: re-keyed, and made an admin if it was not one
    store.add_member(ADMINS_GROUP, user_name)
    credential, secret = store.create_credentials(
        user_name, access_key_id=access_key_id, secret=secret
    )
    return Installation(user_name=user_name, access_key_id=credential.access_key_id, secret=secret)
