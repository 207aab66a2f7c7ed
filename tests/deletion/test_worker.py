"""Phase two: workers delete only what nothing references, retry, dead-letter and share leases."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import msgspec
import pytest

from kvlake.blockstore import BlockStore
from kvlake.config import DeletionSettings
from kvlake.deletion import DeadLetters, PendingDelete
from kvlake.deletion import keys as deletion_keys
from kvlake.deletion.leases import Leases
from kvlake.errors import InvalidInputError, NotFoundError
from kvlake.graveler.keys import new_staging_token, staging_partition
from kvlake.graveler.records import Branch
from kvlake.graveler.refs.store import Refs
from kvlake.ids import new_uid
from kvlake.kv import Predicate
from kvlake.kv.memory import MemoryStore
from tests.deletion.blockstores import BlobCall, FaultyBlockStore
from tests.deletion.helpers import DAY, DeletionLake


def stale_record(lake: DeletionLake, address: str, path: str, **changes: object) -> PendingDelete:
    """A record as a crashed or racing writer could have left it, appended now."""
    record = lake.log.new_record(
        lake.repository,
        address,
        "overwritten_staged",
        staging_token=lake.graveler.get_branch(lake.repository, "main").staging_token,
        path=path.encode(),
    )
    record = msgspec.structs.replace(record, **changes)
    lake.log.append([record])
    return record


def test_an_overwritten_staged_blob_is_deleted_only_after_the_send_delay(
    lake: DeletionLake,
) -> None:
    old = lake.upload("a", b"1")
    new = lake.upload("a", b"2")
    assert lake.worker().run_once().deleted == 0  # not due yet: readers may still hold it
    assert lake.data_blobs() == {old.address, new.address}
    lake.clock.advance(60)
    assert lake.worker().run_once().deleted == 1
    assert lake.data_blobs() == {new.address} == lake.referenced()
    assert lake.pending() == 0


def test_a_deleted_staged_object_loses_its_blob(lake: DeletionLake) -> None:
    lake.upload("a")
    lake.upload("b")
    lake.catalog.delete_object(lake.repository, "main", "a")
    lake.catalog.delete_objects(lake.repository, "main", ["b", "missing"])
    lake.settle()
    assert lake.data_blobs() == set()


def test_a_blob_a_copy_still_references_is_kept(lake: DeletionLake) -> None:
    source = lake.upload("a", b"1")
    lake.catalog.copy_object(lake.repository, "main", "a", "main", "b")
    lake.upload("a", b"2")
    report = lake.settle()
    assert report.kept == 1 and report.deleted == 0
    assert source.address in lake.data_blobs()
    assert lake.data_blobs() == lake.referenced()


def test_a_record_whose_blob_is_staged_again_keeps_the_blob_and_retries(lake: DeletionLake) -> None:
    stat = lake.upload("a")
    stale_record(lake, stat.address, "a")
    lake.clock.advance(60)
    report = lake.worker().run_once()
    assert (report.retried, report.deleted) == (1, 0)
    assert stat.address in lake.data_blobs()
    report = lake.settle()  # still staged after every attempt: forgotten, never deleted
    assert report.kept == 1 and report.deleted == 0
    assert stat.address in lake.data_blobs() and lake.pending() == 0


def test_a_record_retried_while_in_use_deletes_the_blob_once_unreferenced(
    lake: DeletionLake,
) -> None:
    stat = lake.upload("a")
    stale_record(lake, stat.address, "a")
    lake.clock.advance(60)
    assert lake.worker().run_once().retried == 1
    lake.upload("a", b"other")  # now the overwrite lands (and logs the blob again)
    lake.settle()
    assert stat.address not in lake.data_blobs()


def test_a_committed_blob_is_never_deleted_by_a_staging_record(lake: DeletionLake) -> None:
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    first = lake.upload("a", b"1")
    lake.commit()
    lake.upload("a", b"2")
    lake.commit()  # the head holds b"2"; only history holds the first blob
    # A record of the first blob in the token the first commit consumed, as a
    # reset or writer that read the branch before the seal leaves one.
    stale_record(lake, first.address, "a", staging_token=token)
    report = lake.settle()
    # Kept: the stale record. The first token's drop logs nothing: a commit consumed it.
    assert report.kept == 1 and report.deleted == 0
    assert first.address in lake.data_blobs()


def test_a_blob_committed_on_another_branch_is_kept_after_the_branch_is_deleted(
    lake: DeletionLake,
) -> None:
    lake.graveler.create_branch(lake.repository, "dev", "main")
    token = lake.graveler.get_branch(lake.repository, "dev").staging_token
    stat = lake.upload("a", b"1", branch="dev")
    commit = lake.commit("dev")
    lake.graveler.delete_branch(lake.repository, "dev")  # only the commit's id reaches it
    stale_record(lake, stat.address, "a", staging_token=token)
    assert lake.settle().deleted == 0
    assert stat.address in lake.data_blobs()
    assert lake.graveler.get(lake.repository, commit, b"a")


BATCHED = 1200
"""Blobs the batching test deletes: more than one DeleteObjects call's worth."""


def test_deletes_reach_the_blockstore_in_batches_of_at_most_1000(lake: DeletionLake) -> None:
    repository = lake.repository
    keys = [f"data/b/{i:05d}" for i in range(BATCHED)]
    with ThreadPoolExecutor(16) as pool:  # 16 at a time: one by one, moto takes 20 s
        list(pool.map(lambda key: lake.blocks.put(lake.namespace, key, b"x"), keys))
    lake.log.append(
        lake.log.new_record(repository, key, "deleted_staged", path=b"gone/%d" % i)
        for i, key in enumerate(keys)
    )
    faulty = FaultyBlockStore(lake.blocks)
    lake.settle(lake.worker(faulty))
    sizes = [call.size for call in faulty.deletes()]
    assert sum(sizes) == BATCHED and max(sizes) <= 1000 and len(sizes) >= 2
    assert lake.data_blobs() == set()


def test_a_failing_blockstore_backs_off_then_dead_letters_and_requeue_brings_it_back(
    lake: DeletionLake,
) -> None:
    old = lake.upload("a", b"1")
    lake.upload("a", b"2")
    broken = FaultyBlockStore(lake.blocks, lambda call: "before" if call.op == "delete" else None)
    worker = lake.worker(broken)
    lake.clock.advance(60)
    assert worker.run_once().retried == 1
    (item,) = [i for n in range(4) for i in lake.log.scan(n)]
    assert item.record is not None and item.record.attempts == 1
    assert item.record.not_before == lake.clock() + 600
    assert "injected fault" in item.record.last_error
    report = lake.settle(worker)
    assert report.dead_lettered == 1 and old.address in lake.data_blobs()
    (letter,) = DeadLetters(lake.log).scan()
    assert letter.reason.startswith("gave up after 10 attempts; last error: deleting the blob")
    assert DeadLetters(lake.log).requeue([letter.id]) == 1
    assert DeadLetters(lake.log).count() == 0 and lake.pending() == 1
    lake.settle()
    assert old.address not in lake.data_blobs()


@pytest.mark.parametrize(
    ("address", "namespace", "reason"),
    [
        ("../repo2/data/x", None, "is not a key inside storage namespace"),
        ("/etc/passwd", None, "is not a key inside storage namespace"),
        ("mem://lake/repo2/data/x", None, "is not a key inside storage namespace"),
        ("data/x", "mem://lake/repo2", "is not that of repository instance"),
        ("data/x", "gs://lake/repo1", "is not served here"),  # a scheme no test store serves
    ],
)
def test_a_record_naming_a_foreign_address_is_dead_lettered_never_deleted(
    lake: DeletionLake, address: str, namespace: str | None, reason: str
) -> None:
    # The lake's own scheme (local:// or s3://) wherever the case names "mem://".
    here = f"{lake.blocks.scheme}://"
    address = address.replace("mem://", here)
    namespace = namespace.replace("mem://", here) if namespace else namespace
    other = f"{here}lake/repo2"
    lake.blocks.put(other, "data/x", b"victim")
    lake.blocks.put(lake.namespace, "data/x", b"not logged for this namespace")
    record = lake.log.new_record(lake.repository, address, "deleted_staged", path=b"p")
    if namespace is not None:
        record = msgspec.structs.replace(record, storage_namespace=namespace)
    lake.log.append([record])
    assert lake.settle().dead_lettered == 1
    (letter,) = DeadLetters(lake.log).scan()
    assert reason in letter.reason and letter.record == record
    assert lake.blocks.exists(other, "data/x")
    assert lake.blocks.exists(lake.namespace, "data/x")


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"instance_uid": new_uid()}, "is unknown"),
        ({"repository": "nosuch"}, "is unknown"),
        ({"repository": "Bad Name"}, "repository name 'Bad Name' is invalid"),
        ({"instance_uid": "short"}, "is not a repository instance uid"),
    ],
)
def test_a_record_of_an_unknown_repository_instance_is_dead_lettered(
    lake: DeletionLake, changes: dict[str, str], reason: str
) -> None:
    stat = lake.upload("a")
    record = lake.log.new_record(lake.repository, stat.address, "deleted_staged", path=b"zz")
    lake.log.append([msgspec.structs.replace(record, **changes)])
    assert lake.settle().dead_lettered == 1
    (letter,) = DeadLetters(lake.log).scan()
    assert reason in letter.reason
    assert stat.address in lake.data_blobs()


def test_an_undecodable_record_is_dead_lettered_and_can_only_be_dropped(lake: DeletionLake) -> None:
    lake.store.set(deletion_keys.pending_partition(1), deletion_keys.pending_key(0, "x"), b"junk")
    assert lake.settle().dead_lettered == 1
    (letter,) = DeadLetters(lake.log).scan()
    assert letter.record is None and letter.raw == b"junk"
    assert "cannot be decoded" in letter.reason
    with pytest.raises(InvalidInputError, match="cannot be requeued, drop it"):
        DeadLetters(lake.log).requeue([letter.id])
    with pytest.raises(NotFoundError, match="no dead letter with id 'nope'"):
        DeadLetters(lake.log).drop([letter.id, "nope"])
    assert DeadLetters(lake.log).count() == 1  # bad input changed nothing
    assert DeadLetters(lake.log).drop(None) == 1 and DeadLetters(lake.log).count() == 0


def test_a_crashed_workers_lease_is_taken_over_once_it_expires(lake: DeletionLake) -> None:
    old = lake.upload("a", b"1")
    lake.upload("a", b"2")
    number = deletion_keys.partition_for(old.address, 4)
    lake.clock.advance(60)
    held = Leases(lake.store).acquire(number, "crashed", lake.clock(), 60.0)
    assert held is not None
    assert lake.worker().run_once().deleted == 0  # the lease is someone else's
    lake.clock.advance(61)
    assert lake.worker().run_once().deleted == 1
    assert old.address not in lake.data_blobs()


def test_a_worker_whose_lease_was_taken_stops_and_loses_nothing(lake_blocks: BlockStore) -> None:
    settings = DeletionSettings(batch_size=1)
    store, blocks = MemoryStore(), lake_blocks
    slow = DeletionLake(store, blocks, settings=settings)
    stats = [slow.upload(f"p{i}") for i in range(5)] + [slow.upload(f"p{i}") for i in range(5)]
    slow.clock.advance(60)
    thief = Leases(store)

    def steal(call: BlobCall) -> None:
        for number in range(4):
            current = thief.load(number)
            if current is not None and current.owner == "w1":
                slow.clock.advance(61)  # w1 stalls past its lease; another worker takes it
                assert thief.acquire(number, "thief", slow.clock(), 1.0) is not None
        return None

    report = slow.worker(FaultyBlockStore(blocks, steal)).run_once()
    assert any("taken over" in failure for failure in report.failures)
    slow.clock.advance(5)
    slow.settle()
    assert slow.data_blobs() == {s.address for s in stats[5:]} == slow.referenced()


def test_max_attempts_of_one_dead_letters_at_the_first_failure(lake_blocks: BlockStore) -> None:
    lake = DeletionLake(MemoryStore(), lake_blocks, settings=DeletionSettings(max_attempts=1))
    lake.upload("a")
    lake.upload("a")
    worker = lake.worker(FaultyBlockStore(lake.blocks, lambda call: "before"))
    lake.clock.advance(DAY)
    assert worker.run_once().dead_lettered == 1


def seal_main(lake: DeletionLake) -> tuple[str, Branch, Predicate]:
    """Seal main's staging token as a commit does, and stop there (mid-commit).

    Returns the sealed token, the branch as sealed and the predicate to move it on.
    """
    repository = lake.repository
    branch, predicate = Refs(lake.store).load_branch(repository, "main")
    # Indexed before the swap, as a commit's seal does (kvlake/graveler/refs/sealing.py).
    Refs(lake.store).index_sealing(
        repository, "main", branch.staging_token, (branch.staging_token,)
    )
    sealed = msgspec.structs.replace(
        branch,
        staging_token=new_staging_token(repository.instance_uid),
        sealed_tokens=(branch.staging_token,),
    )
    return (
        branch.staging_token,
        sealed,
        Refs(lake.store).swap_branch(repository, "main", sealed, predicate),
    )


def test_a_record_waits_without_spending_attempts_while_a_commit_may_hold_its_blob(
    lake: DeletionLake,
) -> None:
    stat = lake.upload("a")
    token, sealed, predicate = seal_main(lake)
    # Mid-commit: the token is sealed, and a late writer replaced the blob in it.
    lake.store.set(staging_partition(token), b"a", b"")
    stale_record(lake, stat.address, "a", staging_token=token)
    for _ in range(12):  # more rounds than max_attempts
        lake.clock.advance(DAY)
        assert lake.worker().run_once().retried == 1
    (item,) = [i for n in range(4) for i in lake.log.scan(n)]
    assert item.record is not None and item.record.attempts == 0
    assert "a commit in progress may hold" in item.record.last_error
    published = msgspec.structs.replace(sealed, sealed_tokens=())  # the commit gave up
    Refs(lake.store).swap_branch(lake.repository, "main", published, predicate)
    lake.clock.advance(DAY)
    assert lake.worker().run_once().deleted == 1
    assert stat.address not in lake.data_blobs()


def test_a_record_whose_entry_left_a_token_a_commit_sealed_waits(lake: DeletionLake) -> None:
    # Defect 1: a reset that read the branch before a commit sealed its token removed
    # the entry (and logged the blob) after the commit may have read it.
    stat = lake.upload("a")
    token, _, _ = seal_main(lake)
    lake.store.delete(staging_partition(token), b"a")  # no entry left at all
    stale_record(lake, stat.address, "a", staging_token=token)
    lake.clock.advance(DAY)
    report = lake.worker().run_once()
    assert (report.retried, report.deleted) == (1, 0)
    assert stat.address in lake.data_blobs()
