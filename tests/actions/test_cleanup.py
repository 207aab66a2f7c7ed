"""A deleted repository instance's action runs and queued post-events go with it: the
cleaner drops them once the instance's own metadata is gone."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest

from kvlake.actions.queue import PARTITION as QUEUE
from kvlake.actions.runs import runs_partition
from kvlake.blockstore import BlockStore
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, parse_branch_path
from tests.support import backends
from tests.support.lakes import lake_on

RECORD = b"""name: record everything
on:
  pre-commit:
  post-bulk-delete:
hooks:
  - id: note
    type: lua
    properties:
      script: print(action.event_type)
"""


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[Lake]:
    with lake_on(lake_blocks) as lake:
        lake.operations.concurrency = 0
        yield lake


def _with_runs(lake: Lake, name: str) -> Repository:
    """A repository with two recorded runs and one post-event waiting in the queue."""
    scheme = lake.blockstore.scheme
    repository = lake.graveler.create_repository(
        name, storage_namespace=backends.namespace(scheme, f"{name}")
    )
    lake.catalog.upload(repository, "main", "_lakefs_actions/record.yaml", io.BytesIO(RECORD))
    for number in range(2):
        lake.catalog.upload(repository, "main", f"data/{number}", io.BytesIO(b"x"))
        lake.graveler.commit(repository, "main", committer="admin", message=f"commit {number}")
    lake.bulk_deletes.create(
        parse_branch_path(f"lakefs://{name}/main/none/"), BulkDeleteOptions(), created_by="ana"
    )
    lake.operations.run_once()
    lake.operations.dispatch(threading.Event(), 60)  # queues post-bulk-delete, runs nothing
    return repository


def _records(lake: Lake, repository: Repository) -> tuple[int, int]:
    """(run records, queued post-events) the KV holds for the repository instance."""
    runs = sum(1 for _ in lake.store.scan(runs_partition(repository), b"", batch_size=100))
    queued = sum(
        1
        for _, raw in lake.store.scan(QUEUE, b"", batch_size=100)
        if repository.instance_uid.encode() in raw
    )
    return runs, queued


def test_the_cleaner_drops_a_deleted_instances_runs_and_queued_events(lake: Lake) -> None:
    gone, kept = _with_runs(lake, "gone"), _with_runs(lake, "kept")
    assert _records(lake, gone) == (2, 1)  # a run per commit; the bulk delete's waits
    assert _records(lake, kept) == (2, 1)

    lake.graveler.delete_repository("gone")
    report = lake.cleaner().clean_once()
    assert report.repositories_cleaned == 1
    assert _records(lake, gone) == (0, 0)
    assert _records(lake, kept) == (2, 1)

    namespace = backends.namespace(lake.blockstore, "gone-2")
    again = lake.graveler.create_repository("gone", storage_namespace=namespace)
    assert list(lake.actions.runs.scan(again)) == []
