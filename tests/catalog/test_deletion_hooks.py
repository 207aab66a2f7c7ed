"""The catalog logs every blob a write replaces in staging, first, and never one it keeps."""

from __future__ import annotations

import io

import pytest

from kvlake.blockstore import BlockStore
from kvlake.catalog import entry_ref
from kvlake.deletion import PendingDelete
from kvlake.deletion import keys as deletion_keys
from kvlake.errors import (
    ConfigError,
    KvlakeError,
    PreconditionFailedError,
    ProtectedBranchError,
    UnavailableError,
)
from kvlake.graveler import keys
from kvlake.graveler.records import encode
from kvlake.graveler.refs.protection import BranchProtectionRules
from kvlake.kv.faults import Call, Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake
from tests.graveler.helpers import make_graveler


@pytest.fixture
def faulty() -> FaultyStore:
    return FaultyStore(MemoryStore())


@pytest.fixture
def lake(faulty: FaultyStore, lake_blocks: BlockStore) -> DeletionLake:
    return DeletionLake(faulty, lake_blocks)


def logged(lake: DeletionLake) -> list[PendingDelete]:
    return [
        item.record
        for n in range(lake.log.partition_count())
        for item in lake.log.scan(n)
        if item.record is not None
    ]


def token(lake: DeletionLake) -> str:
    return lake.graveler.get_branch(lake.repository, "main").staging_token


def test_overwriting_a_staged_object_logs_its_old_blob_with_where_it_was(
    lake: DeletionLake,
) -> None:
    old = lake.upload("a", b"1")
    lake.upload("a", b"2")
    (record,) = logged(lake)
    assert (record.address, record.origin, record.path) == (old.address, "overwritten_staged", b"a")
    assert record.staging_token == token(lake) and record.since == old.mtime
    assert record.check_in_use and record.not_before == lake.clock() + 60
    assert (record.repository, record.instance_uid) == ("repo1", lake.repository.instance_uid)


def test_overwriting_or_deleting_a_committed_object_logs_nothing(lake: DeletionLake) -> None:
    lake.upload("a", b"1")
    lake.upload("b", b"1")
    lake.commit()
    lake.upload("a", b"2")
    lake.catalog.delete_object(lake.repository, "main", "b")
    assert logged(lake) == []


def test_deleting_staged_objects_logs_each_blob(lake: DeletionLake) -> None:
    stats = [lake.upload(path) for path in ("a", "b", "c")]
    lake.catalog.delete_object(lake.repository, "main", "a")
    assert lake.catalog.delete_objects(lake.repository, "main", ["b", "c", "missing"]) == []
    records = logged(lake)
    assert sorted(r.address for r in records) == sorted(s.address for s in stats)
    assert {r.origin for r in records} == {"deleted_staged"}


def test_a_failed_append_fails_the_upload_and_changes_nothing(
    lake: DeletionLake, faulty: FaultyStore
) -> None:
    old = lake.upload("a", b"1")
    faulty.arm(
        Fault(
            op="set_many",
            partition=deletion_keys.pending_partition(deletion_keys.partition_for(old.address, 4)),
        )
    )
    with pytest.raises(UnavailableError, match="injected fault"):
        lake.upload("a", b"2")
    assert lake.catalog.stat(lake.repository, "main", "a").address == old.address
    assert lake.data_blobs() == {old.address}  # the new blob was never referenced: gone
    assert logged(lake) == []


def test_a_write_that_may_have_landed_logs_its_new_blob_instead_of_deleting_it(
    lake: DeletionLake, faulty: FaultyStore
) -> None:
    faulty.arm(Fault(op="set_if", partition=keys.staging_partition(token(lake)), when="after"))
    with pytest.raises(UnavailableError):
        lake.upload("a", b"1")
    stat = lake.catalog.stat(lake.repository, "main", "a")  # the write did land
    (record,) = logged(lake)
    assert (record.address, record.origin) == (stat.address, "abandoned_upload")
    lake.settle()
    assert lake.data_blobs() == {stat.address} == lake.referenced()


def test_a_write_that_never_reached_staging_deletes_its_blob_at_once(
    lake: DeletionLake, faulty: FaultyStore
) -> None:
    faulty.arm(Fault(op="get", partition=keys.staging_partition(token(lake))))
    with pytest.raises(UnavailableError):
        lake.upload("a", b"1")
    assert lake.data_blobs() == set() and logged(lake) == []


def test_a_racing_writers_entry_is_logged_when_our_swap_replaces_it(
    lake: DeletionLake, faulty: FaultyStore
) -> None:
    first = lake.upload("a", b"1")
    partition = keys.staging_partition(token(lake))
    racer = lake.upload("elsewhere", b"racer")  # a blob the racing writer stages at "a"

    def race(call: Call) -> KvlakeError:
        value = lake.catalog.graveler.get(lake.repository, "main", b"elsewhere")
        faulty.inner.set(partition, b"a", encode(value))  # lands between our read and swap
        return PreconditionFailedError("the racing writer won")

    faulty.arm(Fault(op="set_if", partition=partition, error=race))
    final = lake.upload("a", b"2")
    assert sorted(r.address for r in logged(lake)) == sorted([first.address, racer.address])
    assert lake.catalog.stat(lake.repository, "main", "a").address == final.address
    assert entry_ref(lake.graveler.get(lake.repository, "main", b"a")).address == final.address


def test_a_copy_marks_its_address_shared_before_staging_it(lake: DeletionLake) -> None:
    source = lake.upload("a")
    lake.catalog.copy_object(lake.repository, "main", "a", "main", "b")
    shared = [key for key, _ in lake.store.scan(deletion_keys.SHARED)]
    assert shared == [deletion_keys.shared_key(lake.repository.instance_uid, source.address)]


def test_uploads_without_a_deletion_log_keep_working(
    tmp_path: object, lake_blocks: BlockStore
) -> None:
    store, blocks = MemoryStore(), lake_blocks
    lake = DeletionLake(store, blocks)
    graveler = make_graveler(store, lake.clock, blocks, lake.graveler.committed)  # no hooks
    plain = type(lake.catalog)(graveler, blocks, clock=lake.clock)
    plain.upload(lake.repository, "main", "a", io.BytesIO(b"1"))
    plain.upload(lake.repository, "main", "a", io.BytesIO(b"2"))
    plain.copy_object(lake.repository, "main", "a", "main", "b")
    assert lake.pending() == 0 and len(lake.data_blobs()) == 2


def test_writes_to_a_protected_branch_are_refused_and_log_nothing(lake: DeletionLake) -> None:
    stat = lake.upload("a")
    BranchProtectionRules(lake.store).set_rule(lake.repository, "ma*", ["staging_write"])
    with pytest.raises(ProtectedBranchError, match="protected branch 'main'"):
        lake.upload("a", b"2")
    with pytest.raises(ProtectedBranchError):
        lake.catalog.delete_object(lake.repository, "main", "a")
    with pytest.raises(ProtectedBranchError):
        lake.catalog.copy_object(lake.repository, "main", "a", "main", "b")
    assert logged(lake) == [] and lake.data_blobs() == {stat.address}


def test_a_catalog_with_a_deletion_log_refuses_a_graveler_without_staging_hooks(
    lake_blocks: BlockStore,
) -> None:
    store, blocks = MemoryStore(), lake_blocks
    lake = DeletionLake(store, blocks)
    graveler = make_graveler(store, lake.clock, blocks, lake.graveler.committed)
    with pytest.raises(ConfigError, match="staging_hooks=StagingLogHooks"):
        type(lake.catalog)(graveler, blocks, deletion=lake.log)
