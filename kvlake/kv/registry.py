"""Choose a KV driver by URL scheme, importing it only when first used.

Drivers are named by dotted path so that `psycopg` loads only for
`postgres://` URLs. Nothing registers at import time; tests and plugins add
schemes with `register_store`, which refuses a scheme that is already taken.
"""

from __future__ import annotations

import importlib
from typing import Protocol, cast

from kvlake.errors import ConfigError
from kvlake.kv.store import Store

_STORES: dict[str, str] = {
    "mem": "kvlake.kv.memory:MemoryStore",
    "postgres": "kvlake.kv.postgres:PostgresStore",
    "postgresql": "kvlake.kv.postgres:PostgresStore",
    "sqlite": "kvlake.kv.sqlite:SqliteStore",
}


class _StoreClass(Protocol):
    def from_url(self, url: str) -> Store: ...


def url_scheme(url: str) -> str:
    """The scheme of `url`, never the rest of it (which may carry a password)."""
    return url.split("://", 1)[0] if "://" in url else ""


def open_store(url: str) -> Store:
    """Open the store a URL names, e.g. `sqlite:///var/lib/kvlake/kv.db`.

    Raises:
        ConfigError: the scheme is unknown or the driver rejects the URL.
        UnavailableError: the backend cannot be reached.
    """
    scheme = url_scheme(url)
    if scheme not in _STORES:
        known = ", ".join(f"{s}://" for s in sorted(_STORES))
        raise ConfigError(f"KVLAKE_KV_URL has scheme {scheme!r}; use one of {known}")
    module_name, _, class_name = _STORES[scheme].partition(":")
    store_class = cast(_StoreClass, getattr(importlib.import_module(module_name), class_name))
    return store_class.from_url(url)


def register_store(scheme: str, dotted_path: str) -> None:
    """Make `open_store` accept `scheme://` URLs, opened by `module:Class.from_url`."""
    if scheme in _STORES:
        raise ConfigError(f"KV scheme {scheme!r} is already registered to {_STORES[scheme]}")
    if ":" not in dotted_path:
        raise ConfigError(f"KV driver path {dotted_path!r} must look like 'package.module:Class'")
    _STORES[scheme] = dotted_path
