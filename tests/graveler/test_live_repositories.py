"""Repository listings read the live-instance index, not the tombstones (issue 33 item 5).

Counted in KV rows read and round trips (CountingStore): the same listing runs
beside few and many deleted repositories, and must read the same.
"""

from __future__ import annotations

from kvlake import ids
from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.kv import CountingStore, Store
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler
from tests.support import FakeClock

SIZES = (5, 300)


def _graveler(store: Store) -> Graveler:
    return make_graveler(store, FakeClock(), MemoryBlockStore())


def _live_keys(store: Store) -> list[bytes]:
    with store.scan(keys.LIVE_REPOSITORIES) as scan:
        return [key for key, _ in scan]


def test_a_listing_reads_no_deleted_repository() -> None:
    """Deleted names keep their tombstones (a creation replaces one by compare-and-swap),
    but the first page of listRepositories reads as much beside 5 of them as beside 300."""
    costs = []
    for size in SIZES:
        store = CountingStore(MemoryStore())
        graveler = _graveler(store)
        for n in range(size):
            name = f"aaa{n:04d}"
            graveler.create_bare_repository(name, storage_namespace=f"mem://b/{name}")
            graveler.delete_repository(name)
        for name in ("mmm1", "mmm2"):
            graveler.create_bare_repository(name, storage_namespace=f"mem://b/{name}")
        store.reset()
        assert [r.name for r in graveler.list_repositories()] == ["mmm1", "mmm2"]
        assert [r.name for r in graveler.list_repositories(after="mmm1")] == ["mmm2"]
        costs.append((store.rows_read, store.round_trips))
    assert costs[0] == costs[1]


def test_listing_order_and_bounds_follow_the_names() -> None:
    """Index keys sort as the names do (`abc` before `abc-d`), and `after` and `prefix`
    bound them as they bound names."""
    graveler = _graveler(MemoryStore())
    for name in ("abc-d", "abc", "abcd", "bcd"):
        graveler.create_bare_repository(name, storage_namespace=f"mem://b/{name}")
    assert [r.name for r in graveler.list_repositories()] == ["abc", "abc-d", "abcd", "bcd"]
    assert [r.name for r in graveler.list_repositories(after="abc")] == ["abc-d", "abcd", "bcd"]
    assert [r.name for r in graveler.list_repositories(prefix="abc-")] == ["abc-d"]
    assert [r.name for r in graveler.list_repositories(after="abc-d", prefix="abc")] == ["abcd"]


def test_a_recreated_name_is_listed_once_and_a_stale_key_is_dropped_when_met() -> None:
    """A deletion cut short between its tombstone and its unlisting leaves the old
    instance's key: the listing skips it and drops it, and never drops a newer instance's."""
    store = MemoryStore()
    graveler = _graveler(store)
    old = graveler.create_bare_repository("repo", storage_namespace="mem://b/old")
    graveler.delete_repository("repo")
    new = graveler.create_bare_repository("repo", storage_namespace="mem://b/new")
    store.set(keys.LIVE_REPOSITORIES, keys.live_repository_key("repo", old.instance_uid), b"")
    graveler.create_bare_repository("solo", storage_namespace="mem://b/solo")
    graveler.delete_repository("solo")
    solo = graveler.references.repository_record("solo")
    assert solo is not None
    store.set(keys.LIVE_REPOSITORIES, keys.live_repository_key("solo", solo.instance_uid), b"")
    assert [(r.name, r.instance_uid) for r in graveler.list_repositories()] == [
        ("repo", new.instance_uid)
    ]
    assert _live_keys(store) == [keys.live_repository_key("repo", new.instance_uid)]


def test_a_store_written_before_the_live_index_gets_it_on_first_use() -> None:
    """Opening a store whose records predate the index builds it once (active, and
    initial or deleting ones; not tombstones), then marks it built."""
    store = MemoryStore()
    graveler = _graveler(store)
    for name in ("aaa", "bbb", "ccc"):
        graveler.create_bare_repository(name, storage_namespace=f"mem://b/{name}")
    graveler.delete_repository("bbb")
    store.drop_partition(keys.LIVE_REPOSITORIES)  # as a store written before the index
    store.delete(keys.INDEXES, keys.LIVE_INDEX_BUILT)

    counted = CountingStore(store)
    reopened = _graveler(counted)
    assert [r.name for r in reopened.list_repositories()] == ["aaa", "ccc"]
    assert len(_live_keys(store)) == 2
    store.get(keys.INDEXES, keys.LIVE_INDEX_BUILT)  # marked: never built again
    counted.reset()
    assert [r.name for r in reopened.list_repositories()] == ["aaa", "ccc"]
    assert counted.rows_read == 4  # two index keys, two records: no record scan
    assert [r.name for r in _graveler(store).list_repositories()] == ["aaa", "ccc"]


def test_a_creation_in_flight_keeps_its_key() -> None:
    """A creation writes its marker, then its key, then its record: a listing between the
    key and the record finds the record naming another instance (or none) and must keep
    the key, or the repository would never be listed once created."""
    store = MemoryStore()
    graveler = _graveler(store)
    graveler.create_bare_repository("aaa", storage_namespace="mem://b/aaa")
    graveler.delete_repository("aaa")
    in_flight = {"aaa": ids.new_uid(), "bbb": ids.new_uid()}  # over a tombstone; a new name
    for name, uid in in_flight.items():
        store.set(keys.CREATIONS, keys.creation_key(name, uid), b"0")
        store.set(keys.LIVE_REPOSITORIES, keys.live_repository_key(name, uid), b"")
    assert list(graveler.list_repositories()) == []
    assert _live_keys(store) == [keys.live_repository_key(n, u) for n, u in in_flight.items()]
