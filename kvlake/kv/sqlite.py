"""The embedded KV driver: one SQLite file, shared by every thread and process that opens it.

Invariant: each single-key operation is one statement, so it is atomic on its own and `set_if`
is a true compare-and-swap (an INSERT or UPDATE whose WHERE clause is the predicate, judged by
its row count), even between processes sharing the file. Single-key writes of concurrent
threads share one transaction, and so one fsync (group commit, `group_commit.py`); each caller
returns only after that transaction committed, with its own statement's outcome. WAL lets
readers run beside the one writer and the busy timeout makes writers queue rather than fail.
`synchronous=FULL` (the default) makes every acknowledged write durable against power loss, not
only against a crash of the process; `?synchronous=normal` trades that for speed (docs/kv.md has
the cost). Small batches join the groups (each one all or nothing, a savepoint); larger batches
run in their own `BEGIN IMMEDIATE ... COMMIT`, and a failed batch or group is rolled back before
the connection is reused.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Final, Literal, Self, cast

from kvlake.errors import ClosedError, ConfigError, KeyNotFoundError, UnavailableError
from kvlake.kv.group_commit import GroupCommit, Operation
from kvlake.kv.store import KeyValue, Predicate, Store, precondition_failed
from kvlake.permissions import create_private_file, make_private_folders

_log = logging.getLogger(__name__)

_SCHEME: Final = "sqlite://"
GROUPED_BATCH_ROWS: Final = 32
"""`set_many` and `delete_many` of at most this many rows commit in the next group (one fsync
shared with concurrent writes); larger ones keep a transaction of their own, so a bulk
write never holds a group's callers behind it."""

Synchronous = Literal["full", "normal"]
SYNCHRONOUS_MODES: Final = ("full", "normal")
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS kv (partition BLOB NOT NULL, key BLOB NOT NULL,"
    " value BLOB NOT NULL, PRIMARY KEY (partition, key)) WITHOUT ROWID"
)
_GET: Final = "SELECT value FROM kv WHERE partition = ? AND key = ?"
_SET: Final = (
    "INSERT INTO kv (partition, key, value) VALUES (?, ?, ?)"
    " ON CONFLICT (partition, key) DO UPDATE SET value = excluded.value"
)
_INSERT_NEW: Final = (
    "INSERT INTO kv (partition, key, value) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
)
_UPDATE_EXISTING: Final = "UPDATE kv SET value = ? WHERE partition = ? AND key = ?"
_UPDATE_UNCHANGED: Final = "UPDATE kv SET value = ? WHERE partition = ? AND key = ? AND value = ?"
_DELETE: Final = "DELETE FROM kv WHERE partition = ? AND key = ?"
_DELETE_UNCHANGED: Final = "DELETE FROM kv WHERE partition = ? AND key = ? AND value = ?"
_DROP_PARTITION: Final = "DELETE FROM kv WHERE partition = ?"
_SCAN_FROM: Final = (
    "SELECT key, value FROM kv WHERE partition = ? AND key >= ? ORDER BY key LIMIT ?"
)
_SCAN_AFTER: Final = (
    "SELECT key, value FROM kv WHERE partition = ? AND key > ? ORDER BY key LIMIT ?"
)
_NEXT_PARTITION: Final = "SELECT MIN(partition) FROM kv WHERE partition > ?"

# Failures that no retry can fix: the URL names a file we may not or cannot use.
_CONFIG_ERRORS: Final = frozenset(
    {sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY}
)


class _Connection:
    """One thread's connection, its reused cursor, and the lock that thread holds for each
    call (`with connection as cursor:`). `close()` from another thread takes the lock
    before closing, so it waits for a call in flight instead of closing under it: Python's
    sqlite3 crashes the process when a connection is closed while another thread uses it."""

    __slots__ = ("connection", "cursor", "lock", "thread")

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.cursor = connection.cursor()
        self.lock = threading.RLock()
        self.thread = weakref.ref(threading.current_thread())

    def __enter__(self) -> sqlite3.Cursor:
        self.lock.acquire()
        return self.cursor

    def __exit__(self, *exc_info: object) -> None:
        self.lock.release()

    def close(self) -> None:
        with self.lock:
            self.connection.close()


class _ThreadState(threading.local):
    connection: _Connection


class SqliteStore(Store):
    """A `kv` table in one SQLite file. URL: `sqlite:///abs/path.db` or `sqlite://rel/path.db`.

    Each thread gets its own connection (and one reused cursor), opened on first use; `close()`
    closes them all, each once no call is using it, and connections of threads that have
    ended are closed as new ones open.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 30.0,
        synchronous: Synchronous = "full",
    ) -> None:
        """Open (creating if needed) the database at `path`.

        Args:
            busy_timeout: seconds a write waits for another writer before UnavailableError.
            synchronous: "full" (default) syncs the WAL at every commit, so an acknowledged
                write survives a power loss or an OS crash. "normal" syncs only at
                checkpoints: faster, and safe against a crash of kvlake alone, but a
                power loss or OS crash can lose the last acknowledged writes.

        Raises:
            ConfigError: the file or its directory cannot be created, opened or written.
            UnavailableError: the database stayed locked or failed with an I/O error.
        """
        if synchronous not in SYNCHRONOUS_MODES:
            raise ConfigError(
                f"SQLite synchronous mode {synchronous!r} is unknown; use"
                f" {' or '.join(SYNCHRONOUS_MODES)}"
            )
        self._path = Path(path)
        self._busy_timeout = busy_timeout
        self._synchronous = synchronous
        self._lock = threading.Lock()
        self._local = _ThreadState()
        self._connections: list[_Connection] = []
        self._closed = False
        self._group: GroupCommit[sqlite3.Cursor] = GroupCommit(self._commit_group)
        try:
            make_private_folders(self._path.parent)
            # Created 0600 before SQLite opens it; its -wal and -shm files take its mode.
            os.close(create_private_file(self._path))
        except FileExistsError:
            pass  # an existing database keeps the mode its owner gave it
        except OSError as exc:
            raise self._unusable(str(exc)) from exc
        try:
            with self._connection() as cursor:
                cursor.execute(_SCHEMA)
        except sqlite3.Error as exc:
            self.close()
            raise self._open_failed(exc) from exc
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Open the database a `sqlite://` URL names; see `SqliteStore` for the forms."""
        if not url.startswith(_SCHEME):
            raise ConfigError("KVLAKE_KV_URL for the SQLite store must start with sqlite://")
        path = url[len(_SCHEME) :]
        if not path:
            raise ConfigError(
                "KVLAKE_KV_URL 'sqlite://' names no file; use sqlite:///absolute/path/kv.db"
                " or sqlite://relative/path/kv.db"
            )
        path, _, query = path.partition("?")
        synchronous = "full"
        for pair in filter(None, query.split("&")):
            name, _, value = pair.partition("=")
            if name != "synchronous" or value not in SYNCHRONOUS_MODES:
                raise ConfigError(
                    f"KVLAKE_KV_URL {url!r} has the parameter {pair!r}; SQLite URLs take only"
                    " synchronous=full (the default: durable) or synchronous=normal"
                )
            synchronous = value
        return cls(os.path.expanduser(path), synchronous=cast(Synchronous, synchronous))

    def synchronous_mode(self) -> str:
        """The `PRAGMA synchronous` this store's connections run with: "full" or "normal"."""
        with self._connection() as cursor:
            (level,) = cursor.execute("PRAGMA synchronous").fetchone()
        return {1: "normal", 2: "full"}.get(level, str(level))

    def queued_writes(self) -> int:
        """How many writes of this process wait for the next group commit (tests, metrics)."""
        return self._group.queued()

    # -- connections -----------------------------------------------------------

    def _connection(self) -> _Connection:
        """This thread's connection, opened on its first call; use it as `with ... as cursor`."""
        try:
            return self._local.connection
        except AttributeError:
            return self._connect()

    def _connect(self) -> _Connection:
        if self._closed:
            raise self._closed_error()
        try:
            conn = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise self._open_failed(exc) from exc
        try:
            mode = self._switch_to_wal(conn)
            conn.execute(f"PRAGMA synchronous={self._synchronous.upper()}")
        except sqlite3.Error as exc:
            conn.close()
            raise self._open_failed(exc) from exc
        if mode != "wal":
            _log.warning(
                "SQLite database %s keeps journal mode %s: WAL is unavailable", self._path, mode
            )
        with self._lock:
            if self._closed:
                conn.close()
                raise self._closed_error()
            self._close_connections_of_ended_threads()
            held = self._local.connection = _Connection(conn)
            self._connections.append(held)
        return held

    def _switch_to_wal(self, conn: sqlite3.Connection) -> str:
        """Put the database in WAL mode (a no-op once it is) and return the mode it is in.

        Switching a new file to WAL upgrades a read lock to a write lock, and SQLite answers
        SQLITE_BUSY at once, without its busy handler, to one of two connections doing so
        together (the deadlock it avoids): two processes opening one new file, say a Spark
        job's tasks. So the switch is retried here until the busy timeout has passed.
        """
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                (mode,) = conn.execute("PRAGMA journal_mode=WAL").fetchone()
                return str(mode)
            except sqlite3.OperationalError as exc:
                busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY
                if not busy or time.monotonic() > deadline:
                    raise
            _wait_before_retrying_wal()

    def _close_connections_of_ended_threads(self) -> None:
        # A server that starts a thread per task would otherwise keep one open file per task.
        alive = []
        for held in self._connections:
            thread = held.thread()
            if thread is not None and thread.is_alive():
                alive.append(held)
            else:
                held.connection.close()  # an ended thread holds no call open
        self._connections = alive

    def _discard_connection(self, cursor: sqlite3.Cursor) -> None:
        # The connection may still be inside a transaction it could not roll back: never reuse it.
        del self._local.connection
        with self._lock:
            self._connections = [h for h in self._connections if h.cursor is not cursor]
        cursor.connection.close()

    def close(self) -> None:
        """Close every thread's connection, each once a call using it has returned; later
        calls raise ClosedError. Idempotent."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for held in connections:
            held.close()

    # -- errors -------------------------------------------------------------------

    def _closed_error(self) -> ClosedError:
        return ClosedError(f"SQLite store {self._path} was closed; open a new one")

    def _unusable(self, reason: str) -> ConfigError:
        return ConfigError(
            f"KVLAKE_KV_URL names SQLite database {self._path}, which cannot be created or written"
            f" ({reason}); point KVLAKE_KV_URL at a writable file, e.g. sqlite:///var/lib/kvlake/kv.db"
        )

    def _open_failed(self, exc: sqlite3.Error) -> ConfigError | ClosedError | UnavailableError:
        # Only errors raised by SQLite itself carry a code; extended codes keep it in the low byte.
        if (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF in _CONFIG_ERRORS:
            return self._unusable(str(exc))
        return self._failed("open the database", exc)

    def _failed(self, what: str, exc: sqlite3.Error) -> ClosedError | UnavailableError:
        if self._closed:
            return self._closed_error()
        return UnavailableError(
            f"SQLite database {self._path} could not {what}: {exc}; check the disk, its free space"
            " and the file's permissions, then retry"
        )

    # -- the primitives -------------------------------------------------------------

    def _get(self, partition: bytes, key: bytes) -> bytes:
        try:
            with self._connection() as cursor:
                row = cursor.execute(_GET, (partition, key)).fetchone()
        except sqlite3.Error as exc:
            raise self._failed("read a key", exc) from exc
        if row is None:
            raise KeyNotFoundError(f"KV key {key!r} not found in partition {partition!r}")
        value: bytes = row[0]
        return value

    def _get_many(self, partition: bytes, keys: list[bytes]) -> dict[bytes, bytes]:
        marks = ", ".join("?" * len(keys))
        query = f"SELECT key, value FROM kv WHERE partition = ? AND key IN ({marks})"
        try:
            with self._connection() as cursor:
                rows = cursor.execute(query, (partition, *keys)).fetchall()
        except sqlite3.Error as exc:
            raise self._failed("read keys", exc) from exc
        return {bytes(key): bytes(value) for key, value in rows}

    def _get_across(
        self, partitions: list[bytes], keys: list[bytes]
    ) -> dict[bytes, dict[bytes, bytes]]:
        query = (
            "SELECT partition, key, value FROM kv"
            f" WHERE partition IN ({', '.join('?' * len(partitions))})"
            f" AND key IN ({', '.join('?' * len(keys))})"
        )
        try:
            with self._connection() as cursor:
                rows = cursor.execute(query, (*partitions, *keys)).fetchall()
        except sqlite3.Error as exc:
            raise self._failed("read keys", exc) from exc
        found: dict[bytes, dict[bytes, bytes]] = {}
        for partition, key, value in rows:
            found.setdefault(bytes(partition), {})[bytes(key)] = bytes(value)
        return found

    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        self._write(_SET, (partition, key, value), "write a key")

    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        if predicate is None:
            written = self._write(_INSERT_NEW, (partition, key, value), "write a key")
        elif predicate.expected is None:
            written = self._write(_UPDATE_EXISTING, (value, partition, key), "write a key")
        else:
            params = (value, partition, key, predicate.expected)
            written = self._write(_UPDATE_UNCHANGED, params, "write a key")
        if written != 1:
            raise precondition_failed(partition, key, predicate)

    def _delete(self, partition: bytes, key: bytes) -> None:
        self._write(_DELETE, (partition, key), "delete a key")

    def _delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        return self._write(_DELETE_UNCHANGED, (partition, key, expected), "delete a key") == 1

    def _scan_page(
        self, partition: bytes, start: bytes, inclusive: bool, limit: int
    ) -> list[KeyValue]:
        try:
            with self._connection() as cursor:
                query = _SCAN_FROM if inclusive else _SCAN_AFTER
                page: list[KeyValue] = cursor.execute(query, (partition, start, limit)).fetchall()
        except sqlite3.Error as exc:
            raise self._failed("scan a partition", exc) from exc
        return page

    def _partitions(self, after: bytes) -> Iterator[bytes]:
        # Skip-scan the primary key: one index seek per partition, however many keys each holds.
        last = after
        while True:
            try:
                with self._connection() as cursor:
                    (found,) = cursor.execute(_NEXT_PARTITION, (last,)).fetchone()
            except sqlite3.Error as exc:
                raise self._failed("list partitions", exc) from exc
            if found is None:
                return
            last = found
            yield found

    # -- batches -------------------------------------------------------------------

    def _set_many(self, partition: bytes, items: list[KeyValue]) -> None:
        self._write_batch(_SET, [(partition, key, value) for key, value in items], "write keys")

    def _delete_many(self, partition: bytes, keys: list[bytes]) -> None:
        self._write_batch(_DELETE, [(partition, key) for key in keys], "delete keys")

    def _swap_many(self, partition: bytes, swaps: list[tuple[bytes, bytes, bytes]]) -> list[bytes]:
        missed: list[bytes] = []
        try:
            with self._connection() as cursor:
                cursor.execute("BEGIN IMMEDIATE")  # one durable commit for the chunk
                try:
                    # The usual case, every key unchanged: one executemany, judged by its
                    # total row count (a key appears once a chunk, so each swap changes one
                    # row or none).
                    rows = [(value, partition, key, expected) for key, expected, value in swaps]
                    cursor.executemany(_UPDATE_UNCHANGED, rows)
                    if cursor.rowcount != len(rows):
                        # Some key changed: undo the chunk and swap a key at a time, to name them.
                        cursor.execute("ROLLBACK")
                        cursor.execute("BEGIN IMMEDIATE")
                        for key, expected, value in swaps:
                            cursor.execute(_UPDATE_UNCHANGED, (value, partition, key, expected))
                            if cursor.rowcount != 1:
                                missed.append(key)
                    cursor.execute("COMMIT")
                except sqlite3.Error:
                    self._roll_back(cursor)
                    raise
        except sqlite3.Error as exc:
            raise self._failed("write keys", exc) from exc
        return missed

    def _drop_partition(self, partition: bytes) -> None:
        try:
            with self._connection() as cursor:
                cursor.execute(_DROP_PARTITION, (partition,))
        except sqlite3.Error as exc:
            raise self._failed("drop a partition", exc) from exc

    def _write_batch(self, sql: str, rows: list[tuple[bytes, ...]], what: str) -> None:
        if len(rows) <= GROUPED_BATCH_ROWS:
            # A small batch (an upload's deletion-log intent is one row) would otherwise
            # take the write lock and fsync alone, beside the groups: it joins the next
            # group instead, all or nothing inside it (a savepoint).
            try:
                self._group.run(partial(_execute_batch, sql, rows))
            except sqlite3.Error as exc:
                raise self._failed(what, exc) from exc
            return
        try:
            with self._connection() as cursor:
                # IMMEDIATE takes the write lock up front, so the busy timeout applies to it; a
                # deferred transaction would fail at once when upgrading from read to write.
                cursor.execute("BEGIN IMMEDIATE")
                try:
                    cursor.executemany(sql, rows)
                    cursor.execute("COMMIT")
                except sqlite3.Error:
                    self._roll_back(cursor)
                    raise
        except sqlite3.Error as exc:
            raise self._failed(what, exc) from exc

    # -- group commit --------------------------------------------------------------

    def _write(self, sql: str, params: tuple[bytes, ...], what: str) -> int:
        """Run one write statement in the next group commit; return the rows it changed."""
        try:
            return self._group.run(partial(_execute, sql, params))
        except sqlite3.Error as exc:
            raise self._failed(what, exc) from exc

    def _commit_group(self, group: list[Operation[sqlite3.Cursor]]) -> None:
        """Run a group's statements in one transaction on this thread's connection.

        A statement SQLite refuses is undone alone (statements are atomic) and fails only its
        own caller. If SQLite instead rolled the whole transaction back (a trigger's
        RAISE(ROLLBACK), a full disk), the statements run before it were undone too, so the
        group runs again without the one that failed.
        """
        with self._connection() as cursor:
            while group:
                group = self._try_group(cursor, group)

    def _try_group(
        self, cursor: sqlite3.Cursor, group: list[Operation[sqlite3.Cursor]]
    ) -> list[Operation[sqlite3.Cursor]]:
        """One transaction for `group`; returns the operations to run again (see above)."""
        try:
            # IMMEDIATE takes the write lock up front, so the busy timeout applies to it.
            cursor.execute("BEGIN IMMEDIATE")
            try:
                for index, operation in enumerate(group):
                    try:
                        operation.outcome = operation.run(cursor)
                    except sqlite3.Error as exc:
                        operation.error = exc
                        if not cursor.connection.in_transaction:
                            return group[:index] + group[index + 1 :]
                _before_commit()
                cursor.execute("COMMIT")
            except BaseException:
                self._roll_back(cursor)
                raise
        except sqlite3.Error as exc:  # not begun or not committed: nothing of it was written
            for operation in group:
                if operation.error is None:
                    operation.error = exc
        return []

    def _roll_back(self, cursor: sqlite3.Cursor) -> None:
        try:
            if cursor.connection.in_transaction:
                cursor.execute("ROLLBACK")
        except sqlite3.Error:
            _log.warning("SQLite database %s: rollback failed; reconnecting", self._path)
            self._discard_connection(cursor)


def _execute(sql: str, params: tuple[bytes, ...], cursor: sqlite3.Cursor) -> int:
    """One write statement of a group; returns the rows it changed (its caller judges them)."""
    cursor.execute(sql, params)
    return cursor.rowcount


def _execute_batch(sql: str, rows: list[tuple[bytes, ...]], cursor: sqlite3.Cursor) -> int:
    """A small batch in a group: all its rows or none (a savepoint inside the group's
    transaction), so a refused row undoes the batch alone, as a batch of its own would."""
    cursor.execute("SAVEPOINT batch")
    try:
        cursor.executemany(sql, rows)
    except sqlite3.Error:
        if cursor.connection.in_transaction:  # else SQLite rolled the whole group back
            cursor.execute("ROLLBACK TO batch")
            cursor.execute("RELEASE batch")
        raise
    cursor.execute("RELEASE batch")
    return len(rows)


def _before_commit() -> None:
    """The moment a group's statements ran and its COMMIT has not (tests pause here)."""


def _wait_before_retrying_wal() -> None:
    """The pause between two tries of the WAL switch (tests stop here to order processes)."""
    time.sleep(0.005)
