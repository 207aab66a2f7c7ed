"""The records the deletion log keeps in the KV store, as frozen msgspec structs.

A `PendingDelete` carries everything a worker needs to decide on its own,
long after the operation that wrote it: which blob, in which storage
namespace, owned by which repository instance, why it lost a reference, and
where that reference was (staging token and path), so the in-use check can
look there again. Records are MessagePack; pending ones are encoded as arrays
(no field names) because a log may hold millions of them.

A batch of tombstones (a bulk delete's) logs its blobs as one record with
`members`: one KV row per thousand blobs instead of one each, which was a
third of a staged-only bulk delete's time (issue 26). The log reads it back
as one record per member (`PendingDelete.expand`), so workers, status and
dead letters never see a batch.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

import msgspec

from kvlake.deletion.keys import member_record_id

Origin = Literal[
    "overwritten_staged",
    "deleted_staged",
    "dropped_staging_token",
    "purged_repository",
    "garbage_collection",
    "abandoned_upload",
    "unlinked_upload",
]
"""Why a blob lost a reference; each origin has its own in-use check (see checks.py)."""

ORIGINS: Final[tuple[Origin, ...]] = get_args(Origin)

STAGING_ORIGINS: Final = frozenset(
    {
        "overwritten_staged",
        "deleted_staged",
        "dropped_staging_token",
        "abandoned_upload",
        "unlinked_upload",
    }
)
"""Origins whose blob was only ever staged by that path; committed blobs are GC's."""


class Member(msgspec.Struct, frozen=True, array_like=True):
    """One blob of a batch record: what differs between its members."""

    address: str
    path: bytes
    since: float


class PendingDelete(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One blob to delete once nothing references it.

    `staging_token` and `path` say where the reference was (the in-use check
    looks there, and at the commits that consumed that token); GC and purge
    records have none. `since` is the entry's mtime (0 when unknown): the check
    no longer walks history from it, and it stays so that records already
    stored (array-encoded) still decode and dead letters show it.

    With `members` the record is a batch: each member is a blob of its own,
    sharing every other field; `address` is the first member's (the partition
    it is logged in). Last, so records written before batches existed decode.
    """

    id: str
    address: str
    storage_namespace: str
    repository: str
    instance_uid: str
    origin: Origin
    check_in_use: bool
    not_before: float
    created: float
    attempts: int = 0
    staging_token: str = ""
    path: bytes = b""
    since: float = 0.0
    properties: dict[str, str] = {}
    last_error: str = ""
    members: list[Member] = []

    def expand(self) -> list[PendingDelete]:
        """The records this one stands for: itself, or one per member of a batch.

        A member's id derives from the batch's and its place in it, so reading the
        batch twice (a worker retrying it after a crash) names each member the same.
        """
        if not self.members:
            return [self]
        replace = msgspec.structs.replace
        return [
            replace(
                self,
                id=member_record_id(self.id, index),
                address=member.address,
                path=member.path,
                since=member.since,
                members=[],
            )
            for index, member in enumerate(self.members)
        ]


class DeadLetter(msgspec.Struct, frozen=True, kw_only=True):
    """A record no worker will retry: too many failures, or bad input. Requeue or drop it.

    `record` is None when the stored bytes could not be decoded; `raw` keeps them.
    """

    id: str
    record: PendingDelete | None
    reason: str
    dead_lettered: float
    partition: int
    raw: bytes = b""


class Lease(msgspec.Struct, frozen=True, kw_only=True):
    """Who works on a log partition until when, and what workers there have done so far.

    The counters ride on the lease because only its holder writes it: they
    never need a second compare-and-swap, and they never go backwards.
    """

    owner: str
    expires: float
    deleted: int = 0
    retried: int = 0
    dead_lettered: int = 0
    kept: int = 0


PurgeState = Literal["requested", "logged"]


class PurgeRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A repository instance whose namespace is deleted once the cleaner removed its metadata.

    `last_key` checkpoints the namespace listing, so a crashed logging pass resumes.
    What workers did with its records is counted apart, in `PurgeCounts`, so
    their updates never race the checkpoints.
    """

    repository: str
    instance_uid: str
    storage_namespace: str
    requested: float
    state: PurgeState = "requested"
    logged: int = 0
    last_key: str = ""
    logged_at: float = 0.0


class PurgeCounts(msgspec.Struct, frozen=True, kw_only=True):
    """What workers did with a purge's records."""

    deleted: int = 0
    dead_lettered: int = 0


_encoder = msgspec.msgpack.Encoder()
encode = _encoder.encode

decode_pending = msgspec.msgpack.Decoder(PendingDelete).decode
decode_dead_letter = msgspec.msgpack.Decoder(DeadLetter).decode
decode_lease = msgspec.msgpack.Decoder(Lease).decode
decode_purge = msgspec.msgpack.Decoder(PurgeRequest).decode
decode_purge_counts = msgspec.msgpack.Decoder(PurgeCounts).decode
