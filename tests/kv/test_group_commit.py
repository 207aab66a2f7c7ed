"""SQLite group commit: concurrent writes share a transaction, each with its own outcome.

A first write is stopped just before its COMMIT (the driver's `_before_commit`), so the
writes started meanwhile all queue and then commit as the next group, deterministically.
That group is held before its COMMIT too, until every caller has returned or a bound has
passed: a caller woken before the commit would return then (and find its write invisible
to another connection); a correct store keeps them all waiting.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kvlake.errors import PreconditionFailedError, UnavailableError
from kvlake.kv import MUST_EXIST, Predicate
from kvlake.kv import sqlite as sqlite_driver
from kvlake.kv.sqlite import SqliteStore
from tests.support.waiting import wait_until

P = b"partition"
HOLD = 0.5
"""Seconds the second group waits before its COMMIT for callers that should not return."""

Call = Callable[[SqliteStore], object]


@dataclass
class Group:
    """What happened to writes queued behind a paused first group."""

    outcomes: dict[str, object] = field(default_factory=dict)
    """Each call's return value, or the exception it raised."""
    visible_on_return: dict[str, bool] = field(default_factory=dict)
    """Whether another connection saw the committed data when the call returned."""
    returned_before_commit: int = -1
    commits: int = 0


def read_raw(db: Path, key: bytes) -> bytes | None:
    with closing(sqlite3.connect(db)) as other:
        row = other.execute("SELECT value FROM kv WHERE partition = ? AND key = ?", (P, key))
        found = row.fetchone()
        return None if found is None else bytes(found[0])


def commit_as_one_group(
    store: SqliteStore, db: Path, calls: dict[str, Call], monkeypatch: pytest.MonkeyPatch
) -> Group:
    """Run `calls` from one thread each, queued behind a paused write, as one group.

    Each thread, on return, checks from another connection that `marker` (a key the
    first group does not write) is committed: it is written by the group's first call.
    """
    group = Group()
    first_paused, release_first = threading.Event(), threading.Event()
    all_returned = threading.Event()
    lock = threading.Lock()

    def before_commit() -> None:
        group.commits += 1
        if group.commits == 1:
            first_paused.set()
            assert release_first.wait(30)
        elif group.commits == 2:
            all_returned.wait(HOLD)  # only a broken store lets any caller return here
            with lock:
                group.returned_before_commit = len(group.outcomes)

    monkeypatch.setattr(sqlite_driver, "_before_commit", before_commit)

    def call(name: str, run: Call) -> None:
        try:
            outcome: object = run(store)
        except Exception as exc:  # recorded for the test to check
            outcome = exc
        visible = read_raw(db, b"marker") is not None
        with lock:
            group.outcomes[name] = outcome
            group.visible_on_return[name] = visible
            if len(group.outcomes) == len(calls):
                all_returned.set()

    leader = threading.Thread(target=store.set, args=(P, b"leader", b"1"))
    leader.start()
    assert first_paused.wait(30)
    threads = [threading.Thread(target=call, args=item) for item in calls.items()]
    for thread in threads:
        thread.start()
    wait_until(lambda: store.queued_writes() == len(calls), message="every write queued")
    release_first.set()
    for thread in [leader, *threads]:
        thread.join()
    return group


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kv.db"


@pytest.fixture
def store(db: Path) -> Iterator[SqliteStore]:
    with SqliteStore(db) as store:
        for key in (b"kept", b"stale", b"doomed", b"spared"):
            store.set(P, key, b"old")
        yield store


def test_concurrent_writes_commit_as_one_group_each_with_its_own_outcome(
    store: SqliteStore, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = Predicate(b"not what is stored")
    calls: dict[str, Call] = {
        "marker": lambda s: s.set(P, b"marker", b"m"),
        "set": lambda s: s.set(P, b"plain", b"new"),
        "create": lambda s: s.set_if(P, b"created", b"new", None),
        "create-taken": lambda s: s.set_if(P, b"kept", b"new", None),
        "must-exist": lambda s: s.set_if(P, b"kept", b"new", MUST_EXIST),
        "must-exist-missing": lambda s: s.set_if(P, b"absent", b"new", MUST_EXIST),
        "swap-stale": lambda s: s.set_if(P, b"stale", b"new", stale),
        "delete-if": lambda s: s.delete_if(P, b"doomed", b"old"),
        "delete-if-moved": lambda s: s.delete_if(P, b"spared", b"other"),
        "delete": lambda s: s.delete(P, b"never-there"),
        # Small batches (an upload's deletion-log intent) join the group too.
        "set-many": lambda s: s.set_many(P, [(b"batch-1", b"b"), (b"batch-2", b"b")]),
        "delete-many": lambda s: s.delete_many(P, [b"gone-1", b"gone-2"]),
    }
    store.set_many(P, [(b"gone-1", b"old"), (b"gone-2", b"old")])
    group = commit_as_one_group(store, db, calls, monkeypatch)

    assert group.commits == 2  # the paused first write's, then all twelve together
    assert group.returned_before_commit == 0
    assert all(group.visible_on_return.values()), group.visible_on_return
    outcomes = group.outcomes
    for name in ("create-taken", "must-exist-missing", "swap-stale"):
        assert isinstance(outcomes[name], PreconditionFailedError), name
    assert outcomes["delete-if"] is True
    assert outcomes["delete-if-moved"] is False
    for name in ("marker", "set", "create", "must-exist", "delete", "set-many", "delete-many"):
        assert outcomes[name] is None, (name, outcomes[name])
    assert dict(store.scan(P)) == {
        b"batch-1": b"b",
        b"batch-2": b"b",
        b"created": b"new",
        b"kept": b"new",
        b"leader": b"1",
        b"marker": b"m",
        b"plain": b"new",
        b"spared": b"old",
        b"stale": b"old",
    }


@pytest.mark.parametrize("raise_", ["ABORT", "ROLLBACK"])
def test_a_statement_sqlite_refuses_fails_only_its_own_caller(
    store: SqliteStore, db: Path, monkeypatch: pytest.MonkeyPatch, raise_: str
) -> None:
    """ABORT undoes the statement alone; ROLLBACK the whole transaction, which runs again."""
    with closing(sqlite3.connect(db)) as other:
        other.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON kv WHEN NEW.key = x'726566757365'"
            f" BEGIN SELECT RAISE({raise_}, 'refused by test'); END"
        )
    calls: dict[str, Call] = {
        "marker": lambda s: s.set(P, b"marker", b"m"),
        "refused": lambda s: s.set(P, b"refuse", b"x"),
        "after": lambda s: s.set_if(P, b"after", b"a", None),
        # A grouped batch is all or nothing: its first row goes with the refused one.
        "batch": lambda s: s.set_many(P, [(b"batch", b"b"), (b"refuse", b"x")]),
        "batch-after": lambda s: s.set_many(P, [(b"batch-after", b"b")]),
    }
    group = commit_as_one_group(store, db, calls, monkeypatch)

    for name in ("refused", "batch"):
        refused = group.outcomes[name]
        assert isinstance(refused, UnavailableError), refused
        assert "refused by test" in str(refused)
    assert group.outcomes["marker"] is None and group.outcomes["after"] is None
    assert group.outcomes["batch-after"] is None
    assert read_raw(db, b"marker") == b"m" and read_raw(db, b"after") == b"a"
    assert read_raw(db, b"batch-after") == b"b"
    assert read_raw(db, b"refuse") is None and read_raw(db, b"batch") is None
    store.set(P, b"later", b"l")  # the connection is out of any transaction
    assert read_raw(db, b"later") == b"l"


def test_a_group_that_cannot_take_the_write_lock_fails_every_caller_and_writes_nothing(
    db: Path,
) -> None:
    with SqliteStore(db, busy_timeout=0.05) as store, closing(sqlite3.connect(db)) as other:
        store.set(P, b"k", b"v")
        other.isolation_level = None
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(UnavailableError, match="locked"):
            store.set_if(P, b"k", b"new", MUST_EXIST)
        other.execute("ROLLBACK")
        assert store.get(P, b"k")[0] == b"v"
        store.set_if(P, b"k", b"new", MUST_EXIST)
        assert read_raw(db, b"k") == b"new"
