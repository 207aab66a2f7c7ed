"""The assembled data lake: one place that wires the layers together from the settings.

The server, the CLI and tools must all build the same graph: a graveler whose
writer flow logs replaced blobs (`StagingLogHooks`), a catalog that marks
copies shared, a cleaner whose hooks log the blobs of dropped staging tokens,
and workers that delete them. Two hand-built copies drift (a graveler built
without the hooks leaves blobs unlogged), so both build it here.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from kvlake.blockstore import BlockStore, open_blockstore
from kvlake.catalog import Catalog, entry_ref
from kvlake.catalog.records import from_value
from kvlake.config import Settings
from kvlake.deletion import (
    DeletionHooks,
    DeletionLog,
    DeletionWorker,
    Purges,
    StagingLogHooks,
)
from kvlake.graveler import Cleaner, CommittedManager, Graveler
from kvlake.kv import Store, open_store


class Lake:
    """Stores, engines and background jobs of one process. Close it to release connections."""

    def __init__(self, settings: Settings, store: Store, blockstore: BlockStore) -> None:
        self.settings = settings
        self.store = store
        self.blockstore = blockstore
        self.deletion_log = DeletionLog(store, settings.deletion)
        self.graveler = Graveler(
            store,
            CommittedManager(blockstore),
            check_namespace=blockstore.check_namespace,
            value_size=lambda value: from_value("", value).size,
            blockstore=blockstore,
            staging_hooks=StagingLogHooks(self.deletion_log, entry_ref),
        )
        self.catalog = Catalog(self.graveler, blockstore, deletion=self.deletion_log)
        self.purges = Purges(self.deletion_log, self.graveler, blockstore)

    @classmethod
    def open(cls, settings: Settings) -> Self:
        """Open the stores the settings name. Raises ConfigError or UnavailableError."""
        store = open_store(settings.kv_url)
        try:
            blockstore = open_blockstore(settings.blockstore_url)
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
        """A cleaner that logs the blobs of the staging tokens it drops."""
        hooks = DeletionHooks(self.deletion_log, self.graveler, self.blockstore, entry_ref)
        return Cleaner(self.graveler, hooks=hooks)

    def deletion_worker(self) -> DeletionWorker:
        return DeletionWorker(self.deletion_log, self.graveler, self.blockstore, entry_ref)

    def close(self) -> None:
        self.blockstore.close()
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
