"""The catalog layer: objects (paths, physical addresses, checksums, user metadata)."""

from kvlake.catalog.catalog import MAX_DELETE_MANY, Catalog
from kvlake.catalog.direct import PhysicalLinks, UploadTarget
from kvlake.catalog.gcprepare import (
    GcPreparation,
    PreparedCommits,
    PreparedUncommitted,
    UncommittedMark,
    decode_mark,
    encode_mark,
)
from kvlake.catalog.import_listing import ImportSource, ImportUnit, split_sources, unit_entries
from kvlake.catalog.import_sources import check_outside_import_folders
from kvlake.catalog.imports import (
    IMPORT_SCHEMES,
    Importer,
    ImportJob,
    ImportStatus,
    PieceWriter,
)
from kvlake.catalog.layout import (
    DATA_FOLDER,
    HOUR_END,
    HOUR_FORMAT,
    HOUR_KEY_PATTERN,
    HOUR_START,
    MAX_DATA_HOURS,
    data_prefixes,
    hour_folder_end,
    new_address,
)
from kvlake.catalog.links import Links, relative_address
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
from kvlake.catalog.references import blob_key_in, describe_entry, entry_ref
from kvlake.catalog.serving import chunks, object_headers
from kvlake.catalog.tickets import LINK_SECONDS, link_key
from kvlake.catalog.uploads import DEFAULT_CONTENT_TYPE, UPLOAD_SECONDS

__all__ = [
    "DATA_FOLDER",
    "DEFAULT_CONTENT_TYPE",
    "HOUR_END",
    "HOUR_FORMAT",
    "HOUR_KEY_PATTERN",
    "HOUR_START",
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
    "UploadTarget",
    "blob_key_in",
    "blob_location",
    "check_outside_import_folders",
    "chunks",
    "data_prefixes",
    "decode_mark",
    "describe_entry",
    "encode_mark",
    "entry_ref",
    "hour_folder_end",
    "is_external",
    "link_key",
    "new_address",
    "object_headers",
    "physical_address",
    "relative_address",
    "split_sources",
    "unit_entries",
]
