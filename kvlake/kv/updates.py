"""Reading a record that may be absent, and read-modify-write under compare-and-swap.

Every multi-key protocol above the KV layer is built from single-key
compare-and-swap steps, and most of those steps have one shape: read the
record, work out its new value, write it only if nobody wrote in between, and
start over when somebody did. `update` is that loop, spelled once, with one
bound on retries and one error when the bound is reached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from kvlake.errors import KeyNotFoundError, PreconditionFailedError, TooManyTriesError
from kvlake.kv.store import Predicate, Store

MAX_TRIES: Final = 20
"""Lost races `update` tolerates before giving up: enough for bursts of writers to one
key; a caller that still loses is told to retry later rather than spin."""

_Written = TypeVar("_Written", bytes, bytes | None)
"""What `update` returns is what `change` may: bytes for a change that always writes."""


def get_or_none(store: Store, partition: bytes, key: bytes) -> tuple[bytes, Predicate] | None:
    """The value under `key` and its predicate for `set_if`, or None when there is none."""
    try:
        return store.get(partition, key)
    except KeyNotFoundError:
        return None


def update(
    store: Store,
    partition: bytes,
    key: bytes,
    change: Callable[[bytes | None], _Written],
    *,
    what: str,
    tries: int = MAX_TRIES,
) -> _Written:
    """Write `change(current)` under `key` unless another writer got there first; then
    call `change` again on that writer's value, up to `tries` times.

    `change` gets the current value (None when the key is absent) and returns the value
    to write, or None to leave the record as it is. It may raise to refuse the change.
    It runs once per attempt, so it must not act on anything but its return value.

    Returns:
        The value now under the key: the one written, or the current one when `change`
        left it as it was (None if absent). A `change` that always writes gets bytes
        back, typed so: decode them for what follows the write.

    Raises:
        TooManyTriesError: every attempt lost a race; `what` names the change in the
            message (as in "editing the metadata of repository 'r'").
    """
    for _ in range(tries):
        loaded = get_or_none(store, partition, key)
        current, predicate = loaded if loaded is not None else (None, None)
        wanted = change(current)
        if wanted is None:
            return current
        try:
            store.set_if(partition, key, wanted, predicate)
        except PreconditionFailedError:
            continue  # another writer landed first: apply the change to its value
        return wanted
    raise TooManyTriesError(f"{what} kept racing other writers; retry")
