"""The deletion log's KV key schema: the only place that spells its partitions and keys.

Every name is built so that no two different inputs give the same bytes:
partition numbers are decimal with no sign, due times are `ids.due_key`'s
fixed width of 13 digits (milliseconds, clamped to the epoch .. the year 2286)
and come first, instance uids have the fixed width of `ids.UID_LENGTH` (26),
and repository names cannot contain `/`. Nothing outside this module joins a
partition or key by hand.

| partition | key | value |
|---|---|---|
| `deletion/<n>` | `<due ms, 13 digits>/<record id>` | a pending delete (or a batch of them) |
| `deletion_dlq` | `<record id>` | a dead letter: the record and why it stopped |

A batch record's members are read as records with ids `<batch id>.<index>`.
| `deletion_leases` | `lease/<n>` | who works on partition n until when, and its counters |
| `deletion_leases` | `partitions` | the most partitions ever used, so none is forgotten |
| `deletion_shared` | `<instance uid>/<address>` | an address a copy made shared |
| `deletion_purges` | `<repository>/<instance uid>` | a purge request and its checkpoint |
| `deletion_purges` | `<repository>/<instance uid>/counts` | what workers did with its records |
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Final

from kvlake import ids
from kvlake.errors import InvalidInputError

PENDING_PREFIX: Final = b"deletion/"
DEAD_LETTERS: Final = b"deletion_dlq"
LEASES: Final = b"deletion_leases"
SHARED: Final = b"deletion_shared"
CLAIMS: Final = b"deletion_claims"
PURGES: Final = b"deletion_purges"

PARTITIONS_KEY: Final = b"partitions"
_LEASE_PREFIX: Final = b"lease/"


def pending_partition(number: int) -> bytes:
    """`deletion/<n>`: the log partition with that number."""
    if number < 0:
        raise InvalidInputError(f"deletion partition {number} is negative; use 0 or more")
    return PENDING_PREFIX + str(number).encode()


def partition_for(address: str, count: int) -> int:
    """The partition an address is logged in: a stable hash, so duplicates share one."""
    return zlib.crc32(address.encode()) % count


def pending_key(due: float, record_id: str) -> bytes:
    """`<due ms>/<id>`: ordered by due time, so a worker's scan stops at the first not due."""
    return ids.due_key(due) + b"/" + record_id.encode()


def due_of(key: bytes) -> float:
    """The due time (seconds) a pending key was written with."""
    return ids.due_of(key)


def dead_letter_key(record_id: str) -> bytes:
    return record_id.encode()


def lease_key(number: int) -> bytes:
    return _LEASE_PREFIX + str(number).encode()


def shared_key(instance_uid: str, address: str) -> bytes:
    """`<uid>/<address>`: unambiguous because the uid has a fixed width."""
    if len(instance_uid) != ids.UID_LENGTH:
        raise InvalidInputError(
            f"instance uid {instance_uid!r} is not {ids.UID_LENGTH} characters;"
            " pass the repository's instance_uid"
        )
    return instance_uid.encode() + b"/" + address.encode()


def shared_value(now: float) -> bytes:
    """A shared marker's value: when the copy was made (seconds, as text)."""
    return repr(now).encode()


def shared_since(raw: bytes) -> float:
    """When a shared marker was last written; markers from before times were kept count as 0."""
    try:
        return float(raw) if raw else 0.0
    except ValueError:
        return 0.0


def claim_key(instance_uid: str, address: str) -> bytes:
    """A worker's claim on an address it is about to delete: keyed as `shared_key`."""
    return shared_key(instance_uid, address)


def purge_key(repository: str, instance_uid: str) -> bytes:
    """`<name>/<uid>`: repository names cannot contain `/`."""
    return repository.encode() + b"/" + instance_uid.encode()


def purge_counts_key(repository: str, instance_uid: str) -> bytes:
    """`<name>/<uid>/counts`: the fixed-width uid keeps it apart from every request key."""
    return purge_key(repository, instance_uid) + b"/counts"


def new_record_id() -> str:
    """A random, time-sortable id, the same shape as graveler's uids."""
    return ids.new_uid()


def member_record_id(batch_id: str, index: int) -> str:
    """The id of member `index` of batch record `batch_id`: `<batch id>.<index>`. No other
    id has a dot (they are uids), so it equals no record's but this member's."""
    return f"{batch_id}.{index}"


def stable_record_id(*parts: str | bytes) -> str:
    """An id derived from `parts`, so logging the same intent twice writes one key.

    Parts are length-prefixed before hashing, so ("ab", "c") and ("a", "bc") differ.
    """
    digest = hashlib.blake2b(digest_size=17)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return ids.encode_uid(int.from_bytes(digest.digest(), "big") >> 6)  # 136 bits to 130
