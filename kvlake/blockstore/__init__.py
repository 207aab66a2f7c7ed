"""The blockstore layer: immutable blobs in storage namespaces, adapters chosen by URL."""

from kvlake.blockstore.registry import open_blockstore, register_blockstore
from kvlake.blockstore.store import READ_CHUNK, BlockStore, check_key

__all__ = [
    "READ_CHUNK",
    "BlockStore",
    "check_key",
    "open_blockstore",
    "register_blockstore",
]
