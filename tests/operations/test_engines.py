"""Engines agree: the same request on the same data gives the same result on each engine.

`threads` (tests/operations/threaded_engine.py) processes batches concurrently
and out of order, as a Spark engine's executors would; a Spark engine joins
this test by adding its name to ENGINES.
"""

from __future__ import annotations

import threading

import pytest

from kvlake.blockstore import BlockStore
from kvlake.errors import ConfigError, InvalidInputError
from kvlake.kv.memory import MemoryStore
from kvlake.operations import (
    BulkDeleteOptions,
    Filters,
    open_engine,
    register_engine,
    select_engine,
)
from tests.operations.helpers import listed, make_lake, populate, start
from tests.support import backends

ENGINES = ("local", "threads")


@pytest.fixture(scope="module", autouse=True)
def threads_engine() -> None:
    try:
        register_engine("threads", "tests.operations.threaded_engine:threaded_engine")
    except ConfigError:
        pass  # registered by an earlier module of this process


def _run_on(engine: str, blocks: BlockStore) -> tuple[object, ...]:
    lake = make_lake(MemoryStore(), blocks, batch_size=3)
    # Each engine's repository has a namespace of its own on the shared blockstore.
    lake.graveler.create_repository(
        "repo1", storage_namespace=backends.namespace(blocks, f"{engine}")
    )
    repo = populate(lake, [f"a/{i:02d}.csv" for i in range(10)] + ["a/x.tmp", "b/1"])
    populate(lake, ["a/staged.csv"], commit=False)
    lake.locks.acquire(repo, "a/04.csv", owner="bob", ttl=600)
    options = BulkDeleteOptions(
        filters=Filters(glob="*.csv"), commit=True, commit_message="m", engine=engine
    )
    operation = start(lake, "lakefs://repo1/main/a/", options=options)
    final = open_engine(engine, lake.engine_context(owner="s")).run(operation.id, threading.Event())
    failures = lake.ledger.failures(operation.id).failures
    commit = lake.graveler.get_commit(repo, final.commit_id)
    return (
        final.status,
        final.counters,
        listed(lake, repo),
        [(path, failure.outcome) for path, failure in failures],
        commit.message,
    )


def test_every_engine_gives_the_same_result(lake_blocks: BlockStore) -> None:
    results = {engine: _run_on(engine, lake_blocks) for engine in ENGINES}
    assert results["local"][0] == "completed_with_errors"
    assert results["local"][2] == ["a/04.csv", "a/x.tmp", "b/1"]
    for engine in ENGINES:
        assert results[engine] == results["local"], engine


def test_engine_names_are_checked() -> None:
    with pytest.raises(InvalidInputError, match="unknown"):
        select_engine("warp", threshold=1)
    with pytest.raises(ConfigError):
        register_engine("local", "x:Y")
    assert select_engine("threads", threshold=1) == "threads"
