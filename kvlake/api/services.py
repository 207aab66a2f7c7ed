"""Everything a request handler uses, opened once per server process from the settings.

The services hold connections and immutable caches only (committed ranges,
compiled patterns); every mutable fact is read from the KV store, so any number
of processes over one store behave as one server.
"""

from __future__ import annotations

import logging

from kvlake.api.metrics import blob_observer, count_throttled, kv_observer
from kvlake.auth import (
    Authenticator,
    AuthStore,
    LoginLimiter,
    ServerKey,
    ensure_installation,
    load_master_key,
)
from kvlake.auth.installation import Installation
from kvlake.blockstore import BlockStore, observe_throttling
from kvlake.catalog import Catalog, GcPreparation, PhysicalLinks, link_key
from kvlake.config import Settings
from kvlake.graveler import Graveler
from kvlake.kv import Store, url_scheme
from kvlake.lake import JOB_INTERVAL, Lake
from kvlake.pipelines.gc.runs import GcRuns

log = logging.getLogger(__name__)


class Services:
    """What handlers use: the lake (stores, engines, background jobs) and authentication."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self.settings = lake.settings
        self.gc_runs = GcRuns(lake)
        """Garbage collection runs started through the API (threads of this process)."""
        self.gc_preparation = GcPreparation(
            lake.graveler, lake.blockstore, page_size=self.settings.gc.uncommitted_page_size
        )
        """The commits and uncommitted files lakeFS's own GC client asks for."""
        master = load_master_key(self.settings.auth.encrypt_secret_key, self.settings.data_dir)
        self.auth = AuthStore(lake.store, ServerKey(master))
        self.links: PhysicalLinks = lake.catalog.direct_uploads(link_key(master))
        """Direct uploads, with addresses every process of the installation can verify."""
        self.authenticator = Authenticator(
            self.auth, LoginLimiter(lake.store), cache_ttl=self.settings.auth.cache_ttl
        )

    @classmethod
    def open(cls, settings: Settings) -> Services:
        observe_throttling(count_throttled)
        lake = Lake.open(
            settings,
            kv_observer=kv_observer(url_scheme(settings.kv_url)),
            blob_observer=blob_observer(url_scheme(settings.blockstore_url or "local://")),
        )
        try:
            services = cls(lake)
            services.auth.check_server_key()
            # A store written before namespaces had owners: claim the live ones' now.
            for problem in lake.graveler.adopt_namespaces():
                log.warning("storage namespace not adopted: %s", problem)
        except BaseException:
            lake.close()
            raise
        return services

    # The lake's parts, named as handlers use them (never copies: the lake owns them).
    @property
    def store(self) -> Store:
        return self.lake.store

    @property
    def blockstore(self) -> BlockStore:
        return self.lake.blockstore

    @property
    def graveler(self) -> Graveler:
        return self.lake.graveler

    @property
    def catalog(self) -> Catalog:
        return self.lake.catalog

    def install(self) -> Installation | None:
        """Create built-ins and the first admin on first start (see kvlake.auth.installation)."""
        return ensure_installation(self.auth, self.settings.installation)

    def start_background_jobs(self, interval: float = JOB_INTERVAL) -> None:
        """Run the lake's cleaner and deletion workers until `close`."""
        self.lake.start_background_jobs(interval)

    def close(self) -> None:
        """Stop the background jobs (after their current pass), then close the stores."""
        self.lake.close()
