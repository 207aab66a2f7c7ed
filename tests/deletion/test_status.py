"""Status and Prometheus metrics (served at /metrics) say what is pending, due, leased,
done and dead-lettered."""

from __future__ import annotations

import re

from prometheus_client import CollectorRegistry, generate_latest

from kvlake.api.observability import DeletionCollector
from kvlake.deletion import deletion_status
from kvlake.deletion import keys as deletion_keys
from kvlake.deletion.leases import Leases
from tests.deletion.blockstores import FaultyBlockStore
from tests.deletion.helpers import DeletionLake


def overwrite_twice(lake: DeletionLake, paths: list[str]) -> None:
    for path in paths:
        lake.upload(path, b"1")
        lake.upload(path, b"2")


def test_status_counts_pending_due_and_leased_per_partition(lake: DeletionLake) -> None:
    overwrite_twice(lake, [f"p{i}" for i in range(12)])
    status = deletion_status(lake.log)
    assert status.pending == 12 and sum(p.due for p in status.partitions) == 0
    assert [p.number for p in status.partitions] == [0, 1, 2, 3]
    lake.clock.advance(90)
    Leases(lake.store).acquire(2, "someone", lake.clock(), 30.0)
    status = deletion_status(lake.log)
    assert sum(p.due for p in status.partitions) == 12
    assert [p.leased(status.now) for p in status.partitions] == [False, False, True, False]
    assert status.oldest_pending_age == 90.0


def test_counters_come_from_the_leases_and_never_go_backwards(lake: DeletionLake) -> None:
    overwrite_twice(lake, [f"p{i}" for i in range(8)])
    lake.clock.advance(60)
    lake.worker().run_once()
    first = deletion_status(lake.log)
    assert sum(p.deleted for p in first.partitions) == 8 and first.pending == 0
    overwrite_twice(lake, ["q"])
    lake.clock.advance(60)
    lake.worker(FaultyBlockStore(lake.blocks, lambda call: "before"), owner="w2").run_once()
    second = deletion_status(lake.log)
    assert sum(p.deleted for p in second.partitions) == 8
    assert sum(p.retried for p in second.partitions) == 1


def test_metrics_are_prometheus_exposition_with_every_metric(lake: DeletionLake) -> None:
    overwrite_twice(lake, ["a", "b"])
    lake.clock.advance(60)
    lake.worker().run_once()
    overwrite_twice(lake, ["c"])
    lake.clock.advance(30)
    lake.store.set(deletion_keys.DEAD_LETTERS, b"x", b"not even a record")
    registry = CollectorRegistry()
    registry.register(DeletionCollector(lake.log))
    text = generate_latest(registry).decode()
    for name in (
        "pending",
        "due",
        "leased",
        "deleted_total",
        "retried_total",
        "dead_lettered_total",
        "kept_total",
    ):
        assert f"# TYPE kvlake_deletion_{name} " in text
        assert f'kvlake_deletion_{name}{{partition="3"}} ' in text
    values = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }
    assert sum(v for k, v in values.items() if k.startswith("kvlake_deletion_deleted_total")) == 2
    assert sum(v for k, v in values.items() if k.startswith("kvlake_deletion_pending{")) == 1
    assert values["kvlake_deletion_dead_letters"] == 1
    assert values["kvlake_deletion_oldest_pending_age_seconds"] == 30.0
    assert all(re.fullmatch(r"[a-z_]+(\{partition=\"\d+\"\})?", key) for key in values)
