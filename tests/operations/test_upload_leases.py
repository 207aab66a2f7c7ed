"""Upload leases (kvlake/operations/leases.py): a bulk delete in one process sees the
uploads in flight in another, though no upload writes a lock of its own to the KV.

Two lakes over one store are two server processes. The upload in lake A is paused
mid-body (its lock registered, the delete locks read: it missed the delete lock) while
lake B runs a whole bulk delete over its path. A server's lease is renewed by a thread;
here its ttl is an hour, so the thread renews nothing during a test, and B's waits
between looks at the leases renew A's lease instead: the schedule is fixed.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from kvlake.blockstore import BlockStore
from kvlake.config import DeletionSettings, OperationsSettings, Settings
from kvlake.errors import LockedError
from kvlake.kv import Store
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from kvlake.operations import keys
from tests.operations.helpers import listed, populate, run, start
from tests.support import FakeClock


def _lake(store: Store, blocks: BlockStore, clock: FakeClock, *, ttl: float = 10.0) -> Lake:
    settings = Settings(
        operations=OperationsSettings(batch_size=4, lease_time=30.0, upload_lock_ttl=ttl),
        deletion=DeletionSettings(send_delay=0.0),
    )
    return Lake(settings, store, blocks, clock=clock, token_drop_delay=0)


class _PausedBody(io.BytesIO):
    """A body that runs `meanwhile` once, when its first byte is read."""

    def __init__(self, data: bytes, meanwhile: Callable[[], None]) -> None:
        super().__init__(data)
        self._meanwhile: Callable[[], None] | None = meanwhile

    def read(self, size: int | None = -1) -> bytes:
        if self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            meanwhile()
        return super().read(size)


def _leases(store: Store) -> list[bytes]:
    with store.scan(keys.UPLOAD_LEASES) as scan:
        return [key for key, _ in scan]


HOUR = 3600.0


@pytest.mark.parametrize("renewed", [True, False], ids=["server", "command"])
def test_a_bulk_delete_skips_an_upload_in_flight_in_another_process(
    lake_blocks: BlockStore, renewed: bool
) -> None:
    """The upload read the delete locks before the delete lock was written. A server's
    lease record listed no upload then: the bulk delete must wait for it to list it (two
    renewals) and skip its path, not delete the object under it. A process without the
    renewal thread gives the upload a record of its own, read at once."""
    store, clock = MemoryStore(), FakeClock()
    a, b = _lake(store, lake_blocks, clock, ttl=HOUR), _lake(store, lake_blocks, clock, ttl=HOUR)
    repo = populate(b, ["d/0", "d/1", "d/2"])
    if renewed:
        a.locks.leases.start()
    b.locks.sleep = lambda _seconds: a.locks.leases.renew()
    operations: list[object] = []

    def bulk_delete() -> None:
        operations.append(run(b, start(b, "lakefs://repo1/main/d/")))

    a.catalog.upload(repo, "main", "d/1", _PausedBody(b"new d/1", bulk_delete))
    (operation,) = operations
    counters = operation.counters  # type: ignore[attr-defined]
    assert (counters.deleted, counters.skipped) == (2, 1)
    assert listed(b, repo, "d/") == ["d/1"]
    body = b.catalog.open_object(repo, "main", "d/1")[1]
    with body:
        assert body.read() == b"new d/1"
    a.locks.leases.release()
    assert _leases(store) == []


def test_a_crashed_process_lease_expires_and_stops_protecting(lake_blocks: BlockStore) -> None:
    """A server that died mid-upload renews nothing: the bulk delete waits for its lease
    to expire (not for ever), then deletes the path, and the dead record goes."""
    store, clock = MemoryStore(), FakeClock()
    a, b = _lake(store, lake_blocks, clock, ttl=HOUR), _lake(store, lake_blocks, clock, ttl=1.0)
    repo = populate(b, ["d/0", "d/1"])
    a.locks.leases.start()

    def crash() -> None:
        a.locks.leases.stop()  # the process dies: its lease is never renewed nor released
        a.locks.leases.unregister = lambda registration: None  # type: ignore[method-assign]
        raise SystemExit

    with pytest.raises(SystemExit):
        a.catalog.upload(repo, "main", "d/1", _PausedBody(b"lost", crash))
    assert len(_leases(store)) == 1
    b.locks.sleep = lambda _seconds: clock.advance(HOUR / 10)  # a tenth of its ttl
    operation = run(b, start(b, "lakefs://repo1/main/d/"))
    assert (operation.counters.deleted, operation.counters.skipped) == (2, 0)
    assert _leases(store) == []


def test_an_upload_whose_lease_lapsed_mid_body_rechecks_the_delete_locks(
    lake_blocks: BlockStore,
) -> None:
    """The lease was renewed again after a gap (a stalled process): bulk deletes may have
    passed the path meanwhile without seeing the upload, so it is refused after staging."""
    store, clock = MemoryStore(), FakeClock()
    lake = _lake(store, lake_blocks, clock, ttl=HOUR)
    repo = populate(lake, ["d/0"])
    operation = start(lake, "lakefs://repo1/main/d/")
    lake.locks.leases.start()

    def stall() -> None:
        clock.advance(lake.locks.upload_ttl + 1)
        lake.locks.leases.renew()  # late: a gap
        lake.locks.take_delete_lock(repo, operation.id, "main", "d/", clock() + 60)

    with pytest.raises(LockedError, match="outlived its lock"):
        lake.catalog.upload(repo, "main", "d/1", _PausedBody(b"late", stall))
    lake.locks.leases.release()
