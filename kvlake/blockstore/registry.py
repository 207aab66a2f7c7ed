"""Choose a blockstore adapter by URL scheme, importing it only when first used.

Adapters are named by dotted path so that a cloud SDK loads only for its own
scheme. Nothing registers at import time; tests and plugins add schemes with
`register_blockstore`, which refuses a scheme that is already taken, so one
scheme always means one adapter.
"""

from __future__ import annotations

import importlib
from typing import Protocol, cast

from kvlake.blockstore.store import BlockStore
from kvlake.errors import ConfigError

_BLOCKSTORES: dict[str, str] = {
    "local": "kvlake.blockstore.local:LocalBlockStore",
    "mem": "kvlake.blockstore.memory:MemoryBlockStore",
    "s3": "kvlake.blockstore.s3:S3BlockStore",
}


class _BlockStoreClass(Protocol):
    def from_url(self, url: str) -> BlockStore: ...


def _scheme(url: str) -> str:
    """The scheme of `url`, never the rest of it (which may carry a secret)."""
    return url.split("://", 1)[0] if "://" in url else ""


def open_blockstore(url: str) -> BlockStore:
    """Open the blockstore a URL names, e.g. `local:///var/lib/kvlake/data` or `mem://`.

    The URL picks the adapter and its configuration (for `local`, the root
    folder); the storage namespaces it then serves use the same scheme.

    Raises:
        ConfigError: the scheme is unknown, its adapter cannot be imported, or the
            adapter rejects the URL (for example an unwritable root folder).
    """
    scheme = _scheme(url)
    if scheme not in _BLOCKSTORES:
        known = ", ".join(f"{s}://" for s in sorted(_BLOCKSTORES))
        raise ConfigError(f"KVLAKE_BLOCKSTORE_URL has scheme {scheme!r}; use one of {known}")
    dotted_path = _BLOCKSTORES[scheme]
    module_name, _, class_name = dotted_path.partition(":")
    try:
        adapter = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"KVLAKE_BLOCKSTORE_URL scheme {scheme!r} is registered to {dotted_path!r}, which"
            f" cannot be imported ({exc}); install its package or register a valid path"
        ) from exc
    return cast(_BlockStoreClass, adapter).from_url(url)


def register_blockstore(scheme: str, dotted_path: str) -> None:
    """Make `open_blockstore` accept `scheme://` URLs, opened by `module:Class.from_url`.

    Raises:
        ConfigError: the scheme is taken or invalid, or the path lacks `module:Class`.
    """
    if scheme in _BLOCKSTORES:
        raise ConfigError(
            f"blockstore scheme {scheme!r} is already registered to {_BLOCKSTORES[scheme]};"
            " choose another scheme"
        )
    if not scheme or "://" in scheme or ":" in scheme:
        raise ConfigError(f"blockstore scheme {scheme!r} is invalid; pass a name like 's3'")
    module_name, _, class_name = dotted_path.partition(":")
    if not module_name or not class_name:
        raise ConfigError(
            f"blockstore adapter path {dotted_path!r} must look like 'package.module:Class'"
        )
    _BLOCKSTORES[scheme] = dotted_path
