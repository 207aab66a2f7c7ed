"""The KV round trips of the request paths (issue 28), pinned so a reduction is kept.

Counted with CountingStore on the drivers users run (SQLite, PostgreSQL): one upload
and one stat (each after the API's `read_branch`; the stat's reads the path's staged entry
too, in the tokens an earlier stat of the branch saw), one listing of 1,000 entries and one
branch creation, through the Lake the server builds. Both drivers cost the same today.
The figures are today's; lower one when a change saves a round trip, never raise it
without saying why in the commit.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kvlake.blockstore.registry import open_blockstore
from kvlake.config import OperationsSettings, Settings
from kvlake.kv import CountingStore, Store
from tests.deletion.helpers import DeletionLake
from tests.support import store_params

EXPECTED = {
    # 9: read_branch's 2, the explicit lock and the delete locks, the deletion log's
    # intent (append, then withdraw with one delete_if on the bytes appended: 2), the
    # staged entry's read and swap, the writer flow's re-read of the branch. The upload's
    # lock is in its process's lease: no KV call.
    "upload": {"postgres": 9, "sqlite": 9},
    "stat": {"postgres": 1, "sqlite": 1},
    "list": {"postgres": 3, "sqlite": 3},
    "create_branch": {"postgres": 6, "sqlite": 6},
}


@pytest.mark.parametrize("store_url", store_params("postgres", "sqlite"), indirect=True)
def test_request_round_trips(store_url: str, any_store: Store, tmp_path: Path) -> None:
    driver = "postgres" if store_url.startswith("postgres") else "sqlite"
    store = CountingStore(any_store)
    with open_blockstore(f"local://{tmp_path}/blocks") as blocks:
        # A server renews its upload lease from a thread (every 1/20 of the ttl): an hour's
        # ttl keeps the renewals out of the counted calls.
        settings = Settings(operations=OperationsSettings(upload_lock_ttl=3600))
        lake = DeletionLake(store, blocks, settings=settings).lake
        lake.locks.leases.start()
        graveler, catalog = lake.graveler, lake.catalog
        repository = graveler.get_repository("repo1")
        for n in range(1000):
            catalog.upload(repository, "main", f"f/{n:04d}", io.BytesIO(b"x"))
        counted: dict[str, int] = {}
        calls: dict[str, object] = {}
        # As the API's routes do: the record, branch and rules read together, handed down.
        store.reset()
        read = graveler.read_branch("repo1", "main")
        catalog.upload(read.repository, "main", "one", io.BytesIO(b"x" * 1024), read=read)
        counted["upload"], calls["upload"] = store.round_trips, dict(store.calls)
        read = graveler.read_branch("repo1", "main", path="f/0000")  # as a server's first stat:
        catalog.stat(read.repository, "main", "f/0000", read=read)  # the branch's tokens known
        store.reset()
        read = graveler.read_branch("repo1", "main", path="one")
        catalog.stat(read.repository, "main", "one", read=read)
        counted["stat"], calls["stat"] = store.round_trips, dict(store.calls)
        store.reset()
        read = graveler.read_branch("repo1", "main")  # as the listing route does
        page = catalog.list_objects(read.repository, "main", prefix="f/", read=read)
        assert len(page.results) == 1000
        counted["list"], calls["list"] = store.round_trips, dict(store.calls)
        store.reset()
        read = graveler.read_branch("repo1", "main")  # as the route does: record and source
        graveler.create_branch(read.repository, "b1", "main", read=read)
        counted["create_branch"], calls["create_branch"] = store.round_trips, dict(store.calls)
        lake.locks.leases.release()
    assert counted == {name: by[driver] for name, by in EXPECTED.items()}, (counted, calls)
