"""The blockstore layer: immutable blobs in storage namespaces, adapters chosen by URL."""

from kvlake.blockstore.addresses import (
    StorageAddress,
    canonical_address,
    canonical_prefix,
    parse_address,
    parse_prefix,
    prefix_overlaps,
)
from kvlake.blockstore.chunks import ChunkReader
from kvlake.blockstore.delegating import DelegatingBlockStore
from kvlake.blockstore.listing import BlobInfo
from kvlake.blockstore.metered import BlobObserver, MeteredBlockStore
from kvlake.blockstore.registry import open_blockstore, register_blockstore
from kvlake.blockstore.store import BlockStore
from kvlake.blockstore.terms import (
    MAX_NAMESPACE_BYTES,
    MAX_NAMESPACE_SEGMENT_BYTES,
    MAX_PARALLEL_LISTINGS,
    MAX_PARTS,
    MAX_PRESIGN_SECONDS,
    MIN_PART_BYTES,
    READ_CHUNK,
    BlobHead,
    UploadedPart,
    blob_replaced,
    check_key,
    multipart_etag,
)
from kvlake.blockstore.throttle import observe_throttling

__all__ = [
    "MAX_NAMESPACE_BYTES",
    "MAX_NAMESPACE_SEGMENT_BYTES",
    "MAX_PARALLEL_LISTINGS",
    "MAX_PARTS",
    "MAX_PRESIGN_SECONDS",
    "MIN_PART_BYTES",
    "READ_CHUNK",
    "BlobHead",
    "BlobInfo",
    "BlobObserver",
    "BlockStore",
    "ChunkReader",
    "DelegatingBlockStore",
    "MeteredBlockStore",
    "StorageAddress",
    "UploadedPart",
    "blob_replaced",
    "canonical_address",
    "canonical_prefix",
    "check_key",
    "multipart_etag",
    "observe_throttling",
    "open_blockstore",
    "parse_address",
    "parse_prefix",
    "prefix_overlaps",
    "register_blockstore",
]
