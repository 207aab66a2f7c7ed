"""Listing open pull requests reads an index of the open ones, not the closed records
kept forever (issue 33 item 5). Costs are counted in KV rows and round trips."""

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
    repo = graveler.create_repository("repo1", storage_namespace="mem://b/repo1")
    graveler.create_branch(repo, "dev", "main")
    return graveler, repo


def _open(graveler: Graveler, repo: Repository) -> str:
    return graveler.pulls.create(
        repo, title="t", description="d", author="ada", source="dev", destination="main"
    )


def _open_ids(graveler: Graveler, repo: Repository) -> list[str]:
    return [pull_id for pull_id, _ in graveler.pulls.list(repo, status="open")]


def _index(store: Store, repo: Repository) -> list[str]:
    with store.scan(keys.open_pulls_partition(repo.name, repo.instance_uid)) as scan:
        return [k.decode() for k, _ in scan]


def test_listing_open_pull_requests_reads_no_closed_one() -> None:
    costs = []
    for size in SIZES:
        store = CountingStore(MemoryStore())
        graveler, repo = _setup(store)
        for n in range(size):
            graveler.pulls.update(repo, _open(graveler, repo), status="closed")
            if n % 2:
                graveler.pulls.update(repo, _open(graveler, repo), status="merged")
        still_open = sorted([_open(graveler, repo), _open(graveler, repo)])  # ids sort by ms
        store.reset()
        assert _open_ids(graveler, repo) == still_open
        costs.append((store.rows_read, store.round_trips))
        closed = size + size // 2
        assert len(list(graveler.pulls.list(repo, status="closed"))) == closed  # all kept
    assert costs[0] == costs[1]


def test_a_reopened_pull_request_is_listed_and_a_stale_key_is_dropped_when_met() -> None:
    store = MemoryStore()
    graveler, repo = _setup(store)
    first, second = sorted([_open(graveler, repo), _open(graveler, repo)])
    graveler.pulls.update(repo, first, status="closed")
    assert _open_ids(graveler, repo) == [second]
    graveler.pulls.update(repo, first, status="open")
    assert _open_ids(graveler, repo) == [first, second]
    graveler.pulls.update(repo, second, status="merged")
    store.set(
        keys.open_pulls_partition(repo.name, repo.instance_uid), second.encode(), b""
    )  # a close cut short
    assert _open_ids(graveler, repo) == [first]
    assert _index(store, repo) == [first]


class _RacingStore(MemoryStore):
    """Runs `race` once, right before the first delete of an open-pulls key."""

    def __init__(self) -> None:
        super().__init__()
        self.race: Callable[[], object] | None = None

    def _delete(self, partition: bytes, key: bytes) -> None:
        if partition.startswith(keys.OPEN_PULLS_PREFIX) and self.race is not None:
            race, self.race = self.race, None
            race()
        super()._delete(partition, key)


def test_a_reopening_racing_a_close_keeps_its_key() -> None:
    """A reopening that lands whole between a close's swap and the close's delete of the
    key (its own key writes done) loses its key to that delete: the close reads the record
    again and puts the key back."""
    store = _RacingStore()
    graveler, repo = _setup(store)
    pull_id = _open(graveler, repo)
    store.race = lambda: graveler.pulls.update(repo, pull_id, status="open")
    graveler.pulls.update(repo, pull_id, status="closed")
    assert graveler.pulls.get(repo, pull_id).status == "open"
    assert _open_ids(graveler, repo) == [pull_id]


def test_a_repository_written_before_the_index_gets_it_on_first_listing() -> None:
    store = MemoryStore()
    graveler, repo = _setup(store)
    open_id, closed_id = _open(graveler, repo), _open(graveler, repo)
    graveler.pulls.update(repo, closed_id, status="closed")
    partition = partition_of(repo)
    store.drop_partition(keys.open_pulls_partition(repo.name, repo.instance_uid))  # as before
    store.delete(partition, keys.OPEN_PULLS_BUILT)

    reopened = make_graveler(store, FakeClock(), MemoryBlockStore())
    assert _open_ids(reopened, repo) == [open_id]
    assert _index(store, repo) == [open_id]
    store.get(partition, keys.OPEN_PULLS_BUILT)  # marked: never built again
