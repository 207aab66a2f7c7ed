"""Listing visible branches reads an index of them, never the hidden ones (issue 33
item 5). Costs are counted in KV rows and round trips."""

from __future__ import annotations

from collections.abc import Callable

from kvlake.blockstore.memory import MemoryBlockStore
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository
from kvlake.graveler.refs.store import partition_of
from kvlake.kv import CountingStore, Store
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import make_graveler
from tests.support import FakeClock

SIZES = (5, 300)


def _setup(store: Store) -> tuple[Graveler, Repository]:
    graveler = make_graveler(store, FakeClock(), MemoryBlockStore())
    return graveler, graveler.create_repository("repo1", storage_namespace="mem://b/repo1")


def _visible(graveler: Graveler, repo: Repository, **bounds: str) -> list[str]:
    return [n for n, _ in graveler.list_branches(repo, visible_only=True, **bounds)]


def _index(store: Store, repo: Repository) -> list[str]:
    with store.scan(keys.visible_branches_partition(repo.name, repo.instance_uid)) as scan:
        return [k.decode() for k, _ in scan]


def test_listing_visible_branches_reads_no_hidden_one() -> None:
    costs = []
    for size in SIZES:
        store = CountingStore(MemoryStore())
        graveler, repo = _setup(store)
        for n in range(size):  # sorting before the visible ones, as lakeFS's tx-... names do
            graveler.create_branch(repo, f"aaa{n:04d}", "main", hidden=True)
        graveler.create_branch(repo, "dev", "main")
        store.reset()
        assert _visible(graveler, repo) == ["dev", "main"]
        assert _visible(graveler, repo, after="dev") == ["main"]
        assert _visible(graveler, repo, prefix="d") == ["dev"]
        costs.append((store.rows_read, store.round_trips))
        assert len(list(graveler.list_branches(repo))) == size + 2  # all, on request
    assert costs[0] == costs[1]


def test_a_deleted_branch_leaves_the_index_and_a_stale_key_is_dropped_when_met() -> None:
    store = MemoryStore()
    graveler, repo = _setup(store)
    for name in ("dev", "dev-x", "old"):
        graveler.create_branch(repo, name, "main")
    graveler.delete_branch(repo, "old")
    assert _index(store, repo) == ["dev", "dev-x", "main"]
    assert _visible(graveler, repo, after="dev") == ["dev-x", "main"]
    store.set(
        keys.visible_branches_partition(repo.name, repo.instance_uid), b"gone", b""
    )  # a deletion cut short
    assert _visible(graveler, repo) == ["dev", "dev-x", "main"]
    assert _index(store, repo) == ["dev", "dev-x", "main"]


class _RacingStore(MemoryStore):
    """Runs `race` once, right before the first delete of a visible-branch key."""

    def __init__(self) -> None:
        super().__init__()
        self.race: Callable[[], object] | None = None

    def _delete(self, partition: bytes, key: bytes) -> None:
        if partition.startswith(keys.VISIBLE_BRANCHES_PREFIX) and self.race is not None:
            race, self.race = self.race, None
            race()
        super()._delete(partition, key)


def test_a_creation_racing_a_deletion_of_the_same_name_keeps_its_key() -> None:
    """A creation landing whole between a deletion's record delete and its key delete
    loses its key to that delete: the deletion reads the record again and puts it back."""
    store = _RacingStore()
    graveler, repo = _setup(store)
    graveler.create_branch(repo, "dev", "main")
    store.race = lambda: graveler.create_branch(repo, "dev", "main")
    graveler.delete_branch(repo, "dev")
    assert _visible(graveler, repo) == ["dev", "main"]


def test_a_repository_written_before_the_index_gets_it_on_first_listing() -> None:
    store = MemoryStore()
    graveler, repo = _setup(store)
    graveler.create_branch(repo, "dev", "main")
    graveler.create_branch(repo, "tx", "main", hidden=True)
    partition = partition_of(repo)
    store.drop_partition(keys.visible_branches_partition(repo.name, repo.instance_uid))
    store.delete(partition, keys.VISIBLE_BRANCHES_BUILT)

    reopened = make_graveler(store, FakeClock(), MemoryBlockStore())
    assert _visible(reopened, repo) == ["dev", "main"]
    assert _index(store, repo) == ["dev", "main"]
    store.get(partition, keys.VISIBLE_BRANCHES_BUILT)  # marked: never built again


class _ListingInCreation(MemoryStore):
    """Runs `race` once, right before a branch record is written by compare-and-swap."""

    def __init__(self) -> None:
        super().__init__()
        self.race: Callable[[], object] | None = None

    def _set_if(self, partition: bytes, key: bytes, value: bytes, predicate: object) -> None:
        if key.startswith(keys.BRANCH_PREFIX) and self.race is not None:
            race, self.race = self.race, None
            race()
        super()._set_if(partition, key, value, predicate)  # type: ignore[arg-type]


def test_a_listing_between_a_creations_key_and_its_record_does_not_lose_it() -> None:
    """A listing meeting the new key before the record exists takes it out (it cannot tell
    a slow creation from a deletion cut short): the creation writes it again after."""
    store = _ListingInCreation()
    graveler, repo = _setup(store)
    store.race = lambda: _visible(graveler, repo)
    graveler.create_branch(repo, "dev", "main")
    assert store.race is None  # the listing ran inside the creation
    assert _visible(graveler, repo) == ["dev", "main"]
