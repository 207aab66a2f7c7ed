"""Post-event hooks survive the process that ran them: queued in the KV, run again by another
process once its lease expires, and recorded as failed after MAX_ATTEMPTS cut-off runs."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from kvlake.actions import Actions
from kvlake.actions.queue import MAX_ATTEMPTS, PARTITION
from kvlake.blockstore import BlockStore
from kvlake.graveler import Event, Repository
from kvlake.lake import Lake
from tests.support import backends
from tests.support.lakes import lake_on

ACTION = b"""name: announce
on:
  post-commit:
hooks:
  - id: print_commit
    type: lua
    properties:
      script: print("committed " .. action.commit_id .. " by " .. action.committer)
"""
LEASE = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def lake(lake_blocks: BlockStore, clock: Clock) -> Iterator[Lake]:
    with lake_on(lake_blocks, clock=clock) as lake:
        lake.actions.queue.lease = LEASE
        yield lake


def _repository(lake: Lake) -> Repository:
    scheme = lake.blockstore.scheme
    repository = lake.graveler.create_repository(
        "repo", storage_namespace=backends.namespace(scheme, "q")
    )
    lake.catalog.upload(repository, "main", "_lakefs_actions/announce.yaml", io.BytesIO(ACTION))
    return repository


def _queued(lake: Lake) -> int:
    return sum(1 for _ in lake.store.scan(PARTITION, b"", batch_size=100))


def _outputs(lake: Lake, repository: Repository) -> list[str]:
    found = []
    for run in lake.actions.runs.scan(repository):
        for hook in run.hooks:
            found.append(
                lake.actions.runs.output(repository, run.run_id, hook.hook_run_id).decode()
            )
    return found


def _post_commit(lake: Lake, repository: Repository, commit_id: str) -> Event:
    return Event(
        event_type="post-commit",
        repository_id=repository.name,
        source_ref=commit_id,
        branch_id="main",
        commit_id=commit_id,
        committer="ana",
    )


def test_a_post_event_is_queued_while_its_hooks_run_and_dropped_after(lake: Lake) -> None:
    repository = _repository(lake)
    queued_while_running: list[int] = []
    lake.actions.observe_hooks(lambda *hook: queued_while_running.append(_queued(lake)))
    commit_id = lake.graveler.commit(repository, "main", committer="ana", message="m")
    assert _outputs(lake, repository) == [f"committed {commit_id} by ana"]
    assert queued_while_running == [1]
    assert _queued(lake) == 0


def test_a_post_event_whose_process_died_runs_in_another_once_its_lease_expires(
    lake: Lake, clock: Clock
) -> None:
    repository = _repository(lake)
    commit_id = lake.graveler.commit(repository, "main", committer="ana", message="m")
    # A process queued the next event, then died before running its hooks.
    event = _post_commit(lake, repository, commit_id)
    lake.actions.queue.put(
        repository="repo", instance_uid=repository.instance_uid, event=event, user="ana",
        now=clock.now,
    )  # fmt: skip
    other = Actions(lake.catalog, lake.settings.actions, clock=clock, post_lease=LEASE)
    assert other.run_queued() == 0  # its lease still holds
    clock.now += LEASE + 1
    assert other.run_queued() == 1
    assert _outputs(lake, repository) == [f"committed {commit_id} by ana"] * 2
    assert _queued(lake) == 0
    assert other.run_queued() == 0


def test_a_post_event_cut_off_too_often_is_recorded_as_a_failed_run(
    lake: Lake, clock: Clock
) -> None:
    repository = _repository(lake)
    commit_id = lake.graveler.commit(repository, "main", committer="ana", message="m")
    queue = lake.actions.queue
    event = _post_commit(lake, repository, commit_id)
    queue.put(repository="repo", instance_uid=repository.instance_uid, event=event, user="ana",
              now=clock.now)  # fmt: skip
    for _ in range(MAX_ATTEMPTS - 1):  # taken again, and the taker died each time
        clock.now += LEASE + 1
        assert len(list(queue.take(clock.now))) == 1
    clock.now += LEASE + 1
    assert lake.actions.run_queued() == 1
    newest = next(lake.actions.runs.scan(repository))
    assert (newest.event_type, newest.commit_id, newest.passed) == ("post-commit", commit_id, False)
    assert newest.hooks == ()
    assert _outputs(lake, repository) == [f"committed {commit_id} by ana"]  # the first commit's
    assert _queued(lake) == 0


def test_a_queued_event_of_a_deleted_repository_is_dropped(lake: Lake, clock: Clock) -> None:
    repository = _repository(lake)
    event = _post_commit(lake, repository, "0" * 64)
    lake.actions.queue.put(repository="repo", instance_uid="another-instance", event=event,
                           user="ana", now=clock.now)  # fmt: skip
    clock.now += LEASE + 1
    assert lake.actions.run_queued() == 1
    assert _queued(lake) == 0
    assert list(lake.actions.runs.scan(repository)) == []
