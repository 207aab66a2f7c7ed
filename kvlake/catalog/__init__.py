"""The catalog layer: objects (paths, physical addresses, checksums, user metadata)."""

from kvlake.catalog.catalog import (
    DEFAULT_CONTENT_TYPE,
    MAX_DELETE_MANY,
    Catalog,
    describe_entry,
    entry_ref,
)
from kvlake.catalog.links import Links, new_address, relative_address
from kvlake.catalog.listing import MAX_AMOUNT
from kvlake.catalog.records import CommonPrefix, ListingPage, ObjectEntry, ObjectStat

__all__ = [
    "DEFAULT_CONTENT_TYPE",
    "MAX_AMOUNT",
    "MAX_DELETE_MANY",
    "Catalog",
    "CommonPrefix",
    "Links",
    "ListingPage",
    "ObjectEntry",
    "ObjectStat",
    "describe_entry",
    "entry_ref",
    "new_address",
    "relative_address",
]
