"""The SQLite driver: URLs, file set-up, WAL, connection lifetimes and error mapping."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest

from kvlake.errors import ClosedError, ConfigError, PreconditionFailedError, UnavailableError
from kvlake.kv import MUST_EXIST, Store, open_store
from kvlake.kv import sqlite as sqlite_driver
from kvlake.kv.sqlite import SqliteStore

P = b"partition"

Call = Callable[[Store], object]

READS: dict[str, Call] = {
    "get": lambda s: s.get(P, b"k"),
    "scan": lambda s: list(s.scan(P)),
    "partitions": lambda s: list(s.partitions()),
}
WRITES: dict[str, Call] = {
    "set": lambda s: s.set(P, b"k", b"v"),
    "set_if-none": lambda s: s.set_if(P, b"new", b"v", None),
    "set_if-must-exist": lambda s: s.set_if(P, b"k", b"v", MUST_EXIST),
    "set_if-predicate": lambda s: s.set_if(P, b"k", b"v", s.get(P, b"k")[1]),
    "delete": lambda s: s.delete(P, b"k"),
    "set_many": lambda s: s.set_many(P, [(b"k", b"v"), (b"k2", b"v")]),
    "delete_many": lambda s: s.delete_many(P, [b"k", b"k2"]),
    "drop_partition": lambda s: s.drop_partition(P),
}


def raw(path: Path) -> closing[sqlite3.Connection]:
    return closing(sqlite3.connect(path, isolation_level=None))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kv.db"


@pytest.fixture
def sqlite_store(db: Path) -> Iterator[SqliteStore]:
    with SqliteStore(db, busy_timeout=0.05) as store:
        store.set(P, b"k", b"v")
        yield store


def open_files(path: Path) -> int:
    """How many descriptors this process holds on the database file (one per connection)."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path))


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")


# -- URLs and files ----------------------------------------------------------------------


def test_an_absolute_url_creates_the_file_and_its_parent_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "kv.db"
    with open_store(f"sqlite://{path}") as store:
        store.set(P, b"k", b"v")
    assert path.is_file()


def test_a_relative_url_is_relative_to_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store("sqlite://data/kv.db") as store:
        store.set(P, b"k", b"v")
    assert (tmp_path / "data" / "kv.db").is_file()


def test_data_survives_closing_and_reopening(db: Path) -> None:
    with SqliteStore(db) as store:
        store.set_many(P, [(b"a", b"1"), (b"b", b"")])
    with SqliteStore(db) as store:
        assert list(store.scan(P)) == [(b"a", b"1"), (b"b", b"")]


def test_two_stores_on_one_file_see_each_others_writes(db: Path) -> None:
    with SqliteStore(db) as first, SqliteStore(db) as second:
        first.set(P, b"k", b"v1")
        _, predicate = second.get(P, b"k")
        first.set(P, b"k", b"v2")
        with pytest.raises(PreconditionFailedError, match="value read earlier"):
            second.set_if(P, b"k", b"v3", predicate)
        assert second.get(P, b"k")[0] == b"v2"


def test_the_database_runs_in_wal_mode(db: Path) -> None:
    with SqliteStore(db), raw(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_opening_a_new_file_another_process_is_switching_to_wal_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Processes opening one new file (a Spark job's tasks) switch it to WAL together, and
    SQLite refuses one of them at once, without its busy handler. The open retries: it
    waits here while the other holds the file's write lock, then finishes in WAL mode."""
    path = tmp_path / "kv.db"
    with raw(path) as other:
        other.execute("BEGIN IMMEDIATE")  # the other process, mid-switch
        retries: list[int] = []

        def the_other_finishes() -> None:
            retries.append(1)
            if len(retries) == 1:
                other.execute("COMMIT")

        monkeypatch.setattr(sqlite_driver, "_wait_before_retrying_wal", the_other_finishes)
        with SqliteStore(path) as store:
            store.set(P, b"k", b"v")
            assert store.get(P, b"k")[0] == b"v"
        assert retries == [1]
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_wal_switch_still_refused_after_the_busy_timeout_raises_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kv.db"
    with raw(path) as other:
        other.execute("BEGIN IMMEDIATE")  # a lock that outlasts the timeout
        monkeypatch.setattr(sqlite_driver, "_wait_before_retrying_wal", lambda: None)
        with pytest.raises(UnavailableError, match="database is locked.*then retry"):
            SqliteStore(path, busy_timeout=0.05)
        other.execute("COMMIT")
        assert other.execute("PRAGMA journal_mode").fetchone() == ("delete",)  # nothing changed


@pytest.mark.parametrize(
    ("url", "fix"),
    [
        ("sqlite://", "names no file"),
        ("sqlite:///tmp/kv.db?mode=ro", "take only synchronous"),
        ("sqlite:///tmp/kv.db?synchronous=off", "take only synchronous"),
    ],
)
def test_a_malformed_url_raises_config_error(url: str, fix: str) -> None:
    with pytest.raises(ConfigError, match=f"KVLAKE_KV_URL.*{fix}"):
        SqliteStore.from_url(url)


def test_a_parent_that_is_a_file_raises_config_error_naming_the_setting(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"not a folder")
    path = tmp_path / "file" / "sub" / "kv.db"
    with pytest.raises(ConfigError, match="KVLAKE_KV_URL") as caught:
        open_store(f"sqlite://{path}")
    assert str(path) in str(caught.value)


def test_a_folder_in_place_of_the_file_raises_config_error(tmp_path: Path) -> None:
    (tmp_path / "kv.db").mkdir()
    with pytest.raises(ConfigError, match="KVLAKE_KV_URL.*writable file"):
        SqliteStore(tmp_path / "kv.db")


def test_a_file_that_is_not_a_database_raises_config_error(db: Path) -> None:
    db.write_bytes(b"this is not a SQLite database, just text" * 100)
    with pytest.raises(ConfigError, match="KVLAKE_KV_URL"):
        SqliteStore(db)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write to read-only folders")
def test_a_read_only_folder_raises_config_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(ConfigError, match="KVLAKE_KV_URL"):
            SqliteStore(folder / "kv.db")
    finally:
        folder.chmod(0o700)


# -- connections -------------------------------------------------------------------------


@needs_proc
def test_close_closes_the_connection_of_every_thread(db: Path) -> None:
    store = SqliteStore(db)
    used, release = threading.Barrier(5), threading.Event()

    def use_then_wait() -> None:
        list(store.scan(P))  # a read: writes may run on another thread's connection (group commit)
        used.wait()
        release.wait()

    threads = [threading.Thread(target=use_then_wait) for _ in range(4)]
    for thread in threads:
        thread.start()
    used.wait()
    assert open_files(db) == 5  # the opening thread's and four more
    store.close()
    assert open_files(db) == 0  # closed while their threads still live
    release.set()
    for thread in threads:
        thread.join()


def test_close_waits_for_a_call_in_flight_on_another_thread(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's sqlite3 crashes the process when a connection is closed while another
    thread uses it (CI lost a test worker to it): `close()` waits for the call, which
    commits, and only later calls raise ClosedError."""
    store = SqliteStore(db)
    paused, resume = threading.Event(), threading.Event()

    def before_commit() -> None:  # the write's statement ran, its COMMIT has not
        paused.set()
        assert resume.wait(30)

    monkeypatch.setattr(sqlite_driver, "_before_commit", before_commit)
    written = threading.Event()

    def write() -> None:
        store.set(P, b"k", b"v")
        written.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert paused.wait(30)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join(0.5)  # a close that does not wait is done by now, under the paused write
    still_closing = closer.is_alive()
    resume.set()
    writer.join()
    closer.join()
    assert still_closing
    assert written.is_set()  # the write committed on its connection, then close went on
    with raw(db) as other:
        assert other.execute("SELECT value FROM kv").fetchall() == [(b"v",)]
    with pytest.raises(ClosedError):
        store.get(P, b"k")


@needs_proc
def test_connections_of_ended_threads_are_closed_when_new_ones_open(db: Path) -> None:
    with SqliteStore(db) as store:
        for _ in range(10):
            thread = threading.Thread(target=store.get_many, args=(P, [b"k"]))
            thread.start()
            thread.join()
        # The opener's, the last thread's and at most one SQLite keeps for reuse (POSIX locks
        # are per process): without the clean-up, eleven.
        assert open_files(db) <= 3


def test_a_thread_first_using_a_closed_store_raises_closed(db: Path) -> None:
    store = SqliteStore(db)
    store.close()
    raised: list[BaseException] = []

    def use() -> None:
        try:
            store.set(P, b"k", b"v")
        except ClosedError as exc:
            raised.append(exc)

    thread = threading.Thread(target=use)
    thread.start()
    thread.join()
    assert len(raised) == 1


# -- error mapping -----------------------------------------------------------------------


@pytest.mark.parametrize("call", WRITES.values(), ids=WRITES.keys())
def test_a_write_waiting_on_a_locked_database_raises_unavailable(
    sqlite_store: SqliteStore, db: Path, call: Call
) -> None:
    with raw(db) as other:
        other.execute("BEGIN IMMEDIATE")  # holds the write lock
        with pytest.raises(UnavailableError, match="locked.*retry") as caught:
            call(sqlite_store)
        assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
        assert str(db) in str(caught.value)
        for read in READS.values():  # WAL: readers do not wait for the writer
            read(sqlite_store)
        other.execute("ROLLBACK")
    call(sqlite_store)  # the lock is gone, and so is any half-open transaction


@pytest.mark.parametrize("call", (READS | WRITES).values(), ids=(READS | WRITES).keys())
def test_every_operation_on_a_broken_database_raises_unavailable(
    sqlite_store: SqliteStore, db: Path, call: Call
) -> None:
    with raw(db) as other:
        other.execute("DROP TABLE kv")
    with pytest.raises(UnavailableError, match="no such table") as caught:
        call(sqlite_store)
    assert isinstance(caught.value.__cause__, sqlite3.Error)


BATCHES: dict[str, Call] = {
    "set_many": lambda s: s.set_many(P, [(b"new", b"1"), (b"k2", b"2"), (b"newer", b"3")]),
    "delete_many": lambda s: s.delete_many(P, [b"k", b"k2"]),
}


@pytest.mark.parametrize("call", BATCHES.values(), ids=BATCHES.keys())
def test_a_batch_failing_midway_is_rolled_back_and_the_store_stays_usable(
    sqlite_store: SqliteStore, db: Path, call: Call
) -> None:
    sqlite_store.set(P, b"k2", b"v")
    with raw(db) as other:
        for event in ("INSERT", "DELETE"):
            other.execute(
                f"CREATE TRIGGER refuse_{event.lower()} BEFORE {event} ON kv"
                f" WHEN {'NEW' if event == 'INSERT' else 'OLD'}.key = x'6b32'"
                " BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
            )
    before = list(sqlite_store.scan(P))
    with pytest.raises(UnavailableError, match="refused by test"):
        call(sqlite_store)
    assert list(sqlite_store.scan(P)) == before  # the first item of the batch was undone
    sqlite_store.set(P, b"after", b"v")  # autocommit again: another connection sees it at once
    with raw(db) as other:
        assert other.execute("SELECT value FROM kv WHERE key = x'6166746572'").fetchone() == (b"v",)


def test_writes_are_durable_by_default_and_normal_is_a_choice(tmp_path: Path) -> None:
    """Issue 10 item 9: FULL syncs the WAL at every commit (power-loss safe)."""
    with SqliteStore(tmp_path / "a.db") as store:
        assert store.synchronous_mode() == "full"
    with SqliteStore.from_url(f"sqlite:///{tmp_path}/b.db") as store:
        assert store.synchronous_mode() == "full"
    with SqliteStore.from_url(f"sqlite:///{tmp_path}/c.db?synchronous=normal") as store:
        assert store.synchronous_mode() == "normal"
        store.set(P, b"k", b"v")
        assert store.get(P, b"k")[0] == b"v"


def test_the_database_and_its_folder_are_private(tmp_path: Path) -> None:
    """Issue 10 item 10: the metadata is the server user's alone (0600 files, 0700 folders)."""
    path = tmp_path / "data" / "deeper" / "kv.db"
    with SqliteStore(path) as store:
        store.set(P, b"k", b"v")  # the -wal and -shm files exist while the store is open
        for name in ("kv.db", "kv.db-wal", "kv.db-shm"):
            assert (path.parent / name).stat().st_mode & 0o777 == 0o600, name
    for folder in (tmp_path / "data", path.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
