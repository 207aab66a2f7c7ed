"""kvlake's post-events of long-running operations: `post-bulk-delete` and `post-gc-run`,
queued by the operations runner when it cleans up after a finished operation and run by
the actions' background pass (the restart-safe post-hook queue)."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import msgspec
import pytest

from kvlake import ids
from kvlake.actions.queue import PARTITION as QUEUE
from kvlake.blockstore import BlockStore
from kvlake.graveler import Repository
from kvlake.lake import Lake
from kvlake.operations import BulkDeleteOptions, Filters, GcRunRequest, Operation, parse_branch_path
from tests.support import backends
from tests.support.lakes import lake_on

REPORT = b"""name: report deletes
on:
  post-bulk-delete:
    branches: [main]
  post-gc-run:
hooks:
  - id: report
    type: lua
    properties:
      script: |
        print(action.event_type, action.branch_id, action.source_ref, action.committer)
        print("operation", action.operation_id, action.status, tostring(action.dry_run))
        if action.event_type == "post-bulk-delete" then
          print("prefix", action.prefix, "glob", action.filters.glob)
          print("deleted", action.counters.deleted, "enumerated", action.counters.enumerated)
        else
          print("gc", action.gc_run_id, action.mode)
        end
"""


@pytest.fixture
def lake(lake_blocks: BlockStore) -> Iterator[Lake]:
    with lake_on(lake_blocks) as lake:
        lake.operations.concurrency = 0  # passes only clean up; run_once runs operations
        yield lake


def _repository(lake: Lake) -> Repository:
    scheme = lake.blockstore.scheme
    repository = lake.graveler.create_repository(
        "repo", storage_namespace=backends.namespace(scheme, "e")
    )
    lake.catalog.upload(repository, "main", "_lakefs_actions/report.yaml", io.BytesIO(REPORT))
    for name in ("raw/a.tmp", "raw/b.tmp", "raw/keep.csv"):
        lake.catalog.upload(repository, "main", name, io.BytesIO(b"x"))
    lake.graveler.commit(repository, "main", committer="admin", message="actions and data")
    return repository


def _queued(lake: Lake) -> int:
    return sum(1 for _ in lake.store.scan(QUEUE, b"", batch_size=100))


def _pass(lake: Lake) -> None:
    """One runner pass: it cleans up after finished operations (and starts nothing)."""
    lake.operations.dispatch(threading.Event(), 60)


def _output(lake: Lake, repository: Repository, event_type: str) -> str:
    (run,) = [run for run in lake.actions.runs.scan(repository) if run.event_type == event_type]
    assert run.passed
    (hook,) = run.hooks
    return lake.actions.runs.output(repository, run.run_id, hook.hook_run_id).decode()


def test_a_finished_bulk_delete_queues_one_post_event_run_by_the_actions_pass(
    lake: Lake,
) -> None:
    repository = _repository(lake)
    operation = lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo/main/raw/"),
        BulkDeleteOptions(filters=Filters(glob="*.tmp")),
        created_by="ana",
    )
    lake.operations.run_once()
    assert lake.ledger.load(operation.id)[0].status == "completed"
    assert _queued(lake) == 0  # nothing before the runner's clean-up

    _pass(lake)
    assert _queued(lake) == 1  # durable before any hook runs: a restart runs it
    assert list(lake.actions.runs.scan(repository)) == []  # not run in the runner's thread
    _pass(lake)  # cleaned: not queued again
    assert _queued(lake) == 1

    assert lake.actions.run_queued() == 1
    assert _queued(lake) == 0
    output = _output(lake, repository, "post-bulk-delete")
    assert output.splitlines() == [
        "post-bulk-delete\tmain\tmain\tana",
        f"operation\t{operation.id}\tcompleted\tfalse",
        "prefix\traw/\tglob\t*.tmp",
        "deleted\t2\tenumerated\t2",
    ]
    assert lake.actions.run_queued() == 0  # ran once


def test_a_post_event_queued_twice_for_one_operation_runs_once(lake: Lake) -> None:
    """A crash between the queue write and the record's mark (or two runners cleaning the
    same record) queues it again under the same key: that writes nothing."""
    repository = _repository(lake)
    lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo/main/raw/"), BulkDeleteOptions(), created_by="ana"
    )
    lake.operations.run_once()
    (finished,) = lake.ledger.list()
    lake.operations._clean(finished)
    lake.operations._clean(finished)  # the stale record, as a second runner read it
    assert _queued(lake) == 1
    assert lake.actions.run_queued() == 1
    assert len(list(lake.actions.runs.scan(repository))) == 1


def test_a_finished_gc_run_queues_post_gc_run_read_at_the_default_branch(lake: Lake) -> None:
    repository = _repository(lake)
    now = lake.clock()
    run_id = ids.new_uid()
    lake.ledger.create(
        Operation(
            id=run_id,
            kind="gc-run",
            repository="repo",
            instance_uid=repository.instance_uid,
            gc=GcRunRequest(run_id=run_id, dry_run=True),
            created_by="admin",
            created_at=now,
            last_updated_at=now,
            status="completed",
        )
    )
    _pass(lake)
    assert lake.actions.run_queued() == 1
    (run,) = lake.actions.runs.scan(repository)
    assert (run.event_type, run.branch, run.source_ref) == ("post-gc-run", "", "main")
    assert _output(lake, repository, "post-gc-run").splitlines() == [
        "post-gc-run\t\tmain\tadmin",
        f"operation\t{run_id}\tcompleted\ttrue",
        f"gc\t{run_id}\trun",
    ]


def test_an_operation_of_a_repository_created_again_queues_nothing(lake: Lake) -> None:
    repository = _repository(lake)
    lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo/main/raw/"), BulkDeleteOptions(), created_by="ana"
    )
    lake.operations.run_once()
    (finished,) = lake.ledger.list()
    lake.ledger.update(
        finished.id,
        lambda current: msgspec.structs.replace(current, instance_uid="another-instance"),
    )
    _pass(lake)
    assert _queued(lake) == 0
    assert list(lake.actions.runs.scan(repository)) == []


def test_a_post_event_queued_again_while_it_runs_is_left_to_its_runner(lake: Lake) -> None:
    """A second queue write of a key whose event a pass has taken writes nothing: the
    claim (owner, lease, attempts) stays, so the hooks do not run twice at once."""
    _repository(lake)
    lake.bulk_deletes.create(
        parse_branch_path("lakefs://repo/main/raw/"), BulkDeleteOptions(), created_by="ana"
    )
    lake.operations.run_once()
    (finished,) = lake.ledger.list()
    lake.operations._clean(finished)
    (taken,) = lake.actions.queue.take(lake.clock())
    lake.operations._clean(finished)
    (_, raw), *_ = lake.store.scan(QUEUE, b"", batch_size=100)
    assert msgspec.msgpack.decode(raw, type=type(taken)) == taken
