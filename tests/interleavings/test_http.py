"""The interleaving harness driving HTTP requests: the writer-flow races, through the API.

Each operation is one request to its own in-process app over one shared lake.
The app's request and stream pools have one thread each, bound to the
operation (`Scheduler.adopt`), so every KV and blockstore call a handler makes
is a step of that request and the scheduler decides their order, as in
test_lake.py. After each schedule the cleaner and the deletion workers drain
and the same checks run: no acknowledged write lost, no referenced blob
deleted, nothing orphaned.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from kvlake.api.services import Services
from kvlake.blockstore import BlockStore
from kvlake.kv import Store, open_store
from kvlake.kv.memory import MemoryStore
from tests.api.inprocess import app_over, client_of, settings_in
from tests.deletion.helpers import DeletionLake
from tests.interleavings.scheduler import (
    Check,
    Outcome,
    Scenario,
    Scheduler,
    SteppingBlockStore,
    SteppingStore,
    explore,
)
from tests.interleavings.test_lake import _settled
from tests.support import backends
from tests.support.backends import budget, paired_params

REPO = "repo1"
_lakes = itertools.count()


@dataclass
class _Pools:
    """What the routing reads as `app.state.executors`: one thread per pool, one operation."""

    requests: ThreadPoolExecutor
    streams: ThreadPoolExecutor


class Served:
    """A deletion lake with repository `repo1` (in a namespace of its own on `blocks`),
    served to operations over HTTP."""

    def __init__(
        self,
        scheduler: Scheduler,
        data_dir: Path,
        blocks: BlockStore,
        new_store: Callable[[], Store] = MemoryStore,
    ) -> None:
        self.scheduler = scheduler
        # A worker racing the requests acts at once; no credential cache whose
        # wall-clock expiry would change a request's steps from one run to the next.
        self.settings = settings_in(
            data_dir, KVLAKE_DELETION_SEND_DELAY="0", KVLAKE_AUTH_CACHE_TTL="0"
        )
        self.lake = DeletionLake(
            SteppingStore(new_store(), scheduler),
            SteppingBlockStore(blocks, scheduler),
            settings=self.settings,
            namespace=backends.namespace(blocks, f"repo{next(_lakes)}"),
        )
        self.services = Services(self.lake.lake)
        self.services.install()

    def request(self, index: int, method: str, url: str, **kwargs: Any) -> Callable[[], int]:
        """Operation `index`: one request, answered by an app whose threads are its own."""

        def operation() -> int:
            app = app_over(self.services)
            pools = _Pools(
                *(
                    ThreadPoolExecutor(1, initializer=self.scheduler.adopt, initargs=(index,))
                    for _ in range(2)
                )
            )
            app.state.executors = pools

            async def send() -> int:
                async with client_of(app) as client:
                    response = await client.request(method, url, **kwargs)
                    return response.status_code

            try:
                return anyio.run(send)
            finally:
                pools.requests.shutdown()
                pools.streams.shutdown()

        return operation

    def upload(self, index: int, path: str, body: bytes) -> Callable[[], int]:
        return self.request(
            index,
            "POST",
            f"/repositories/{REPO}/branches/main/objects",
            params={"path": path},
            content=body,
        )

    def commit(self, index: int) -> Callable[[], int]:
        return self.request(
            index, "POST", f"/repositories/{REPO}/branches/main/commits", json={"message": "m"}
        )


def _read(lake: DeletionLake, path: str) -> bytes:
    _, reader = lake.catalog.open_object(lake.repository, "main", path)
    with reader:
        return reader.read()


def _status(outcome: Outcome) -> int:
    assert outcome.acknowledged, outcome.error
    assert isinstance(outcome.value, int)
    return outcome.value


def _scenario(
    build: Callable[[Served], tuple[Sequence[Callable[[], object]], Check]],
    data_dir: Path,
    blocks: BlockStore,
    new_store: Callable[[], Store] = MemoryStore,
) -> Scenario:
    def scenario(scheduler: Scheduler) -> tuple[Sequence[Callable[[], object]], Check]:
        return build(Served(scheduler, data_dir, blocks, new_store))

    return scenario


def upload_and_commit(served: Served) -> tuple[Sequence[Callable[[], object]], Check]:
    lake = served.lake
    lake.upload("base")
    lake.commit()
    lake.upload("filler")  # staged, so the commit seals the token the upload writes to

    def check(outcomes: list[Outcome]) -> None:
        assert _status(outcomes[0]) == 201
        assert _status(outcomes[1]) in (201, 400)  # 400: nothing was left to commit
        assert _read(lake, "p") == b"new"
        _settled(lake)

    return [served.upload(0, "p", b"new"), served.commit(1)], check


def two_uploads_and_a_commit(served: Served) -> tuple[Sequence[Callable[[], object]], Check]:
    lake = served.lake
    lake.upload("filler")

    def check(outcomes: list[Outcome]) -> None:
        assert _status(outcomes[0]) == 201 and _status(outcomes[1]) == 201
        assert _read(lake, "p") in (b"a", b"b")
        _settled(lake)

    return [served.upload(0, "p", b"a"), served.upload(1, "p", b"b"), served.commit(2)], check


def reset_key_and_commit(served: Served) -> tuple[Sequence[Callable[[], object]], Check]:
    lake = served.lake
    lake.upload("base")
    lake.commit()
    lake.upload("p", b"staged")
    lake.upload("q", b"stays")
    reset = served.request(
        0, "PUT", f"/repositories/{REPO}/branches/main", json={"type": "object", "path": "p"}
    )

    def check(outcomes: list[Outcome]) -> None:
        assert _status(outcomes[0]) == 204
        assert _read(lake, "q") == b"stays"
        _settled(lake)

    return [reset, served.commit(1)], check


def reset_key_commit_and_worker(served: Served) -> tuple[Sequence[Callable[[], object]], Check]:
    operations, check = reset_key_and_commit(served)
    return [*operations, served.lake.worker().run_once], check


def commit_and_hard_reset(served: Served) -> tuple[Sequence[Callable[[], object]], Check]:
    lake = served.lake
    lake.upload("base")
    first = lake.commit()
    lake.upload("p", b"staged")
    reset = served.request(
        1, "PUT", f"/repositories/{REPO}/branches/main/hard_reset", params={"ref": first}
    )

    def check(outcomes: list[Outcome]) -> None:
        # 201: committed (its commit stays readable); 400: the reset had dropped the
        # staged data before the commit looked; 412: the reset took it mid-commit and
        # the commit says so instead of claiming the reset's commit as its own.
        assert _status(outcomes[0]) in (201, 400, 412), outcomes[0]
        assert _status(outcomes[1]) == 204
        _settled(lake)

    return [served.commit(0), reset], check


SCENARIOS = {
    "upload and commit": (upload_and_commit, 40, 8),
    "two uploads and a commit": (two_uploads_and_a_commit, 40, 8),
    "reset of a key and commit": (reset_key_and_commit, 40, 8),
    "reset of a key, commit and worker": (reset_key_commit_and_worker, 40, 8),
    "commit and hard reset": (commit_and_hard_reset, 40, 8),
}


S3_SAMPLE = (10, 2, 8)
"""(limit, shuffled, at least this many ran) on S3: a sample, as on the SQL drivers below;
a blob call is one step there like any other, at ten times the cost of a local one."""


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_no_interleaving_of_requests_loses_a_write_or_a_referenced_blob(
    name: str, tmp_path: Path, lake_blocks: BlockStore
) -> None:
    build, limit, shuffled = SCENARIOS[name]
    limit, shuffled, least = budget(lake_blocks, (limit, shuffled, 10), S3_SAMPLE)
    ran = explore(_scenario(build, tmp_path, lake_blocks), seed=0, limit=limit, shuffled=shuffled)
    assert ran > least


@pytest.mark.parametrize(
    ("store_url", "lake_blocks"), paired_params("sqlite", "postgres"), indirect=True
)
@pytest.mark.parametrize("name", ["commit and hard reset", "upload and commit"])
def test_request_interleavings_hold_on_sql_drivers(
    name: str, tmp_path: Path, store_url: str, lake_blocks: BlockStore
) -> None:
    stores: list[Store] = []

    def new_store() -> Store:
        # Each schedule starts from an empty database: the driver's one, emptied.
        store = open_store(store_url)
        for partition in list(store.partitions()):
            store.drop_partition(partition)
        stores.append(store)
        return store

    build, _, _ = SCENARIOS[name]
    try:
        scenario = _scenario(build, tmp_path, lake_blocks, new_store)
        assert explore(scenario, seed=2, limit=10, shuffled=2) > 8
    finally:
        for store in stores:
            store.close()
