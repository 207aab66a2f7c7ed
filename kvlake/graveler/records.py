"""The records graveler keeps in the KV store, as frozen msgspec structs.

Values are opaque to graveler: the catalog encodes an object's metadata into
`data`, and an identity hash over everything except the physical address, so
that two writes of the same content compare equal in diffs, merges and retries.
Records are encoded as MessagePack; `encode`/`decode_*` are the only codecs.
"""

from __future__ import annotations

from typing import Literal

import msgspec

RepositoryState = Literal["initial", "active", "deleting", "deleted"]


class Value(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """What graveler stores under a key: an identity for comparisons and opaque data."""

    identity: bytes
    data: bytes


class Repository(msgspec.Struct, frozen=True, kw_only=True):
    """A repository record, under `repos/<name>` in the `graveler` partition.

    `instance_uid` is new for every creation, so a repository created again under
    an old name reads a different instance partition and sees nothing of the old.
    A `deleted` record is a tombstone: the name is free, and creating it again
    replaces the tombstone with compare-and-swap (no unguarded delete can race a
    new creation).
    """

    name: str
    storage_namespace: str
    default_branch: str
    creation_date: float
    state: RepositoryState
    instance_uid: str
    state_changed: float = 0.0


class Branch(msgspec.Struct, frozen=True, kw_only=True):
    """A branch: its commit, the staging token writers use, and tokens being committed.

    `sealed_tokens` are newest first; each is a staging partition whose writes
    are not yet in `commit_id` but are visible to readers.
    """

    commit_id: str
    staging_token: str
    sealed_tokens: tuple[str, ...] = ()
    hidden: bool = False


class Commit(msgspec.Struct, frozen=True, kw_only=True):
    """An immutable commit; its id is the hash of these fields (see `commit_id`)."""

    committer: str
    message: str
    metarange_id: str
    creation_date: int
    parents: tuple[str, ...]
    metadata: dict[str, str]
    generation: int


class Tag(msgspec.Struct, frozen=True, kw_only=True):
    """A tag names one commit forever (until deleted)."""

    commit_id: str


class DeletedRepository(msgspec.Struct, frozen=True, kw_only=True):
    """A repository instance waiting for the cleaner (partition `graveler_deleted`)."""

    name: str
    instance_uid: str
    storage_namespace: str


class DroppedToken(msgspec.Struct, frozen=True, kw_only=True):
    """A staging partition no branch references any more, to drop once due."""

    repository: str
    instance_uid: str
    token: str


_encoder = msgspec.msgpack.Encoder()
encode = _encoder.encode

decode_value = msgspec.msgpack.Decoder(Value).decode
decode_repository = msgspec.msgpack.Decoder(Repository).decode
decode_branch = msgspec.msgpack.Decoder(Branch).decode
decode_commit = msgspec.msgpack.Decoder(Commit).decode
decode_tag = msgspec.msgpack.Decoder(Tag).decode
decode_deleted_repository = msgspec.msgpack.Decoder(DeletedRepository).decode
decode_dropped_token = msgspec.msgpack.Decoder(DroppedToken).decode
