"""Phase one: records are durable, partitioned, due after the send delay, and never forgotten."""

from __future__ import annotations

from kvlake.blockstore import BlockStore
from kvlake.config import DeletionSettings
from kvlake.deletion import DeletionLog
from kvlake.deletion import keys as deletion_keys
from kvlake.kv.memory import MemoryStore
from tests.deletion.helpers import DeletionLake


def test_appended_records_spread_over_partitions_and_fall_due_after_the_send_delay(
    lake: DeletionLake,
) -> None:
    now = lake.clock()
    records = [
        lake.log.new_record(lake.repository, f"data/x/{i:03d}", "deleted_staged", path=b"p")
        for i in range(60)
    ]
    assert lake.log.append(records) == 60
    partitions = [lake.log.scan_due(n, now + 60, 1000) for n in range(4)]
    assert all(partitions) and sum(len(p) for p in partitions) == 60
    assert all(lake.log.scan_due(n, now + 59.999, 1000) == [] for n in range(4))
    for item in partitions[0]:
        assert deletion_keys.due_of(item.key) == now + 60
        assert item.record is not None and item.record.not_before == now + 60


def test_scan_due_returns_oldest_first_and_stops_at_the_first_not_due(lake: DeletionLake) -> None:
    repository = lake.repository
    for offset in (30.0, 10.0, 20.0, 500.0):
        record = lake.log.new_record(
            repository, "data/same", "deleted_staged", due=lake.clock() + offset
        )
        lake.log.append([record])
    number = deletion_keys.partition_for("data/same", 4)
    due = lake.log.scan_due(number, lake.clock() + 100, 1000)
    assert [item.record.not_before - lake.clock() for item in due if item.record] == [
        10.0,
        20.0,
        30.0,
    ]
    assert len(lake.log.scan_due(number, lake.clock() + 100, 2)) == 2


def test_a_smaller_partition_count_still_drains_every_partition_ever_used(
    lake_blocks: BlockStore,
) -> None:
    store, blocks = MemoryStore(), lake_blocks
    wide = DeletionLake(store, blocks, settings=DeletionSettings(partitions=16))
    for i in range(40):
        wide.upload(f"p{i}")
        wide.upload(f"p{i}")  # the overwrite logs the first blob
    used = {n for n in range(16) if list(wide.log.scan(n))}
    assert max(used) >= 2
    narrow = DeletionLake(store, blocks, settings=DeletionSettings(partitions=2), create=False)
    narrow.clock.now = wide.clock.now
    assert narrow.log.partition_count() == 16
    narrow.settle()
    assert narrow.data_blobs() == narrow.referenced() and len(narrow.data_blobs()) == 40


def test_a_disabled_log_records_nothing_but_still_marks_copies(lake_blocks: BlockStore) -> None:
    lake = DeletionLake(MemoryStore(), lake_blocks, settings=DeletionSettings(enabled=False))
    lake.upload("a")
    lake.upload("a")
    lake.catalog.copy_object(lake.repository, "main", "a", "main", "b")
    assert lake.pending() == 0
    assert len(list(lake.store.scan(deletion_keys.SHARED))) == 1
    assert len(lake.data_blobs()) == 2  # the overwritten blob is left for garbage collection


def test_the_log_takes_its_clock_and_settings() -> None:
    log = DeletionLog(MemoryStore(), clock=lambda: 5.0)
    assert log.settings == DeletionSettings() and log.clock() == 5.0 and log.enabled
