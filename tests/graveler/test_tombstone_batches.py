"""A batch of tombstones (`Writer.write_tombstones`, a bulk delete's path batches): racing a
writer, the keys it replaced unseen go through the single-write path, so nothing staged
is lost from the deletion log (invariant 4) and the deletion still wins; read as the one
range its keys span, it tombstones only its own keys and reads every one of them."""

from __future__ import annotations

import io

from kvlake.blockstore import BlockStore
from kvlake.graveler import Repository, keys
from kvlake.graveler.staging.range_tombstones import FIRST_PATH
from kvlake.graveler.staging.store import TOMBSTONE
from kvlake.graveler.staging.writer import SPAN_ROWS_PER_KEY
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
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


def _staged(lake: Lake, repo: Repository) -> dict[bytes, bytes]:
    token = lake.graveler.get_branch(repo, "main").staging_token
    return dict(lake.store.scan(keys.staging_partition(token), FIRST_PATH))


def test_a_batch_read_as_one_range_tombstones_only_its_own_keys(lake_blocks: BlockStore) -> None:
    with lake_on(lake_blocks) as lake:
        namespace = backends.namespace(lake.blockstore, "repo1")
        repo = lake.graveler.create_repository("repo1", storage_namespace=namespace)
        addresses = {
            path: lake.catalog.upload(repo, "main", path, io.BytesIO(path.encode())).address
            for path in ("a", "b", "c", "d", "e")
        }
        lake.graveler.delete_many(repo, "main", [b"a", b"c", b"e"])  # b and d lie in its span
        staged = _staged(lake, repo)
        assert [key for key, raw in staged.items() if raw == TOMBSTONE] == [b"a", b"c", b"e"]
        assert {b"b", b"d"} <= {key for key, raw in staged.items() if raw != TOMBSTONE}
        logged = logged_addresses(lake)
        assert {addresses["a"], addresses["c"], addresses["e"]} <= logged
        assert not {addresses["b"], addresses["d"]} & logged


def test_a_batch_whose_span_holds_mostly_other_keys_reads_the_rest_one_by_one(
    lake_blocks: BlockStore,
) -> None:
    # Two keys spanning twenty staged objects: past SPAN_ROWS_PER_KEY rows a key, the range
    # read stops and the last key is looked up, still read (its blob announced), not
    # taken for absent and tombstoned blind.
    with lake_on(lake_blocks) as lake:
        namespace = backends.namespace(lake.blockstore, "repo1")
        repo = lake.graveler.create_repository("repo1", storage_namespace=namespace)
        paths = [f"k{i:02d}" for i in range(20)]
        addresses = {
            path: lake.catalog.upload(repo, "main", path, io.BytesIO(path.encode())).address
            for path in paths
        }
        assert len(paths) > SPAN_ROWS_PER_KEY * 2 * 2  # past the budget after two pages
        lake.graveler.delete_many(repo, "main", [b"k00", b"k19"])
        staged = _staged(lake, repo)
        assert [key for key, raw in staged.items() if raw == TOMBSTONE] == [b"k00", b"k19"]
        logged = logged_addresses(lake)
        assert {addresses["k00"], addresses["k19"]} <= logged
        assert not {addresses[path] for path in paths[1:-1]} & logged
