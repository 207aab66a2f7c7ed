"""Repository tombstones go once nothing needs them (issue 33 item 5; docs/design.md,
"Repository tombstones").

A deleted name keeps a `deleted` record until its instance is cleaned and a grace period
has passed; then the cleaner removes it with `Store.delete_if`, so a creation that
replaced it meanwhile keeps its record. One test per condition shows the tombstone kept
while that condition does not hold.
"""

from __future__ import annotations

from pathlib import Path

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.config import load_settings
from kvlake.errors import UnavailableError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.lifecycle.cleaner import Cleaner
from kvlake.graveler.lifecycle.tombstones import RECHECK, Tombstones
from kvlake.graveler.records import DeletedRepository, Repository
from kvlake.kv import Store
from kvlake.kv.faults import Call, Fault, FaultyStore
from kvlake.kv.memory import MemoryStore
from kvlake.lake import Lake
from tests.graveler.helpers import make_graveler
from tests.graveler.stepping import SteppingStore, run_paused
from tests.support import FakeClock

GRACE = 7200.0


def _lake(store: Store | None = None) -> tuple[Graveler, FakeClock]:
    """A store made since the queue exists: its first cleaner pass found no tombstone to
    queue from before (and marked it so), so every queue entry comes from a cleaning."""
    clock = FakeClock()
    graveler = make_graveler(store or MemoryStore(), clock, MemoryBlockStore())
    Cleaner(graveler).clean_once()
    return graveler, clock


def _create(graveler: Graveler, name: str) -> Repository:
    return graveler.create_bare_repository(name, storage_namespace=f"mem://b/{name}")


def _record(graveler: Graveler, name: str) -> Repository | None:
    return graveler.references.repository_record(name)


def _queue(store: Store) -> list[tuple[float, str, str]]:
    with store.scan(keys.TOMBSTONES) as scan:
        return [keys.parse_tombstone_key(key) for key, _ in scan]


def _deleted_and_cleaned(graveler: Graveler, cleaner: Cleaner, name: str) -> Repository:
    created = _create(graveler, name)
    graveler.delete_repository(name)
    assert cleaner.clean_once().repositories_cleaned == 1
    return created


def test_a_cleaned_tombstone_goes_after_its_grace_and_listings_do_not_change() -> None:
    graveler, clock = _lake()
    cleaner = Cleaner(graveler, tombstone_grace=GRACE)
    _create(graveler, "kept")
    gone = _deleted_and_cleaned(graveler, cleaner, "gone")
    listed = [r.name for r in graveler.list_repositories()]
    assert listed == ["kept"]
    clock.advance(GRACE - 1)
    assert cleaner.clean_once().tombstones_expired == 0
    tombstone = _record(graveler, "gone")
    assert tombstone is not None and tombstone.state == "deleted"
    clock.advance(2)
    assert cleaner.clean_once().tombstones_expired == 1
    assert _record(graveler, "gone") is None
    assert _queue(graveler.store) == []
    assert [r.name for r in graveler.list_repositories()] == listed
    again = _create(graveler, "gone")  # the name is free as it was
    assert again.instance_uid != gone.instance_uid
    assert graveler.get_repository("gone").state == "active"


def test_a_tombstone_whose_instance_is_not_cleaned_is_kept() -> None:
    """A crash between queueing the tombstone and removing the cleaner entry leaves the
    entry: the instance counts as being cleaned, whatever the time."""
    faulty = FaultyStore(MemoryStore())
    graveler, clock = _lake(faulty)
    cleaner = Cleaner(graveler, tombstone_grace=GRACE)
    _create(graveler, "repo1")
    graveler.delete_repository("repo1")
    faulty.arm(Fault(op="delete", partition=keys.DELETED_REPOSITORIES, times=None))
    assert cleaner.clean_once().failures  # queued, then the entry's removal failed
    assert len(_queue(graveler.store)) == 1
    clock.advance(GRACE + 1)
    assert cleaner.clean_once().tombstones_expired == 0
    tombstone = _record(graveler, "repo1")
    assert tombstone is not None and tombstone.state == "deleted"
    due = [when for when, _, _ in _queue(graveler.store)]
    assert min(due) == clock() + RECHECK  # looked at again later, not every pass
    faulty.disarm()
    assert cleaner.clean_once().repositories_cleaned == 1
    clock.advance(GRACE + 1)
    assert cleaner.clean_once().tombstones_expired == 1
    assert _record(graveler, "repo1") is None


def test_a_tombstone_younger_than_the_grace_is_kept_even_when_queued_earlier() -> None:
    """Raising the grace after a tombstone was queued under a shorter one keeps it the
    longer time: the grace is counted from the deletion when the tombstone is judged."""
    graveler, clock = _lake()
    _deleted_and_cleaned(graveler, Cleaner(graveler, tombstone_grace=3600), "repo1")
    clock.advance(3601)
    assert Cleaner(graveler, tombstone_grace=GRACE).clean_once().tombstones_expired == 0
    tombstone = _record(graveler, "repo1")
    assert tombstone is not None and tombstone.state == "deleted"
    assert [when for when, _, _ in _queue(graveler.store)] == [tombstone.state_changed + GRACE]
    clock.advance(GRACE)
    assert Cleaner(graveler, tombstone_grace=GRACE).clean_once().tombstones_expired == 1


def test_a_name_created_again_keeps_its_record_when_the_old_tombstone_is_due() -> None:
    graveler, clock = _lake()
    cleaner = Cleaner(graveler, tombstone_grace=GRACE)
    _deleted_and_cleaned(graveler, cleaner, "repo1")
    again = _create(graveler, "repo1")
    clock.advance(GRACE + 1)
    assert cleaner.clean_once().tombstones_expired == 0
    assert graveler.get_repository("repo1").instance_uid == again.instance_uid
    assert _queue(graveler.store) == []  # the entry named another instance: settled


def test_a_later_instances_tombstone_is_not_removed_by_the_earlier_ones_entry() -> None:
    """The name was created and deleted again and its later instance is still being
    cleaned (its cleanup fails) past the grace: the earlier instance's due entry must not
    remove the later one's tombstone."""
    graveler, clock = _lake()
    first = _deleted_and_cleaned(graveler, Cleaner(graveler, tombstone_grace=GRACE), "repo1")
    _create(graveler, "repo1")
    graveler.delete_repository("repo1")

    def failing(entry: DeletedRepository) -> None:
        if entry.instance_uid != first.instance_uid:
            raise UnavailableError("the action runs' store is down")

    stuck = Cleaner(graveler, tombstone_grace=GRACE, instance_cleanups=(failing,))
    clock.advance(GRACE + 1)
    report = stuck.clean_once()
    assert report.failures and report.tombstones_expired == 0
    tombstone = _record(graveler, "repo1")
    assert tombstone is not None and tombstone.instance_uid != first.instance_uid
    assert _queue(graveler.store) == []  # the earlier entry settled; the later not queued


def test_a_queue_entry_naming_a_live_instance_never_removes_it() -> None:
    """Only a `deleted` record goes, whatever the queue says (a queue entry is a hint)."""
    graveler, clock = _lake()
    live = _create(graveler, "repo1")
    Tombstones(graveler.store, clock=clock, grace=GRACE).queue("repo1", live.instance_uid)
    clock.advance(GRACE + 1)
    assert Cleaner(graveler, tombstone_grace=GRACE).clean_once().tombstones_expired == 0
    assert graveler.get_repository("repo1").instance_uid == live.instance_uid


def test_a_creation_replacing_the_tombstone_as_it_expires_keeps_its_record() -> None:
    """The expiry read the tombstone and judged it obsolete; a creation replaces it right
    before the delete: the guarded delete finds another value and removes nothing."""
    inner = MemoryStore()
    graveler, clock = _lake(inner)
    _deleted_and_cleaned(graveler, Cleaner(graveler, tombstone_grace=GRACE), "repo1")
    clock.advance(GRACE + 1)
    stepping = SteppingStore(inner)
    paused = make_graveler(stepping, clock, MemoryBlockStore(), committed=graveler.committed)
    created: list[Repository] = []

    def create_at_the_delete(call: Call) -> None:
        if call.op == "delete_if" and not created:
            created.append(_create(graveler, "repo1"))

    report = run_paused(
        stepping,
        Cleaner(paused, tombstone_grace=GRACE).clean_once,
        at_each_call=create_at_the_delete,
    )
    assert created, "the expiry never reached its delete"
    assert report.tombstones_expired == 0
    assert graveler.get_repository("repo1").instance_uid == created[0].instance_uid
    assert _queue(inner) == []


def test_an_expiry_between_a_creations_read_and_its_write_lets_the_creation_finish() -> None:
    """The creation read the tombstone, the expiry removes it, the creation's swap on the
    tombstone fails and it tries again on the now free name."""
    inner = MemoryStore()
    graveler, clock = _lake(inner)
    cleaner = Cleaner(graveler, tombstone_grace=GRACE)
    _deleted_and_cleaned(graveler, cleaner, "repo1")
    clock.advance(GRACE + 1)
    stepping = SteppingStore(inner)
    paused = make_graveler(stepping, clock, MemoryBlockStore(), committed=graveler.committed)
    expired: list[int] = []

    def expire_at_the_swap(call: Call) -> None:
        if call.op == "set_if" and call.partition == keys.REPOSITORIES and not expired:
            expired.append(cleaner.clean_once().tombstones_expired)

    created = run_paused(
        stepping, lambda: _create(paused, "repo1"), at_each_call=expire_at_the_swap
    )
    assert expired == [1]
    assert graveler.get_repository("repo1").instance_uid == created.instance_uid


def test_tombstones_older_than_the_queue_are_queued_once_and_go() -> None:
    graveler, clock = _lake()
    _deleted_and_cleaned(graveler, Cleaner(graveler, tombstone_grace=GRACE), "old")
    # A store written before the queue: no entry, no marker.
    graveler.store.drop_partition(keys.TOMBSTONES)
    graveler.store.delete(keys.INDEXES, keys.TOMBSTONES_QUEUED)
    Cleaner(graveler, tombstone_grace=GRACE).clean_once()
    tombstone = _record(graveler, "old")
    assert tombstone is not None
    queued = [(tombstone.state_changed + GRACE, "old", tombstone.instance_uid)]
    assert _queue(graveler.store) == queued
    graveler.store.drop_partition(keys.TOMBSTONES)
    Cleaner(graveler, tombstone_grace=GRACE).clean_once()  # the marker says it was done
    assert _queue(graveler.store) == []
    Tombstones(graveler.store, clock=clock, grace=GRACE).queue_older()
    assert _queue(graveler.store) == []
    graveler.store.delete(keys.INDEXES, keys.TOMBSTONES_QUEUED)
    Cleaner(graveler, tombstone_grace=GRACE).clean_once()
    assert _queue(graveler.store) == queued
    clock.advance(GRACE + 1)
    assert Cleaner(graveler, tombstone_grace=GRACE).clean_once().tombstones_expired == 1
    assert _record(graveler, "old") is None


def test_the_tombstone_grace_setting_reaches_the_lakes_cleaner(tmp_path: Path) -> None:
    gone = []
    for grace in ("3600", "7200"):
        clock = FakeClock()
        env = {"KVLAKE_DATA_DIR": str(tmp_path), "KVLAKE_CLEANER_TOMBSTONE_GRACE": grace}
        lake = Lake(load_settings(env), MemoryStore(), MemoryBlockStore(), clock=clock)
        cleaner = lake.cleaner()
        lake.graveler.create_bare_repository("repo1", storage_namespace="mem://b/repo1")
        lake.graveler.delete_repository("repo1")
        cleaner.clean_once()
        clock.advance(3601)
        gone.append(cleaner.clean_once().tombstones_expired)
    assert gone == [1, 0]
