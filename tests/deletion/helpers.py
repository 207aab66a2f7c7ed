"""A lake for deletion tests: real KV, blockstore, graveler, catalog, cleaner and workers."""

from __future__ import annotations

import io
from collections.abc import Iterator

from kvlake.blockstore import BlockStore
from kvlake.catalog import ObjectStat, entry_ref
from kvlake.config import DeletionSettings, Settings
from kvlake.deletion import (
    DeletionWorker,
    WorkerReport,
)
from kvlake.deletion import keys as deletion_keys
from kvlake.graveler import keys
from kvlake.graveler.records import Repository, decode_commit, decode_value
from kvlake.kv import Store
from kvlake.lake import Lake
from tests.support import FakeClock, backends

DAY = 86400.0


class DeletionLake:
    """The real `kvlake.lake.Lake` (FakeClock, tokens dropped at once) with one repository
    `repo1` (at `<scheme>://lake/repo1` on `blocks` unless told), and the few conveniences
    deletion tests share."""

    def __init__(
        self,
        store: Store,
        blocks: BlockStore,
        *,
        clock: FakeClock | None = None,
        settings: DeletionSettings | Settings | None = None,
        namespace: str | None = None,
        create: bool = True,
    ) -> None:
        self.clock = clock or FakeClock()
        if not isinstance(settings, Settings):
            settings = Settings(deletion=settings or DeletionSettings())
        self.lake = Lake(
            settings,
            store,
            blocks,
            clock=self.clock,
            token_drop_delay=0,
        )
        self.store, self.blocks = store, blocks
        self.log, self.purges = self.lake.deletion_log, self.lake.purges
        self.graveler, self.catalog = self.lake.graveler, self.lake.catalog
        self.cleaner = self.lake.cleaner()
        self.namespace = namespace or backends.namespace(blocks, "repo1")
        if create:
            self.graveler.create_repository("repo1", storage_namespace=self.namespace)

    @property
    def repository(self) -> Repository:
        return self.graveler.get_repository("repo1")

    def worker(self, blocks: BlockStore | None = None, *, owner: str = "w1") -> DeletionWorker:
        return self.lake.deletion_worker(blocks, owner=owner)

    def upload(self, path: str, body: bytes = b"x", branch: str = "main") -> ObjectStat:
        return self.catalog.upload(self.repository, branch, path, io.BytesIO(body))

    def commit(self, branch: str = "main") -> str:
        return self.graveler.commit(self.repository, branch, committer="t", message="m")

    def pending(self) -> int:
        return sum(1 for n in range(self.log.partition_count()) for _ in self.log.scan(n))

    def settle(self, worker: DeletionWorker | None = None, *, rounds: int = 40) -> WorkerReport:
        """Advance time and run cleaner passes and workers until nothing is left to do."""
        worker = worker or self.worker()
        total = WorkerReport()
        for _ in range(rounds):
            self.clock.advance(DAY)
            self.cleaner.clean_once()
            total.add(worker.run_once())
            if (
                not self.pending()
                and not _any(self.store, keys.DROPPED_TOKENS)
                and not _any(self.store, keys.DELETED_REPOSITORIES)
            ):
                return total
        raise AssertionError(f"the log did not settle in {rounds} rounds: {total}")

    def data_blobs(self) -> set[str]:
        return set(self.blocks.list_keys(self.namespace, "data/"))

    def referenced(self) -> set[str]:
        """Addresses any staging token of a branch, or any commit at all, references."""
        repository = self.repository
        found: set[str] = set()
        for _, branch in self.graveler.list_branches(repository):
            for token in (branch.staging_token, *branch.sealed_tokens):
                for _, raw in self.store.scan(keys.staging_partition(token)):
                    if raw:
                        found.add(entry_ref(decode_value(raw)).address)
        partition = keys.instance_partition(repository.name, repository.instance_uid)
        for key, raw in self.store.scan(partition, keys.COMMIT_PREFIX):
            if not key.startswith(keys.COMMIT_PREFIX):
                break
            metarange = decode_commit(raw).metarange_id
            for _, value in self.graveler.committed.scan(repository.storage_namespace, metarange):
                found.add(entry_ref(value).address)
        return found

    def shared_addresses(self) -> set[str]:
        """Addresses a copy or a re-write after a seal marked shared (garbage collection's)."""
        prefix = (self.repository.instance_uid + "/").encode()
        return {
            key[len(prefix) :].decode()
            for key, _ in self.store.scan(deletion_keys.SHARED)
            if key.startswith(prefix)
        }

    def dead_letters(self) -> Iterator[bytes]:
        for key, _ in self.store.scan(deletion_keys.DEAD_LETTERS):
            yield key


def _any(store: Store, partition: bytes) -> bool:
    with store.scan(partition, batch_size=1) as scan:
        return next(scan, None) is not None
