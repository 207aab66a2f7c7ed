"""The blockstore layer: immutable blobs in storage namespaces, adapters chosen by URL."""

from kvlake.blockstore.chunks import ChunkReader
from kvlake.blockstore.listing import BlobInfo
from kvlake.blockstore.registry import open_blockstore, register_blockstore
from kvlake.blockstore.store import (
    MAX_NAMESPACE_BYTES,
    MAX_NAMESPACE_SEGMENT_BYTES,
    MAX_PARALLEL_LISTINGS,
    MAX_PARTS,
    MAX_PRESIGN_SECONDS,
    READ_CHUNK,
    BlockStore,
    check_key,
)

__all__ = [
    "MAX_NAMESPACE_BYTES",
    "MAX_NAMESPACE_SEGMENT_BYTES",
    "MAX_PARALLEL_LISTINGS",
    "MAX_PARTS",
    "MAX_PRESIGN_SECONDS",
    "READ_CHUNK",
    "BlobInfo",
    "BlockStore",
    "ChunkReader",
    "check_key",
    "open_blockstore",
    "register_blockstore",
]
