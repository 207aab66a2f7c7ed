"""A store's identity: a random id written into the store once, read by whoever opens it.

Processes that are handed the same settings must reach the same store: a Spark task
opens the lake from the settings its job's driver passed, and a relative SQLite path,
another working folder or another database in a DSN would silently give it a different,
perhaps empty, store. The driver sends the identity of the store it uses beside the
settings, and the task refuses a store whose identity differs (kvlake/pipelines/executors.py).
Written on first demand, never at open, so opening a store writes nothing. A migration
copies it, so the migrated store is the same store to a job.
"""

from __future__ import annotations

import uuid
from typing import Final

from kvlake.errors import PreconditionFailedError
from kvlake.kv.store import Store
from kvlake.kv.updates import get_or_none

PARTITION: Final = b"kvlake_meta"
KEY: Final = b"store-id"


def read_store_identity(store: Store) -> str:
    """The store's identity, or "" if it has none yet (it was never asked for)."""
    found = get_or_none(store, PARTITION, KEY)
    return found[0].decode() if found is not None else ""


def store_identity(store: Store) -> str:
    """The store's identity, written first if it has none (the first writer wins)."""
    identity = read_store_identity(store)
    if identity:
        return identity
    identity = uuid.uuid4().hex
    try:
        store.set_if(PARTITION, KEY, identity.encode(), None)
    except PreconditionFailedError:  # another process wrote one first: theirs holds
        return read_store_identity(store)
    return identity
