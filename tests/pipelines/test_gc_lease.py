"""One garbage collection run per repository across processes: the lease in the KV.

Two processes are two stores opened on one SQLite file or PostgreSQL table, each
with its own `GcLeases` and holder name; time is a fake clock both share, and a
race is a read of the other's step placed between two KV calls, never a hope
that threads collide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kvlake.blockstore import open_blockstore
from kvlake.config import Settings, load_settings
from kvlake.errors import ConflictError
from kvlake.graveler import make_rules
from kvlake.kv import Store, open_store
from kvlake.kv.faults import FaultyStore
from kvlake.lake import Lake
from kvlake.pipelines.gc.collector import GarbageCollector
from kvlake.pipelines.gc.lease import GC_LEASES, LEASE_SECONDS, GcLeases, HeldGcLease
from kvlake.pipelines.gc.runs import GcRuns
from tests.support import FakeClock, store_params

SQL_DRIVERS = store_params("postgres", "sqlite")


@pytest.fixture
def two_stores(store_url: str) -> Iterator[tuple[Store, Store]]:
    """One KV seen by two processes: a server's store and `kvlake gc run`'s."""
    with open_store(store_url) as server, open_store(store_url) as command:
        yield server, command


def leases(store: Store, clock: FakeClock, holder: str) -> GcLeases:
    return GcLeases(store, clock=clock, holder=holder)


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_a_second_run_in_another_process_is_refused_naming_the_running_one(
    two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    server, command = (
        leases(two_stores[0], clock, "server:1"),
        leases(two_stores[1], clock, "cli:2"),
    )
    held = server.acquire("repo1", "run-a")
    clock.advance(5)
    with pytest.raises(ConflictError) as refused:
        command.acquire("repo1", "run-b")
    message = str(refused.value)
    assert "repository 'repo1' has garbage collection run 'run-a' going" in message
    assert "held by server:1, started 5 s ago" in message
    assert f"lease to expire in {LEASE_SECONDS - 5:.0f} s" in message
    with pytest.raises(ConflictError, match="run 'run-a'"):
        command.acquire("repo1", "run-a")  # the same run retried elsewhere is a second run
    command.release(command.acquire("repo2", "run-c"))  # another repository is free
    current = command.current("repo1")
    assert current is not None and (current.run_id, current.holder) == ("run-a", "server:1")
    server.release(held)
    assert command.current("repo1") is None
    command.acquire("repo1", "run-b")


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_a_renewed_lease_holds_and_a_lapsed_one_is_taken_over(
    two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    server, command = (
        leases(two_stores[0], clock, "server:1"),
        leases(two_stores[1], clock, "cli:2"),
    )
    held = server.acquire("repo1", "run-a")
    clock.advance(LEASE_SECONDS - 1)
    server.renew(held)
    clock.advance(LEASE_SECONDS - 1)  # past the first expiry, within the renewed one
    with pytest.raises(ConflictError, match="run 'run-a'"):
        command.acquire("repo1", "run-b")
    clock.advance(2)  # its process stopped renewing: the lease lapsed
    taken = command.acquire("repo1", "run-b")
    with pytest.raises(ConflictError) as lost:
        server.renew(held)
    assert "run 'run-a' of repository 'repo1' lost its lease" in str(lost.value)
    assert "run 'run-b' (held by cli:2) holds it now" in str(lost.value)
    server.release(held)  # a late release leaves the taker's lease alone
    current = server.current("repo1")
    assert current is not None and current.run_id == "run-b"
    command.release(taken)


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_the_runner_adopts_its_own_runs_lease_and_never_another_runs(
    two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    """A server's start takes the lease; the worker whose runner claims that run's record
    takes it over (and the start's holder can no longer renew it). A live lease of another
    run is refused to it, as to any start."""
    server, worker = (
        leases(two_stores[0], clock, "server:1"),
        leases(two_stores[1], clock, "worker:2"),
    )
    started = server.acquire("repo1", "run-a")
    clock.advance(5)
    adopted = worker.adopt("repo1", "run-a")
    current = worker.current("repo1")
    assert current is not None and (current.run_id, current.holder) == ("run-a", "worker:2")
    assert current.expires == clock() + LEASE_SECONDS
    with pytest.raises(ConflictError, match="lost its lease"):
        server.renew(started)
    with pytest.raises(ConflictError, match="run 'run-a' going \\(held by worker:2"):
        server.adopt("repo1", "run-b")
    worker.release(adopted)
    clock.advance(1)
    worker.release(worker.adopt("repo1", "run-b"))  # a free lease: taken as `acquire` would


class _Ticks:
    """A stop event for `HeldGcLease.keep`: each wait moves the clock; stop after `times`."""

    def __init__(self, clock: FakeClock, times: int, between: Callable[[], None] = lambda: None):
        self._clock, self._left, self._between = clock, times, between

    def wait(self, timeout: float | None = None) -> bool:
        if self._left == 0:
            return True
        self._left -= 1
        self._clock.advance(timeout or 0)
        self._between()
        return False


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_a_running_holder_keeps_its_lease_past_many_lease_times(
    two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    server, command = (
        leases(two_stores[0], clock, "server:1"),
        leases(two_stores[1], clock, "cli:2"),
    )
    held = server.acquire("repo1", "run-a")
    started = clock()
    held.keep(_Ticks(clock, 30), every=LEASE_SECONDS / 3)  # ten lease times
    assert clock() - started == 10 * LEASE_SECONDS
    with pytest.raises(ConflictError, match="run 'run-a'"):
        command.acquire("repo1", "run-b")
    held.check()


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_a_holder_that_lost_its_lease_stops_at_its_next_check(
    two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    server, command = (
        leases(two_stores[0], clock, "server:1"),
        leases(two_stores[1], clock, "cli:2"),
    )
    held = server.acquire("repo1", "run-a")
    clock.advance(LEASE_SECONDS + 1)  # the holder stalled past its lease
    command.acquire("repo1", "run-b")
    held.keep(_Ticks(clock, 3), every=1)
    with pytest.raises(ConflictError, match="lost its lease"):
        held.check()


class _ReadThen(FaultyStore):
    """Runs `step` (another process's move) right after the first read of a lease."""

    def __init__(self, inner: Store, step: Callable[[], None]) -> None:
        super().__init__(inner)
        self._step: Callable[[], None] | None = step

    def _get(self, partition: bytes, key: bytes) -> bytes:
        try:
            return super()._get(partition, key)
        finally:
            if partition == GC_LEASES and self._step is not None:
                step, self._step = self._step, None
                step()


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_of_two_starts_at_once_exactly_one_takes_the_lease(
    two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    """Both read "no lease"; the command's write lands between the server's read and write."""
    command = leases(two_stores[1], clock, "cli:2")
    taken = []
    racing = _ReadThen(two_stores[0], lambda: taken.append(command.acquire("repo1", "run-b")))
    with pytest.raises(ConflictError, match="run 'run-b'"):
        leases(racing, clock, "server:1").acquire("repo1", "run-a")
    assert len(taken) == 1
    current = command.current("repo1")
    assert current is not None and current.run_id == "run-b"


@pytest.fixture
def lake(
    store_url: str, two_stores: tuple[Store, Store], clock: FakeClock, tmp_path: Path
) -> Iterator[Lake]:
    """The server's lake, over the first store; the second is `kvlake gc run`'s process.
    Its settings name that store: a Spark task opens the lake from them."""
    settings = Settings(data_dir=str(tmp_path), kv_url=store_url)
    with open_blockstore(settings.blockstore_url) as blocks:
        lake = Lake(settings, two_stores[0], blocks, clock=clock)
        repo = lake.graveler.create_repository("repo1", storage_namespace="local://repo1")
        lake.graveler.retention.set_rules(repo, make_rules(7))
        yield lake


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_a_server_refuses_a_run_while_the_command_runs_one(
    lake: Lake, two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    command = leases(two_stores[1], clock, "cli:2")
    held = command.acquire("repo1", "run-cli")
    runs = GcRuns(lake)
    for mode in ("run", "mark"):
        with pytest.raises(ConflictError, match="run 'run-cli' going \\(held by cli:2"):
            runs.start("repo1", mode=mode)
    command.release(held)


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_the_command_refuses_a_run_while_a_server_runs_one(
    spark: SparkSession, lake: Lake, two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    server = leases(two_stores[1], clock, "server:1")
    held = server.acquire("repo1", "run-server")
    collector = GarbageCollector(spark, lake, clock=clock)
    with pytest.raises(ConflictError, match="run 'run-server' going \\(held by server:1"):
        collector.run("repo1")
    with pytest.raises(ConflictError, match="run 'run-server'"):
        collector.mark("repo1")
    with pytest.raises(ConflictError, match="run 'run-server'"):
        collector.sweep("repo1", "01m8a1b2c3d4e5f6g7h8j9k0m1")
    server.release(held)
    summary = collector.run("repo1", grace_period=0)  # free again: the run holds it, then not
    assert summary.state == "swept"
    assert server.current("repo1") is None


@pytest.mark.parametrize("store_url", SQL_DRIVERS, indirect=True)
def test_a_run_that_lost_its_lease_stops_before_its_next_phase_deletes_anything(
    spark: SparkSession, lake: Lake, two_stores: tuple[Store, Store], clock: FakeClock
) -> None:
    """The run stalls past its lease after its first phase (no renewal could land), and
    the command takes the repository over: the run's next phase refuses to start."""
    orphan = "data/20250101T00/orphan"
    namespace = lake.graveler.get_repository("repo1").storage_namespace
    lake.blockstore.put(namespace, orphan, b"orphan")
    command = leases(two_stores[1], clock, "cli:2")
    taken: list[HeldGcLease] = []

    def stall_then_lose(phase: str, _: object) -> None:
        if phase == "staged" and not taken:
            clock.advance(LEASE_SECONDS + 1)
            taken.append(command.acquire("repo1", "run-cli"))

    collector = GarbageCollector(spark, lake, clock=clock, progress=stall_then_lose)
    with pytest.raises(ConflictError) as lost:
        collector.run("repo1", grace_period=0)
    assert "lost its lease (run 'run-cli' (held by cli:2) holds it now)" in str(lost.value)
    assert lake.blockstore.exists(namespace, orphan)
    current = command.current("repo1")
    assert current is not None and current.run_id == "run-cli"  # its release left it alone


def test_kvlake_gc_grace_period_is_a_runs_default_and_a_request_overrides_it(
    tmp_path: Path, clock: FakeClock
) -> None:
    """The setting lives with the others (KVLAKE_GC_*); a run started without a grace
    period records it, one started with one keeps its own."""
    environ = {"KVLAKE_DATA_DIR": str(tmp_path), "KVLAKE_GC_GRACE_PERIOD": "7200"}
    settings = load_settings(environ)
    assert settings.gc.grace_period == 7200
    with (
        open_store("mem://") as store,
        open_blockstore(f"local://{tmp_path}/blocks") as blocks,
    ):
        lake = Lake(settings, store, blocks, clock=clock)
        repo = lake.graveler.create_repository("repo1", storage_namespace="local://repo1")
        lake.graveler.retention.set_rules(repo, make_rules(7))
        runs = GcRuns(lake)
        first = runs.start("repo1", mode="mark")
        clock.advance(LEASE_SECONDS + 1)  # no runner claims it: its lease lapses
        second = runs.start("repo1", mode="mark", grace_period=60)
        graces = {op.gc.run_id: op.gc.grace_period for op in lake.ledger.list() if op.gc}
        assert graces == {first: 7200, second: 60}
