"""The operations layer's KV key schema: the only place that spells its partitions and keys.

| partition | key | value |
|---|---|---|
| `operations` | `op/<operation id>` | the operation record: options, checkpoint, counters |
| `operations` | `live-index` | empty: every record older than it has its live key |
| `operations_live` | `<operation id>` | empty: the operation is not finished, or not cleaned |
| `operations_batches/<operation id>` | `<batch number, 10 digits>` | one work batch: paths |
| `operations_failures/<operation id>` | `<object path>` | why that path failed or was skipped |
| `locks/<instance uid>` | `<object path>` | an explicit write lock on the path |
| `locks/<instance uid>` | `<object path>\\0<upload uid>` | an upload's implicit write lock |
| `delete_locks/<instance uid>` | `<operation id>` | a bulk delete's lock on its path prefix |
| `upload_leases` | `<holder uid>` | a server process's upload lease: its uploads in flight |

Operation ids and instance uids are `ids.new_uid()` (fixed width, time-sortable),
so `op/` keys list operations oldest first. `operations_live` indexes the records
a runner must still visit, in a partition of its own so that its scan never reads
on into the finished records a runner's idle pass must not read.
Object paths hold no NUL (graveler refuses them), so `<path>\\0` separates an
upload's lock from the path's explicit lock and sorts right after it: a range scan
over a batch's paths sees both.
Batch numbers are zero-padded so batches scan in order.
"""

from __future__ import annotations

from typing import Final

from kvlake import ids
from kvlake.errors import InvalidInputError, OperationNotFoundError

OPERATIONS: Final = b"operations"
_OP_PREFIX: Final = b"op/"
LIVE: Final = b"operations_live"
LIVE_INDEX_BUILT: Final = b"live-index"
_BATCHES_PREFIX: Final = b"operations_batches/"
_FAILURES_PREFIX: Final = b"operations_failures/"
_LOCKS_PREFIX: Final = b"locks/"
_DELETE_LOCKS_PREFIX: Final = b"delete_locks/"
BATCH_WIDTH: Final = 10
UPLOAD_SEPARATOR: Final = b"\0"
UPLOAD_LEASES: Final = b"upload_leases"


def not_found(operation_id: str) -> OperationNotFoundError:
    """The one answer for an id that is unknown, malformed, or not the caller's to see."""
    return OperationNotFoundError(
        f"operation {operation_id!r} not found; list operations with `kvlake operations list`"
        " (GET /api/v1/operations)"
    )


def check_operation_id(operation_id: str) -> str:
    """An operation id as given by a client; unknown shapes are simply not found."""
    if not ids.is_uid(operation_id):
        raise not_found(operation_id)
    return operation_id


def operation_key(operation_id: str) -> bytes:
    return _OP_PREFIX + check_operation_id(operation_id).encode()


def operation_prefix() -> bytes:
    """Where a scan of every operation record starts (stop at the first key without it)."""
    return _OP_PREFIX


def is_operation_key(key: bytes) -> bool:
    return key.startswith(_OP_PREFIX)


def live_key(operation_id: str) -> bytes:
    """The key of an operation in the `LIVE` partition."""
    return check_operation_id(operation_id).encode()


def batches_partition(operation_id: str) -> bytes:
    return _BATCHES_PREFIX + check_operation_id(operation_id).encode()


def batch_key(number: int) -> bytes:
    if not 0 <= number < 10**BATCH_WIDTH:
        raise InvalidInputError(f"batch number {number} is out of range")
    return b"%0*d" % (BATCH_WIDTH, number)


def failures_partition(operation_id: str) -> bytes:
    return _FAILURES_PREFIX + check_operation_id(operation_id).encode()


def locks_partition(instance_uid: str) -> bytes:
    return _LOCKS_PREFIX + instance_uid.encode()


def delete_locks_partition(instance_uid: str) -> bytes:
    return _DELETE_LOCKS_PREFIX + instance_uid.encode()


def upload_lease_key(holder: str) -> bytes:
    return holder.encode()


def lock_key(path: str) -> bytes:
    return path.encode()


def upload_lock_key(path: str, upload_uid: str) -> bytes:
    return path.encode() + UPLOAD_SEPARATOR + upload_uid.encode()


def path_of_lock_key(key: bytes) -> str:
    """The object path a lock key (explicit or an upload's) locks."""
    return key.split(UPLOAD_SEPARATOR, 1)[0].decode()


def lock_range_end(last_path: str) -> bytes:
    """A key past every lock of paths <= `last_path` (uploads' locks included)."""
    return last_path.encode() + UPLOAD_SEPARATOR + b"\xff"
