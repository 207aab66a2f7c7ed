"""Background tasks: a submit answers at once, the status says running until the
outcome is recorded, a failure is reported, and a task whose process died reads as
failed after the staleness limit instead of running forever."""

from __future__ import annotations

import threading

import pytest

from kvlake.errors import InvalidInputError, TaskNotFoundError
from kvlake.graveler import keys
from kvlake.graveler.graveler import Graveler
from kvlake.graveler.records import Repository
from kvlake.graveler.refs import partition_of
from kvlake.graveler.tasks import INTERNAL_ERROR, STALE_SECONDS, RefsTasks, TaskResult
from tests.graveler.helpers import value
from tests.support import FakeClock, GatedStarter, wait_until


def _repo(graveler: Graveler, namespace: str) -> Repository:
    repo = graveler.create_repository("repo1", storage_namespace=namespace)
    graveler.set(repo, "main", b"a", value("1"))
    graveler.commit(repo, "main", committer="alice", message="one")
    return repo


def _tasks(graveler: Graveler, clock: FakeClock, gate: GatedStarter, **kw: float) -> RefsTasks:
    return RefsTasks(graveler.store, lambda: graveler.dumps, clock, start=gate, **kw)


def _task_keys(graveler: Graveler, repo: Repository) -> list[bytes]:
    return [
        k
        for k, _ in graveler.store.scan(partition_of(repo), keys.TASK_PREFIX)
        if k.startswith(keys.TASK_PREFIX)
    ]


def test_a_dump_runs_in_the_background_and_then_reports_its_dump(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    repo = _repo(graveler, namespace)
    gate = GatedStarter()
    tasks = _tasks(graveler, clock, gate)
    task_id = tasks.submit_dump(repo)
    running = tasks.status(repo, "dump", task_id)
    assert not running.done and running.error == "" and running.dump_id == ""
    clock.advance(5)
    gate.release()
    done = tasks.status(repo, "dump", task_id)
    assert done.done and done.error == "" and done.update_time == clock.now
    assert graveler.dumps.load_manifest(repo, done.dump_id).commits == 2
    with pytest.raises(TaskNotFoundError):
        tasks.status(repo, "restore", task_id)  # a task of another kind


def test_a_failed_restore_reports_its_error(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    bare = graveler.create_bare_repository("bare", storage_namespace=namespace + "-bare")
    gate = GatedStarter()
    tasks = _tasks(graveler, clock, gate)
    task_id = tasks.submit_restore(bare, "0" * 26)  # well formed, but no such dump
    assert not tasks.status(bare, "restore", task_id).done
    gate.release()
    failed = tasks.status(bare, "restore", task_id)
    assert failed.done and "no complete refs dump" in failed.error
    assert graveler.dumps.is_bare(bare)


def test_what_lakefs_refuses_at_submit_is_refused_and_records_nothing(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    repo = _repo(graveler, namespace)
    gate = GatedStarter()
    tasks = _tasks(graveler, clock, gate)
    with pytest.raises(InvalidInputError, match="bare repository"):
        tasks.submit_restore(repo, "0" * 26)
    with pytest.raises(InvalidInputError, match="invalid"):
        tasks.submit_restore(repo, "../x")
    assert gate.started == 0 and _task_keys(graveler, repo) == []


def test_an_unexpected_failure_is_reported_without_its_details(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    repo = _repo(graveler, namespace)
    gate = GatedStarter()
    tasks = _tasks(graveler, clock, gate)

    def broken() -> TaskResult:
        raise RuntimeError("secret internals")

    task_id = tasks.submit(repo, "gc_prepare_commits", broken)
    gate.release()
    assert tasks.status(repo, "gc_prepare_commits", task_id).error == INTERNAL_ERROR


def test_a_task_whose_process_died_reads_as_failed_after_the_limit(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    repo = _repo(graveler, namespace)
    gate = GatedStarter()
    tasks = _tasks(graveler, clock, gate)
    task_id = tasks.submit_dump(repo)
    gate.drop()  # the process ended after recording the task: nothing will touch it
    clock.advance(STALE_SECONDS)
    assert not tasks.status(repo, "dump", task_id).done
    clock.advance(1)
    stale = tasks.status(repo, "dump", task_id)
    assert stale.done and "submit it again" in stale.error


def test_the_heartbeat_keeps_a_long_task_running(
    graveler: Graveler, clock: FakeClock, namespace: str
) -> None:
    repo = _repo(graveler, namespace)
    tasks = RefsTasks(graveler.store, lambda: graveler.dumps, clock, heartbeat=0.01)
    proceed = threading.Event()

    def long_work() -> TaskResult:
        proceed.wait()
        return TaskResult(run_id="r")

    task_id = tasks.submit(repo, "gc_prepare_commits", long_work)
    try:
        clock.advance(STALE_SECONDS + 1)  # stale, unless the heartbeat touches the record
        wait_until(
            lambda: tasks.status(repo, "gc_prepare_commits", task_id).update_time == clock.now,
            message="a heartbeat at the moved clock",
        )
        assert not tasks.status(repo, "gc_prepare_commits", task_id).done
    finally:
        proceed.set()
    wait_until(lambda: tasks.status(repo, "gc_prepare_commits", task_id).done)
    finished = tasks.status(repo, "gc_prepare_commits", task_id)
    assert finished.error == "" and finished.run_id == "r"
