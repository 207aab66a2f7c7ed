"""The KV layer: one narrow store interface and its drivers, chosen by URL."""

from kvlake.kv.counting import CountingStore
from kvlake.kv.identity import read_store_identity, store_identity
from kvlake.kv.metered import MeteredStore, Observer
from kvlake.kv.registry import open_store, register_store, url_scheme
from kvlake.kv.store import (
    DEFAULT_BATCH_SIZE,
    MUST_EXIST,
    KeyValue,
    Predicate,
    Scan,
    Store,
)
from kvlake.kv.updates import MAX_TRIES, get_or_none, update

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "MAX_TRIES",
    "MUST_EXIST",
    "CountingStore",
    "KeyValue",
    "MeteredStore",
    "Observer",
    "Predicate",
    "Scan",
    "Store",
    "get_or_none",
    "open_store",
    "read_store_identity",
    "register_store",
    "store_identity",
    "update",
    "url_scheme",
]
