"""The in-use check learns the sealed tokens from the sealing index, not from every branch
(kvlake/graveler/refs/sealing.py, issue 33 item 2): it must still wait on a token a
commit has sealed, whenever the seal happens, and on stores written before the index."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kvlake.blockstore import BlockStore
from kvlake.catalog import entry_ref
from kvlake.deletion import PendingDelete, ReferenceChecker
from kvlake.graveler import keys
from kvlake.graveler.keys import staging_partition
from kvlake.graveler.refs.store import Refs
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake


class SealDuringListing(MemoryStore):
    """Runs `hook` once, at the check's second listing of the staging partitions: after it
    read the sealing index and its branches, before any staging lookup."""

    hook: Callable[[], None] | None = None
    listings = 0

    def partitions(self, *, after: bytes = b"") -> Iterator[bytes]:
        self.listings += 1
        hook = self.hook
        if hook is not None and self.listings == 2:
            self.hook = None
            hook()
        return super().partitions(after=after)


def checker(lake: DeletionLake) -> ReferenceChecker:
    return ReferenceChecker(lake.graveler, lake.blocks, lake.purges, entry_ref)


def seal_main(lake: DeletionLake) -> str:
    """Seal main as a commit does (its own seal code), and stop there: mid-commit."""
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    lake.graveler._committer._seal(lake.repository, "main", allow_empty=False)
    return token


def overwritten(lake: DeletionLake, address: str, token: str) -> PendingDelete:
    return lake.log.new_record(
        lake.repository, address, "overwritten_staged", staging_token=token, path=b"a"
    )


def test_a_record_whose_token_a_commit_sealed_waits(lake_blocks: BlockStore) -> None:
    with MemoryStore() as store:
        lake = DeletionLake(store, lake_blocks)
        stat = lake.upload("a")
        token = seal_main(lake)
        # A late writer (it read the branch before the seal) replaced the blob in the
        # sealed token; the commit may have read it first.
        lake.store.set(staging_partition(token), b"a", b"")
        (verdict,) = checker(lake).check([overwritten(lake, stat.address, token)])
        assert verdict.action == "wait"


def test_a_commit_sealing_between_the_index_read_and_the_lookups_keeps_the_blob(
    lake_blocks: BlockStore,
) -> None:
    with SealDuringListing() as store:
        lake = DeletionLake(store, lake_blocks)
        stat = lake.upload("a")
        token = lake.graveler.get_branch(lake.repository, "main").staging_token
        sealed: list[str] = []
        store.hook = lambda: sealed.append(seal_main(lake))
        (verdict,) = checker(lake).check([overwritten(lake, stat.address, "")])
        assert sealed == [token]  # the seal ran inside the check
        assert verdict.action == "in_use" and token in verdict.reason
        assert stat.address in lake.data_blobs()


def test_a_store_written_before_the_index_has_it_built_from_the_branches(
    lake_blocks: BlockStore,
) -> None:
    with MemoryStore() as store:
        lake = DeletionLake(store, lake_blocks)
        stat = lake.upload("a")
        token = seal_main(lake)
        lake.store.set(staging_partition(token), b"a", b"")
        # As an older version left it: the seal indexed nothing, and no marker.
        partition = keys.instance_partition(lake.repository.name, lake.repository.instance_uid)
        lake.store.delete_many(partition, [keys.sealing_key(token), keys.SEALING_BUILT])
        lake.graveler._refs._sealing._built.clear()  # a process that never saw it built
        (verdict,) = checker(lake).check([overwritten(lake, stat.address, token)])
        assert verdict.action == "wait"
        assert Refs(store).sealed_tokens(lake.repository).sealed == {token}


def test_stale_entries_are_ignored_and_removed(lake_blocks: BlockStore) -> None:
    with MemoryStore() as store:
        lake = DeletionLake(store, lake_blocks)
        stat = lake.upload("a")
        token = lake.graveler.get_branch(lake.repository, "main").staging_token
        # A seal that crashed before its swap: the token is still main's staging token.
        Refs(store).index_sealing(lake.repository, "main", token, (token,))
        (verdict,) = checker(lake).check([overwritten(lake, stat.address, token)])
        assert verdict.action == "in_use"  # found staged, not waiting on a seal
        lake.graveler.create_branch(lake.repository, "dev", "main")
        gone = lake.graveler.get_branch(lake.repository, "dev").staging_token
        Refs(store).index_sealing(lake.repository, "dev", gone, (gone,))
        lake.graveler.delete_branch(lake.repository, "dev")  # its token leaves with it
        assert Refs(store).sealed_tokens(lake.repository).sealed == set()
        token = gone
        partition = keys.instance_partition(lake.repository.name, lake.repository.instance_uid)
        assert keys.sealing_key(token) not in store.get_many(partition, [keys.sealing_key(token)])
