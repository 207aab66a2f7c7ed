"""Batch records: a batch of tombstones logs its blobs a thousand to a KV row (issue 26), and
everything that reads the log sees one record per blob."""

from __future__ import annotations

import msgspec

from kvlake.deletion import keys as deletion_keys
from kvlake.deletion.log import BATCH_MEMBERS
from kvlake.deletion.records import Member, decode_pending, encode
from kvlake.kv import Store
from tests.deletion.blockstores import FaultyBlockStore
from tests.deletion.helpers import DeletionLake


def log_rows(store: Store, partitions: int) -> list[tuple[bytes, bytes]]:
    """The deletion log's KV rows, every partition."""
    return [
        row
        for number in range(partitions)
        for row in store.scan(deletion_keys.pending_partition(number))
    ]


def tombstone_all(lake: DeletionLake, paths: list[str]) -> dict[str, str]:
    """Upload `paths`, then delete them in one batch of tombstones; their addresses by path."""
    addresses = {path: lake.upload(path, path.encode()).address for path in paths}
    lake.graveler.delete_many(lake.repository, "main", [path.encode() for path in paths])
    return addresses


def test_a_batch_of_tombstones_logs_one_row_read_as_a_record_per_blob(lake: DeletionLake) -> None:
    addresses = tombstone_all(lake, ["a", "b", "c"])
    partitions = lake.log.partition_count()
    ((key, raw),) = log_rows(lake.store, partitions)
    assert [m.address for m in decode_pending(raw).members] == list(addresses.values())
    items = [item for number in range(partitions) for item in lake.log.scan(number)]
    assert {item.key for item in items} == {key}
    records = [item.record for item in items if item.record is not None]
    assert {(r.path.decode(), r.address) for r in records} == set(addresses.items())
    assert len({r.id for r in records}) == 3 and all(not r.members for r in records)
    token = lake.graveler.get_branch(lake.repository, "main").staging_token
    assert {r.staging_token for r in records} == {token}
    assert {r.origin for r in records} == {"deleted_staged"}
    lake.settle()
    assert lake.data_blobs() == set() and lake.pending() == 0
    assert log_rows(lake.store, partitions) == []


def test_a_batch_member_whose_delete_fails_is_retried_alone(lake: DeletionLake) -> None:
    addresses = tombstone_all(lake, ["a", "b", "c"])
    failing = addresses["b"]
    broken = FaultyBlockStore(
        lake.blocks, lambda call: "before" if call.op == "delete" and call.key == failing else None
    )
    lake.clock.advance(60)
    report = lake.worker(broken).run_once()
    assert (report.deleted, report.retried) == (2, 1)
    assert lake.data_blobs() == {failing}
    ((_, raw),) = log_rows(lake.store, lake.log.partition_count())  # the batch row is gone
    retried = decode_pending(raw)
    assert retried.address == failing and retried.path == b"b" and not retried.members
    assert retried.attempts == 1 and "injected fault" in retried.last_error
    lake.settle()
    assert lake.data_blobs() == set() and lake.pending() == 0


def test_a_batch_is_split_into_records_of_at_most_batch_members(lake: DeletionLake) -> None:
    members = [Member(f"data/x/{i}", b"p%d" % i, 0.0) for i in range(BATCH_MEMBERS + 1)]
    records = lake.log.new_batch(lake.repository, "deleted_staged", members, staging_token="t")
    assert [len(r.members) for r in records] == [BATCH_MEMBERS, 1]
    assert [r.address for r in records] == ["data/x/0", f"data/x/{BATCH_MEMBERS}"]
    (single,) = lake.log.new_batch(lake.repository, "deleted_staged", members[:1])
    assert single.address == "data/x/0" and single.path == b"p0" and not single.members


def test_records_written_before_batches_existed_still_decode(lake: DeletionLake) -> None:
    record = lake.log.new_record(lake.repository, "data/old", "deleted_staged", path=b"old")
    fields = msgspec.msgpack.decode(encode(record))
    old = msgspec.msgpack.encode(fields[:-1])  # the array without `members`
    assert decode_pending(old) == record
    number = deletion_keys.partition_for(record.address, lake.log.partition_count())
    pending_key = deletion_keys.pending_key(record.not_before, record.id)
    lake.store.set(deletion_keys.pending_partition(number), pending_key, old)
    assert [item.record for item in lake.log.scan(number)] == [record]
