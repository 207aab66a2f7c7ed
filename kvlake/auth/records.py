"""The records auth keeps in the KV store, as frozen msgspec structs (MessagePack).

A `Credential` holds the secret only encrypted with the server key: the KV never
sees a secret in plain text, yet the server can recover it (request signing
needs the secret itself, a hash would not do).
"""

from __future__ import annotations

from typing import Literal

import msgspec

Effect = Literal["allow", "deny"]


class User(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    creation_date: int
    friendly_name: str | None = None
    email: str | None = None
    uid: str = ""
    """Set at creation, never reused: tells a user from an earlier one with the same id
    (deleted, then created again). Empty for users created before it existed."""

    @property
    def principal(self) -> str:
        """Who owns what this user creates (operations, locks): the id and the creation
        uid, so a user created again with the same id owns none of the old one's things.
        `#` is in no user id (kvlake/auth/keys.py), so the id is what precedes it."""
        return f"{self.id}#{self.uid}" if self.uid else self.id


class Group(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    creation_date: int
    description: str | None = None


class Statement(msgspec.Struct, frozen=True, kw_only=True):
    """Allow or deny `action`s (wildcards `*` and `?`) on resources matching `resource`."""

    effect: Effect
    action: tuple[str, ...]
    resource: str


class Policy(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    creation_date: int
    statement: tuple[Statement, ...]
    acl: str = ""
    """The ACL level (Read, Write, Super, Admin) a group ACL policy was written from, or
    "" for a policy written as statements (kvlake/auth/acl.py)."""


class Credential(msgspec.Struct, frozen=True, kw_only=True):
    """An access key.

    `throttled_until` (unix seconds) says that some client address is being slowed down
    after failed logins with this key until then; only while it lies ahead does a login
    read that address's `LoginFailures` (so an unthrottled key costs no extra query).
    """

    access_key_id: str
    user_id: str
    encrypted_secret: bytes
    creation_date: int
    throttled_until: float = 0.0


class Attachment(msgspec.Struct, frozen=True, kw_only=True):
    """A membership or a policy attachment: the pair is the key, this records when."""

    creation_date: int


class LoginFailures(msgspec.Struct, frozen=True, kw_only=True):
    """Failed logins with one access key from one client address.

    `count` failures, the last at `last_failure`; no login from that address with
    that key is evaluated before `retry_after` (unix seconds).
    """

    count: int
    last_failure: float
    retry_after: float = 0.0


class RevokedSession(msgspec.Struct, frozen=True, kw_only=True):
    """A logged-out session token, refused until it would have expired anyway."""

    expiry: int


_encoder = msgspec.msgpack.Encoder()
encode = _encoder.encode

decode_user = msgspec.msgpack.Decoder(User).decode
decode_group = msgspec.msgpack.Decoder(Group).decode
decode_policy = msgspec.msgpack.Decoder(Policy).decode
decode_credential = msgspec.msgpack.Decoder(Credential).decode
decode_attachment = msgspec.msgpack.Decoder(Attachment).decode
decode_login_failures = msgspec.msgpack.Decoder(LoginFailures).decode
decode_revoked_session = msgspec.msgpack.Decoder(RevokedSession).decode
