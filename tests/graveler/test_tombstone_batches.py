"""A batch of tombstones (`Writer.write_tombstones`, a bulk delete's path batches) racing a
writer: the keys it replaced unseen go through the single-write path, so nothing staged
is lost from the deletion log (invariant 4) and the deletion still wins."""

from __future__ import annotations

import io

from kvlake.blockstore import BlockStore
from kvlake.graveler import keys
from kvlake.kv.memory import MemoryStore
from tests.support import backends
from tests.support.lakes import lake_on, logged_addresses


class RacingStore(MemoryStore):
    """Runs `racer` once, just before the first batch of swaps lands: a writer between the
    batch's read of the staged values and its compare-and-swaps."""

    racer: object = None

    def _swap_many(self, partition: bytes, swaps: list[tuple[bytes, bytes, bytes]]) -> list[bytes]:
        racer, self.racer = self.racer, None
        if callable(racer):
            racer()
        return super()._swap_many(partition, swaps)


def test_a_key_written_between_the_read_and_the_swap_is_logged_and_deleted(
    lake_blocks: BlockStore,
) -> None:
    store = RacingStore()
    with lake_on(lake_blocks, store) as lake:
        namespace = backends.namespace(lake.blockstore, "repo1")
        repo = lake.graveler.create_repository("repo1", storage_namespace=namespace)
        first = lake.catalog.upload(repo, "main", "a", io.BytesIO(b"first")).address
        kept = lake.catalog.upload(repo, "main", "b", io.BytesIO(b"kept")).address
        raced: list[str] = []

        def upload_again() -> None:
            stat = lake.catalog.upload(repo, "main", "a", io.BytesIO(b"second"))
            raced.append(stat.address)

        store.racer = upload_again
        lake.graveler.delete_many(repo, "main", [b"a", b"b"])
        assert raced and raced[0] != first
        assert logged_addresses(lake) >= {first, raced[0], kept}  # both values of "a" announced
        partition = keys.staging_partition(lake.graveler.get_branch(repo, "main").staging_token)
        assert store.get_many(partition, [b"a", b"b"]) == {b"a": b"", b"b": b""}
