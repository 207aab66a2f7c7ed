"""Everything a request handler uses, opened once per server process from the settings.

The services hold connections and immutable caches only (committed ranges,
compiled patterns); every mutable fact is read from the KV store, so any number
of processes over one store behave as one server.
"""

from __future__ import annotations

import logging
import threading
from typing import Final

from kvlake.auth import (
    Authenticator,
    AuthStore,
    LoginLimiter,
    ServerKey,
    ensure_installation,
    load_master_key,
)
from kvlake.auth.installation import Installation
from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.catalog import Catalog
from kvlake.catalog.records import from_value
from kvlake.config import Settings
from kvlake.errors import KvlakeError
from kvlake.graveler.cleaner import Cleaner
from kvlake.graveler.committed import CommittedManager
from kvlake.graveler.graveler import Graveler
from kvlake.kv import Store, open_store

log = logging.getLogger(__name__)

CLEANER_INTERVAL: Final = 10.0


class Services:
    """The stores and engines of one server process. Close it to release connections."""

    def __init__(self, settings: Settings, store: Store, blockstore: BlockStore) -> None:
        self.settings = settings
        self.store = store
        self.blockstore = blockstore
        self.graveler = Graveler(
            store,
            CommittedManager(blockstore),
            check_namespace=blockstore.check_namespace,
            value_size=lambda value: from_value("", value).size,
            blockstore=blockstore,
        )
        self.catalog = Catalog(self.graveler, blockstore)
        master = load_master_key(settings.auth.encrypt_secret_key, settings.data_dir)
        self.auth = AuthStore(store, ServerKey(master))
        self.authenticator = Authenticator(self.auth, LoginLimiter(store))
        self._stop = threading.Event()
        self._cleaner: threading.Thread | None = None

    @classmethod
    def open(cls, settings: Settings) -> Services:
        store = open_store(settings.kv_url)
        try:
            blockstore = open_blockstore(settings.blockstore_url)
        except BaseException:
            store.close()
            raise
        try:
            services = cls(settings, store, blockstore)
            services.auth.check_server_key()
        except BaseException:
            blockstore.close()
            store.close()
            raise
        return services

    def install(self) -> Installation | None:
        """Create built-ins and the first admin on first start (see kvlake.auth.installation)."""
        return ensure_installation(self.auth, self.settings.installation)

    def start_cleaner(self, interval: float = CLEANER_INTERVAL) -> None:
        """Run cleaner passes in a daemon thread until `close`."""
        self._cleaner = threading.Thread(
            target=_run_cleaner,
            args=(Cleaner(self.graveler), self._stop, interval),
            name="kvlake-cleaner",
            daemon=True,
        )
        self._cleaner.start()

    def close(self) -> None:
        """Stop the cleaner (after its current pass), then close the stores."""
        self._stop.set()
        if self._cleaner is not None:
            self._cleaner.join()
        self.blockstore.close()
        self.store.close()


def _run_cleaner(cleaner: Cleaner, stop: threading.Event, interval: float) -> None:
    """Cleaner passes until `stop`; a pass that fails (store down) is retried, not fatal."""
    while not stop.is_set():
        try:
            cleaner.run(stop, interval=interval)
        except KvlakeError as exc:
            log.warning("cleaner pass failed: %s; retrying in %.0f s", exc, interval)
            stop.wait(interval)
