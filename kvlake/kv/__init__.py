"""The KV layer: one narrow store interface and its drivers, chosen by URL."""

from kvlake.kv.counting import CountingStore
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

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "MUST_EXIST",
    "CountingStore",
    "KeyValue",
    "MeteredStore",
    "Observer",
    "Predicate",
    "Scan",
    "Store",
    "open_store",
    "register_store",
    "url_scheme",
]
