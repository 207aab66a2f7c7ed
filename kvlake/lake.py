"""The assembled data lake: the one place that wires the layers together.

The server, the CLI, tools and tests all build the same graph: a graveler
whose writer flow logs replaced blobs (`StagingLogHooks`), a catalog that
marks copies shared, one `Purges`, a cleaner whose hooks log the blobs of
dropped staging tokens and purged namespaces, and workers that delete them.
Two hand-built copies drift (a graveler built without the hooks leaves blobs
unlogged), so everyone builds it here, and the lake runs its own background
jobs.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Final, Self

from kvlake import ids
from kvlake.actions import Actions
from kvlake.blockstore import BlobObserver, BlockStore, MeteredBlockStore, open_blockstore
from kvlake.catalog import Catalog, check_outside_import_folders, describe_entry, entry_ref
from kvlake.catalog.records import from_value
from kvlake.closing import Closing
from kvlake.config import Settings
from kvlake.deletion import (
    DeletionHooks,
    DeletionLog,
    DeletionWorker,
    Purges,
    StagingLogHooks,
)
from kvlake.errors import KvlakeError
from kvlake.graveler import TOKEN_DROP_DELAY, Cleaner, CommittedManager, Graveler
from kvlake.kv import MeteredStore, Observer, Store, open_store, store_identity
from kvlake.operations import BulkDeletes, EngineContext, Ledger, ObjectLocks, OperationRunner

log = logging.getLogger(__name__)

JOB_INTERVAL: Final = 10.0
"""Seconds between background passes of the cleaner and the deletion workers."""


class Lake(Closing):
    """Stores, engines and background jobs of one process. Close it to release them.

    `clock` and `token_drop_delay` exist for tests, which move time by hand.
    """

    def __init__(
        self,
        settings: Settings,
        store: Store,
        blockstore: BlockStore,
        *,
        clock: Callable[[], float] = time.time,
        token_drop_delay: float = TOKEN_DROP_DELAY,
    ) -> None:
        self.settings = settings
        self.store = store
        self.blockstore = blockstore
        self.clock = clock
        self.deletion_log = DeletionLog(store, settings.deletion, clock=clock)
        self.graveler = Graveler(
            store,
            CommittedManager(blockstore),
            check_namespace=self._check_namespace,
            clock=clock,
            token_drop_delay=token_drop_delay,
            value_size=lambda value: from_value("", value).size,
            blockstore=blockstore,
            staging_hooks=StagingLogHooks(self.deletion_log, entry_ref),
        )
        operations = settings.operations
        self.locks = ObjectLocks(store, clock=clock, upload_ttl=operations.upload_lock_ttl)
        self.ledger = Ledger(store)
        self.catalog = Catalog(
            self.graveler,
            blockstore,
            clock=clock,
            deletion=self.deletion_log,
            locks=self.locks,
            settings=settings,
            ledger=self.ledger,
        )
        self.actions = Actions(self.catalog, settings.actions, clock=clock)
        """Hooks of `_lakefs_actions/` files, run by graveler around its events, and their runs."""
        self.graveler.set_event_hooks(self.actions)
        self.purges = Purges(self.deletion_log, self.graveler, blockstore)
        self.bulk_deletes = BulkDeletes(
            self.graveler,
            self.ledger,
            default_engine=operations.engine,
            spark_threshold=operations.spark_threshold,
            clock=clock,
        )
        self.operations = OperationRunner(
            self.engine_context(), concurrency=settings.operations.concurrency
        )
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @functools.cached_property
    def store_id(self) -> str:
        """The KV store's identity (kvlake/kv/identity.py), which Spark jobs send their
        tasks so that a task refuses to work on any other store."""
        return store_identity(self.store)

    def _check_namespace(self, namespace: str) -> str:
        """A new repository's namespace: the blockstore's, and clear of the folders imports read."""
        normalised = self.blockstore.check_namespace(namespace)
        check_outside_import_folders(normalised, self.settings.imports.folders())
        return normalised

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        kv_observer: Observer | None = None,
        blob_observer: BlobObserver | None = None,
    ) -> Self:
        """Open the stores the settings name; `kv_observer` sees every KV driver call and
        `blob_observer` every blockstore adapter call (the server's metrics).
        Raises ConfigError or UnavailableError."""
        store = open_store(settings.kv_url)
        if kv_observer is not None:
            store = MeteredStore(store, kv_observer)
        try:
            blockstore = open_blockstore(settings.blockstore_url)
            if blob_observer is not None:
                blockstore = MeteredBlockStore(blockstore, blob_observer)
        except BaseException:
            store.close()
            raise
        try:
            return cls(settings, store, blockstore)
        except BaseException:
            blockstore.close()
            store.close()
            raise

    def cleaner(self) -> Cleaner:
        """A cleaner that logs the blobs of the staging tokens and namespaces it drops, and
        drops a deleted repository instance's action runs."""
        actions = self.actions
        return Cleaner(
            self.graveler,
            hooks=DeletionHooks(self.purges, entry_ref),
            instance_cleanups=(lambda entry: actions.drop_instance(entry.instance_uid),),
            sweep_slice=self.settings.cleaner.sweep_slice,
            tombstone_grace=self.settings.cleaner.tombstone_grace,
        )

    def deletion_worker(
        self, blockstore: BlockStore | None = None, *, owner: str | None = None
    ) -> DeletionWorker:
        """A worker of the deletion log (deleting through `blockstore` if given)."""
        return DeletionWorker(self.purges, entry_ref, blockstore=blockstore, owner=owner)

    def engine_context(self, *, owner: str | None = None) -> EngineContext:
        """What an operations engine works with; `owner` names its leases (default: one
        per process, so a restarted server waits out its predecessor's lease)."""
        return EngineContext(
            graveler=self.graveler,
            ledger=self.ledger,
            locks=self.locks,
            deletion=self.deletion_log if self.settings.deletion.enabled else None,
            describe=describe_entry,
            settings=self.settings.operations,
            owner=owner or f"{socket.gethostname()}:{os.getpid()}:{ids.new_uid()}",
            clock=self.clock,
            lake_settings=self.settings,
            lake=self,
        )

    # -- background jobs -------------------------------------------------------------

    def start_background_jobs(self, interval: float = JOB_INTERVAL) -> None:
        """Run cleaner passes and (if enabled) deletion workers in daemon threads until `close`."""
        # One cleaner and one worker for all passes: a pass retried after a failure keeps
        # the cleaner's last orphan sweep time instead of sweeping again at once.
        cleaner, worker = self.cleaner(), self.deletion_worker()
        jobs: list[tuple[str, Callable[[threading.Event, float], object]]] = [
            ("kvlake-cleaner", lambda stop, every: cleaner.run(stop, interval=every))
        ]
        if self.settings.deletion.enabled:
            jobs.append(("kvlake-deletion", lambda stop, every: worker.run(stop, interval=every)))
        if self.settings.actions.enabled:
            # Runs the post-event hooks a stopped process left in the queue (actions/queue.py).
            actions = self.actions
            jobs.append(
                ("kvlake-actions", lambda stop, every: actions.run_queue(stop, interval=every))
            )
        if self.settings.operations.enabled:
            # Resumes every unfinished operation after a restart (invariant 5).
            runner = self.operations
            jobs.append(("kvlake-operations", lambda stop, every: runner.run(stop, interval=every)))
        for name, job in jobs:
            thread = threading.Thread(
                target=keep_running, args=(name, job, self._stop, interval), name=name, daemon=True
            )
            thread.start()
            self._threads.append(thread)
        # Renewed in bulk for every upload of this process (kvlake/operations/leases.py);
        # without it, uploads renew it inline and a bulk delete waits for its expiry.
        self.locks.leases.start()

    def close(self) -> None:
        """Stop the background jobs (after their current pass), then close the stores."""
        self._stop.set()
        self.operations.wake()
        for thread in self._threads:
            thread.join()
        self.locks.leases.release()  # bulk deletes wait for this process no more
        self.blockstore.close()
        self.store.close()


def keep_running(
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
