"""The in-use check looks in exactly the live tokens holding entries (issue 33, item 2):
a branch's staging token and its sealed tokens, not every non-empty staging partition.

A token a commit consumed, or one a reset or a branch deletion dropped, keeps its
partition until the cleaner drops it, with the entries its commit published or its
reset removed: counting them as staging kept blobs garbage collection must delete.
A token is left out only when the branch records, read after its consumed record and
drop-queue entry, show that no branch names it (`References.tokens_to_check`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kvlake.blockstore import BlockStore
from kvlake.catalog import entry_ref
from kvlake.catalog.records import ObjectEntry, to_value
from kvlake.deletion import GcMarks, ReferenceChecker, gc_records
from kvlake.graveler import keys
from kvlake.graveler.keys import new_staging_token, staging_partition
from kvlake.graveler.refs.store import Refs
from kvlake.kv import Store
from kvlake.kv.memory import MemoryStore
from kvlake.kv.store import Scan
from tests.deletion.helpers import DeletionLake


def gc_verdict(lake: DeletionLake, address: str) -> str:
    """A GC run's verdict on one candidate whose address its marks do not hold."""
    GcMarks(lake.store).save("run1", [])
    records = list(gc_records(lake.log, lake.repository, "run1", 0.0, [address]))
    checker = ReferenceChecker(lake.graveler, lake.blocks, lake.purges, entry_ref)
    (verdict,) = checker.check(records)
    return verdict.action


def holds(store: Store, token: str) -> bool:
    """Whether the token's staging partition still holds entries (not yet dropped)."""
    return any(True for _ in store.get_many(staging_partition(token), [b"d"]))


def unqueue(store: Store, token: str) -> None:
    """Take the token off the drop queue's token-keyed index, as a queue entry written
    before that index was built is: only its consumed record can then tell it is gone."""
    store.delete(keys.DROPPED_BY_TOKEN, token.encode())


def test_a_gc_candidate_staged_only_in_a_consumed_token_is_deleted(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """The CI failure of the first attempt: `d` committed on a branch since deleted."""
    lake = DeletionLake(any_store, lake_blocks)
    lake.graveler.create_branch(lake.repository, "dev", "main")
    token = lake.graveler.get_branch(lake.repository, "dev").staging_token
    address = lake.upload("d", branch="dev").address
    lake.commit("dev")
    lake.graveler.delete_branch(lake.repository, "dev")
    unqueue(lake.store, token)
    assert holds(lake.store, token)  # consumed, not yet dropped
    assert gc_verdict(lake, address) == "delete"


def test_a_gc_candidate_in_a_token_its_commit_published_is_deleted(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    address = lake.upload("d").address
    lake.commit()
    assert holds(lake.store, token)
    assert gc_verdict(lake, address) == "delete"


def test_a_gc_candidate_in_a_token_a_reset_dropped_is_deleted(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    lake = DeletionLake(any_store, lake_blocks)
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    address = lake.upload("d").address
    lake.graveler.resets.reset_hard(lake.repository, "main", "main")
    assert holds(lake.store, token)  # queued, not consumed
    assert gc_verdict(lake, address) == "delete"


def test_a_queued_token_its_branch_still_names_is_looked_in(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """A reset or a publish queues its tokens before its swap, which may then lose (or its
    process die): the token is queued and live."""
    lake = DeletionLake(any_store, lake_blocks)
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    address = lake.upload("d").address
    lake.graveler.queue_token_drops(lake.repository, [token], branch="main")
    assert gc_verdict(lake, address) == "in_use"


def test_a_consumed_token_still_sealed_is_looked_in(
    any_store: Store, lake_blocks: BlockStore
) -> None:
    """A commit between recording its tokens consumed and publishing them."""
    lake = DeletionLake(any_store, lake_blocks)
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    address = lake.upload("d").address
    sealed = lake.graveler._committer._seal(lake.repository, "main", allow_empty=False)
    Refs(lake.store).record_consumed(lake.repository, [token], sealed.commit_id)
    unqueue(lake.store, token)
    assert gc_verdict(lake, address) == "in_use"


class PauseAt(MemoryStore):
    """Runs `hook` once, inside the first `get_many`, `scan` or `set_many` whose keys (a
    scan's start) `when` picks: before the read, or after the write."""

    hook: Callable[[], None] | None = None
    when: Callable[[bytes], bool] = staticmethod(lambda key: False)

    def _fire(self, keys_: Iterable[bytes]) -> None:
        hook = self.hook
        if hook is not None and any(self.when(key) for key in keys_):
            self.hook = None
            hook()

    def get_many(self, partition: bytes, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        wanted = list(keys)
        self._fire(wanted)
        return super().get_many(partition, wanted)

    def scan(self, partition: bytes, start: bytes = b"", *, batch_size: int = 1000) -> Scan:
        self._fire([start])
        return super().scan(partition, start, batch_size=batch_size)

    def set_many(self, partition: bytes, items: Iterable[tuple[bytes, bytes]]) -> None:
        written = list(items)
        super().set_many(partition, written)
        self._fire(key for key, _ in written)


def test_a_commit_that_seals_and_consumes_while_the_check_reads_keeps_the_blob(
    lake_blocks: BlockStore,
) -> None:
    """Paused at the check's read of the consumed records, a commit seals main's token and
    records it consumed, and stops before publishing. The check read no consumed record
    for it, and the branches after: the token is sealed, looked in, the blob in use. (Read
    the other way round, the branches before the records, the token was staging then
    and consumed now, and would have counted as gone under its commit in progress.)"""
    with PauseAt() as store:
        lake = DeletionLake(store, lake_blocks)
        token = lake.graveler.get_branch(lake.repository, "main").staging_token
        address = lake.upload("d").address

        def commit_up_to_its_publish() -> None:
            sealed = lake.graveler._committer._seal(lake.repository, "main", allow_empty=False)
            Refs(store).record_consumed(lake.repository, [token], sealed.commit_id)
            unqueue(store, token)

        store.when = lambda key: key.startswith(keys.CONSUMED_TOKEN_PREFIX)
        store.hook = commit_up_to_its_publish
        assert gc_verdict(lake, address) == "in_use"
        assert store.hook is None  # the commit ran inside the check
        assert token in lake.graveler.get_branch(lake.repository, "main").sealed_tokens


def test_a_check_between_a_token_published_above_and_its_swap_keeps_its_index_entry(
    lake_blocks: BlockStore,
) -> None:
    """A filled token published above the staging (a batch, an import) is indexed before
    the branch names it: a check reading the index then must not take the entry as
    stale, or the token would be sealed with no entry, a commit in progress unseen."""
    with PauseAt() as store:
        lake = DeletionLake(store, lake_blocks)
        above = new_staging_token(lake.repository.instance_uid)
        lake.store.set(staging_partition(above), b"d", b"")
        store.when = lambda key: key == keys.sealing_key(above)

        def check_reads_the_index() -> None:
            Refs(store).sealed_tokens(lake.repository)  # as a check does

        store.hook = check_reads_the_index
        lake.graveler._committer.publish_token(lake.repository, "main", above)
        assert store.hook is None
        assert above in lake.graveler.get_branch(lake.repository, "main").sealed_tokens
        assert above in Refs(store).sealed_tokens(lake.repository).sealed
        # Its own entry, not only that of the token sealed with it: the index holds every
        # sealed token, whatever its neighbours.
        partition = keys.instance_partition(lake.repository.name, lake.repository.instance_uid)
        assert store.get_many(partition, [keys.sealing_key(above)])


def test_an_entry_staged_in_an_empty_token_while_the_check_reads_is_found(
    lake_blocks: BlockStore,
) -> None:
    """Main's token is empty at the check's first listing; an entry naming the candidate is
    staged before the check reads the branches. The token is live then and holds it: the
    listing after the branch read finds it, as a scan of every branch would have."""
    with PauseAt() as store:
        lake = DeletionLake(store, lake_blocks)
        entry = ObjectEntry(address="data/old/1", size=1, checksum="c", mtime=0.0, content_type="t")

        def stage() -> None:
            lake.graveler.set(lake.repository, "main", b"late", to_value(entry))

        store.when = lambda key: key == keys.SEALING_PREFIX  # the check's read of the index
        store.hook = stage
        assert gc_verdict(lake, "data/old/1") == "in_use"
        assert store.hook is None
