"""Everything a request handler uses, opened once per server process from the settings.

The services hold connections and immutable caches only (committed ranges,
compiled patterns); every mutable fact is read from the KV store, so any number
of processes over one store behave as one server.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
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
from kvlake.config import Settings
from kvlake.errors import KvlakeError
from kvlake.lake import Lake

log = logging.getLogger(__name__)

CLEANER_INTERVAL: Final = 10.0


class Services:
    """The stores and engines of one server process. Close it to release connections."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self.settings = lake.settings
        self.store = lake.store
        self.blockstore = lake.blockstore
        self.graveler = lake.graveler
        self.catalog = lake.catalog
        master = load_master_key(self.settings.auth.encrypt_secret_key, self.settings.data_dir)
        self.auth = AuthStore(self.store, ServerKey(master))
        self.authenticator = Authenticator(
            self.auth, LoginLimiter(self.store), cache_ttl=self.settings.auth.cache_ttl
        )
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @classmethod
    def open(cls, settings: Settings) -> Services:
        lake = Lake.open(settings)
        try:
            services = cls(lake)
            services.auth.check_server_key()
        except BaseException:
            lake.close()
            raise
        return services

    def install(self) -> Installation | None:
        """Create built-ins and the first admin on first start (see kvlake.auth.installation)."""
        return ensure_installation(self.auth, self.settings.installation)

    def start_background_jobs(self, interval: float = CLEANER_INTERVAL) -> None:
        """Run cleaner passes and (if enabled) deletion workers in daemon threads until `close`."""
        jobs: list[tuple[str, Callable[[threading.Event, float], object]]] = [
            ("kvlake-cleaner", self._run_cleaner)
        ]
        if self.settings.deletion.enabled:
            jobs.append(("kvlake-deletion", self._run_deletion_worker))
        for name, job in jobs:
            thread = threading.Thread(
                target=_keep_running, args=(name, job, self._stop, interval), name=name, daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _run_cleaner(self, stop: threading.Event, interval: float) -> None:
        self.lake.cleaner().run(stop, interval=interval)

    def _run_deletion_worker(self, stop: threading.Event, interval: float) -> None:
        self.lake.deletion_worker().run(stop, interval=interval)

    def close(self) -> None:
        """Stop the background jobs (after their current pass), then close the stores."""
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self.lake.close()


def _keep_running(
    name: str,
    job: Callable[[threading.Event, float], object],
    stop: threading.Event,
    interval: float,
) -> None:
    """Run a background job until `stop`; a pass that fails (store down) is retried, not fatal."""
    while not stop.is_set():
        try:
            job(stop, interval)
        except KvlakeError as exc:
            log.warning("%s pass failed: %s; retrying in %.0f s", name, exc, interval)
            stop.wait(interval)
