"""The catalog layer: objects (paths, physical addresses, checksums, user metadata)."""

from kvlake.catalog.catalog import (
    MAX_DATA_HOURS,
    MAX_DELETE_MANY,
    Catalog,
    data_prefixes,
    entry_ref,
    new_address,
)
from kvlake.catalog.links import LINK_SECONDS, PhysicalLinks, link_key
from kvlake.catalog.listing import MAX_AMOUNT
from kvlake.catalog.records import CommonPrefix, ListingPage, ObjectEntry, ObjectStat

__all__ = [
    "LINK_SECONDS",
    "MAX_AMOUNT",
    "MAX_DATA_HOURS",
    "MAX_DELETE_MANY",
    "Catalog",
    "CommonPrefix",
    "ListingPage",
    "ObjectEntry",
    "ObjectStat",
    "PhysicalLinks",
    "data_prefixes",
    "entry_ref",
    "link_key",
    "new_address",
]
