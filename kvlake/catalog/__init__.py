"""The catalog layer: objects (paths, physical addresses, checksums, user metadata)."""

from kvlake.catalog.catalog import (
    DEFAULT_CONTENT_TYPE,
    MAX_DATA_HOURS,
    MAX_DELETE_MANY,
    UPLOAD_SECONDS,
    Catalog,
    blob_key_in,
    data_prefixes,
    describe_entry,
    entry_ref,
)
from kvlake.catalog.direct import LINK_SECONDS, PhysicalLinks, link_key
from kvlake.catalog.gcprepare import (
    GcPreparation,
    PreparedCommits,
    PreparedUncommitted,
    UncommittedMark,
    decode_mark,
    encode_mark,
)
from kvlake.catalog.import_listing import ImportSource, ImportUnit, split_sources, unit_entries
from kvlake.catalog.imports import (
    IMPORT_SCHEMES,
    Importer,
    ImportJob,
    ImportStatus,
    PieceWriter,
    check_outside_import_folders,
)
from kvlake.catalog.links import Links, new_address, relative_address
from kvlake.catalog.listing import MAX_AMOUNT
from kvlake.catalog.records import (
    CommonPrefix,
    ListingPage,
    ObjectEntry,
    ObjectStat,
    blob_location,
    is_external,
    physical_address,
)

__all__ = [
    "DEFAULT_CONTENT_TYPE",
    "IMPORT_SCHEMES",
    "LINK_SECONDS",
    "MAX_AMOUNT",
    "MAX_DATA_HOURS",
    "MAX_DELETE_MANY",
    "UPLOAD_SECONDS",
    "Catalog",
    "CommonPrefix",
    "GcPreparation",
    "ImportJob",
    "ImportSource",
    "ImportStatus",
    "ImportUnit",
    "Importer",
    "Links",
    "ListingPage",
    "ObjectEntry",
    "ObjectStat",
    "PhysicalLinks",
    "PieceWriter",
    "PreparedCommits",
    "PreparedUncommitted",
    "UncommittedMark",
    "blob_key_in",
    "blob_location",
    "check_outside_import_folders",
    "data_prefixes",
    "decode_mark",
    "describe_entry",
    "encode_mark",
    "entry_ref",
    "is_external",
    "link_key",
    "new_address",
    "physical_address",
    "relative_address",
    "split_sources",
    "unit_entries",
]
