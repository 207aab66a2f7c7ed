"""The catalog layer: objects (paths, physical addresses, checksums, user metadata)."""

from kvlake.catalog.catalog import (
    MAX_DELETE_MANY,
    Catalog,
    describe_entry,
    entry_ref,
    new_address,
)
from kvlake.catalog.listing import MAX_AMOUNT
from kvlake.catalog.records import CommonPrefix, ListingPage, ObjectEntry, ObjectStat

__all__ = [
    "MAX_AMOUNT",
    "MAX_DELETE_MANY",
    "Catalog",
    "CommonPrefix",
    "ListingPage",
    "ObjectEntry",
    "ObjectStat",
    "describe_entry",
    "entry_ref",
    "new_address",
]
