"""The catalog layer: objects (paths, physical addresses, checksums, user metadata)."""

from kvlake.catalog.catalog import (
    MAX_DATA_HOURS,
    MAX_DELETE_MANY,
    Catalog,
    data_prefixes,
    entry_ref,
    new_address,
)
from kvlake.catalog.imports import IMPORT_SCHEMES, Importer, ImportJob, ImportSource
from kvlake.catalog.links import LINK_SECONDS, PhysicalLinks, link_key
from kvlake.catalog.listing import MAX_AMOUNT
from kvlake.catalog.records import (
    CommonPrefix,
    ListingPage,
    ObjectEntry,
    ObjectStat,
    blob_location,
    is_external,
)

__all__ = [
    "IMPORT_SCHEMES",
    "LINK_SECONDS",
    "MAX_AMOUNT",
    "MAX_DATA_HOURS",
    "MAX_DELETE_MANY",
    "Catalog",
    "CommonPrefix",
    "ImportJob",
    "ImportSource",
    "Importer",
    "ListingPage",
    "ObjectEntry",
    "ObjectStat",
    "PhysicalLinks",
    "blob_location",
    "data_prefixes",
    "entry_ref",
    "is_external",
    "link_key",
    "new_address",
]
