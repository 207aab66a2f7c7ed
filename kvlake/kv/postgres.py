"""The production KV driver: one PostgreSQL table, reached through a connection pool.

A call made on a thread that runs an event loop (an API server's inline stat) uses that
thread's own connection, outside the pool: the loop must never wait for a pooled
connection that request threads hold through long statements (a commit's batches), since
every client of the process waits with it. Servers read inline only from a PostgreSQL on
the same machine (`on_this_machine`), where a point read answers in tens of microseconds.

Invariant: every operation is one autocommit statement, so `set_if` is a true compare-and-swap
(an INSERT ... ON CONFLICT DO NOTHING or an UPDATE whose WHERE clause is the predicate, which
succeeded only if it touched exactly one row). A statement is retried on a fresh connection only
when the server dropped the old one and running it twice is harmless: never for `set_if`, whose
first attempt may have committed. Errors never echo the URL, which may carry a password.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import re
import threading
from asyncio import _get_running_loop
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Self, TypeVar
from urllib.parse import unquote

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool

from kvlake.errors import ClosedError, ConfigError, KeyNotFoundError, UnavailableError
from kvlake.kv.store import KeyValue, Predicate, Store, precondition_failed

_T = TypeVar("_T")
_Row = tuple[Any, ...]
_Cursor = psycopg.Cursor[_Row]

_DEFAULT_TABLE: Final = "kv"
_TABLE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_URL_FORM: Final = "postgres://user@host:port/database[?table=name]"

_TABLE_EXISTS: Final = "SELECT to_regclass(%s) IS NOT NULL"
_LOCK: Final = "SELECT pg_advisory_xact_lock(%s)"
_SCHEMA: Final = (
    'CREATE TABLE IF NOT EXISTS "{table}" (partition bytea NOT NULL, key bytea NOT NULL,'
    " value bytea NOT NULL, PRIMARY KEY (partition, key))"
)
_GET: Final = 'SELECT value FROM "{table}" WHERE partition = %s AND key = %s'
_SET: Final = (
    'INSERT INTO "{table}" (partition, key, value) VALUES (%s, %s, %s)'
    " ON CONFLICT (partition, key) DO UPDATE SET value = EXCLUDED.value"
)
_INSERT_NEW: Final = (
    'INSERT INTO "{table}" (partition, key, value) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING'
)
_UPDATE_EXISTING: Final = 'UPDATE "{table}" SET value = %s WHERE partition = %s AND key = %s'
_UPDATE_UNCHANGED: Final = (
    'UPDATE "{table}" SET value = %s WHERE partition = %s AND key = %s AND value = %s'
)
_DELETE: Final = 'DELETE FROM "{table}" WHERE partition = %s AND key = %s'
_DELETE_UNCHANGED: Final = 'DELETE FROM "{table}" WHERE partition = %s AND key = %s AND value = %s'
_SCAN_FROM: Final = (
    'SELECT key, value FROM "{table}" WHERE partition = %s AND key >= %s ORDER BY key LIMIT %s'
)
_SCAN_AFTER: Final = (
    'SELECT key, value FROM "{table}" WHERE partition = %s AND key > %s ORDER BY key LIMIT %s'
)
# No min(bytea) aggregate in PostgreSQL: ORDER BY ... LIMIT 1 is the same index probe.
_NEXT_PARTITION: Final = (
    'SELECT partition FROM "{table}" WHERE partition > %s ORDER BY partition LIMIT 1'
)
_SET_MANY: Final = (
    'INSERT INTO "{table}" (partition, key, value)'
    " SELECT %s, k, v FROM unnest(%s::bytea[], %s::bytea[]) AS u(k, v)"
    " ON CONFLICT (partition, key) DO UPDATE SET value = EXCLUDED.value"
)
# One index probe per key, whatever the statistics say (the LATERAL ... LIMIT 1 cannot be
# turned into a join): `key = ANY(...)` or a join on the keys read the whole partition, by a
# bitmap or hash join, while the table's statistics predate the partition (a million keys
# staged moments ago, autovacuum not yet run), which made a bulk delete quadratic.
_GET_MANY: Final = (
    "SELECT u.k, f.value FROM unnest(%s::bytea[]) AS u(k) CROSS JOIN LATERAL"
    ' (SELECT value FROM "{table}" WHERE partition = %s AND key = u.k LIMIT 1) AS f'
)
_GET_ACROSS: Final = (
    'SELECT partition, key, value FROM "{table}"'
    " WHERE partition = ANY(%s::bytea[]) AND key = ANY(%s::bytea[])"
)
# As _GET_MANY: each key's row is found by an index probe (its ctid), then updated by it. A
# row another writer changed after the probe has a new ctid, so it is not written (named
# missed, as a changed value is).
_SWAP_MANY: Final = (
    'UPDATE "{table}" AS t SET value = u.v'
    " FROM unnest(%s::bytea[], %s::bytea[], %s::bytea[]) AS u(k, e, v) CROSS JOIN LATERAL"
    ' (SELECT ctid AS row_id FROM "{table}"'
    " WHERE partition = %s AND key = u.k AND value = u.e LIMIT 1) AS f"
    " WHERE t.ctid = f.row_id RETURNING t.key"
)
_SWAP_CHUNK: Final = 1000
"""Swaps per statement: the planner's cost of 10,000 probes passes `jit_above_cost`, and
compiling the plan took longer than running it."""
_DELETE_MANY: Final = 'DELETE FROM "{table}" WHERE partition = %s AND key = ANY(%s::bytea[])'
_DROP_PARTITION: Final = 'DELETE FROM "{table}" WHERE partition = %s'


def _fetch_one(cursor: _Cursor) -> _Row | None:
    return cursor.fetchone()


def _fetch_all(cursor: _Cursor) -> list[_Row]:
    return cursor.fetchall()


def _row_count(cursor: _Cursor) -> int:
    return cursor.rowcount


class _LoopConnection:
    """The connection of one thread running an event loop, and the lock its statements hold:
    `close()` takes it, so libpq never frees a connection under a running statement."""

    def __init__(self, connection: psycopg.Connection[_Row]) -> None:
        self.connection = connection
        self.lock = threading.Lock()


class _ConnectionLost(Exception):
    """The server closed a pooled connection under a statement (restart, idle timeout)."""


def _split_table(url: str) -> tuple[str, str]:
    """Split `?table=name` off a PostgreSQL URL: libpq rejects query parameters it does not know.

    The rest of the query string is kept byte for byte, so libpq decodes it as the user wrote it.
    """
    base, _, query = url.partition("?")
    kept: list[str] = []
    tables: list[str] = []
    for part in query.split("&") if query else []:
        name, _, value = part.partition("=")
        if name == "table":
            tables.append(unquote(value))
        else:
            kept.append(part)
    if len(tables) > 1:
        raise ConfigError(f"KVLAKE_KV_URL sets table= {len(tables)} times; keep one")
    return (f"{base}?{'&'.join(kept)}" if kept else base), (tables[0] if tables else _DEFAULT_TABLE)


def on_this_machine(url: str) -> bool:
    """Whether a PostgreSQL URL reaches its server on this machine: a Unix socket (libpq's
    default without a host) or a loopback address, for every host it lists. False for a
    URL libpq cannot parse, and for any other name: a server elsewhere may be a network
    round trip away, which an event loop must not wait for."""
    try:
        params = conninfo_to_dict(_split_table(url)[0])
    except psycopg.Error:
        return False
    addresses = str(params.get("hostaddr") or "")
    if addresses:
        return all(_is_loopback(address) for address in addresses.split(","))
    hosts = str(params.get("host") or os.environ.get("PGHOST") or "")
    return all(
        host.startswith(("/", "@")) or host == "localhost" or _is_loopback(host)
        for host in hosts.split(",")
        if host  # an empty entry is libpq's default: the Unix socket
    )


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


class PostgresStore(Store):
    """One table `(partition bytea, key bytea, value bytea)`, created by the first store to open it.

    URL: `postgres://user@host:port/db` (or `postgresql://`); `?table=name` picks the table
    (default `kv`) and other query parameters go to libpq. Thread-safe: statements share a pool.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        table: str = _DEFAULT_TABLE,
        pool_size: int = 10,
        timeout: float = 10.0,
    ) -> None:
        """Connect, create the table if missing, and open the pool.

        Args:
            conninfo: a libpq URL or keyword/value string, without kvlake's `table` parameter.
            pool_size: the most connections this store holds open.
            timeout: seconds to wait for the server, or for a free pooled connection.

        Raises:
            ConfigError: the URL or table name is malformed.
            UnavailableError: the server cannot be reached or refused to create the table.
        """
        if not _TABLE_NAME.fullmatch(table):
            raise ConfigError(
                f"KVLAKE_KV_URL has table={table!r}; use a plain SQL name: a letter or _, then"
                " letters, digits or _ (at most 63)"
            )
        try:
            params = conninfo_to_dict(conninfo)
        except psycopg.Error:
            # libpq quotes the offending part of the URL, which may be the password: drop it.
            raise ConfigError(
                f"KVLAKE_KV_URL is not a valid PostgreSQL URL; use {_URL_FORM}"
            ) from None
        self._password = str(params.get("password") or "")
        self._where = (
            f"PostgreSQL at {params.get('host') or 'localhost'}:{params.get('port') or 5432}"
            f"/{params.get('dbname') or '(default database)'}, table {table}"
        )
        defaults: dict[str, str | int] = {
            "connect_timeout": max(1, round(timeout)),
            "application_name": "kvlake",
        }
        conninfo = make_conninfo(conninfo, **{k: v for k, v in defaults.items() if k not in params})
        self._conninfo = conninfo
        self._closed = False
        self._loop_connections: dict[int, _LoopConnection] = {}
        self._create_table(conninfo, table)
        self._pool: ConnectionPool[psycopg.Connection[_Row]] = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            timeout=timeout,
            open=False,
            name=f"kvlake-kv-{table}",
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except psycopg.Error as exc:
            self._pool.close()
            raise self._unreachable(exc) from exc
        sql = {"table": table}
        self._get_sql = _GET.format_map(sql)
        self._set_sql = _SET.format_map(sql)
        self._insert_new_sql = _INSERT_NEW.format_map(sql)
        self._update_existing_sql = _UPDATE_EXISTING.format_map(sql)
        self._update_unchanged_sql = _UPDATE_UNCHANGED.format_map(sql)
        self._delete_sql = _DELETE.format_map(sql)
        self._delete_unchanged_sql = _DELETE_UNCHANGED.format_map(sql)
        self._scan_from_sql = _SCAN_FROM.format_map(sql)
        self._scan_after_sql = _SCAN_AFTER.format_map(sql)
        self._next_partition_sql = _NEXT_PARTITION.format_map(sql)
        self._set_many_sql = _SET_MANY.format_map(sql)
        self._get_many_sql = _GET_MANY.format_map(sql)
        self._get_across_sql = _GET_ACROSS.format_map(sql)
        self._delete_many_sql = _DELETE_MANY.format_map(sql)
        self._swap_many_sql = _SWAP_MANY.format_map(sql)
        self._drop_partition_sql = _DROP_PARTITION.format_map(sql)

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Open the store a `postgres://` or `postgresql://` URL names."""
        conninfo, table = _split_table(url)
        return cls(conninfo, table=table)

    def _create_table(self, conninfo: str, table: str) -> None:
        # A direct connection, not the pool: a refused connection fails at once, not at timeout.
        lock_id = int.from_bytes(
            hashlib.blake2b(f"kvlake.kv:{table}".encode(), digest_size=8).digest(), signed=True
        )
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                row = conn.execute(_TABLE_EXISTS, (f'"{table}"',)).fetchone()
                if row is not None and row[0]:
                    return  # the usual case, and it needs no CREATE privilege
                # Concurrent CREATE TABLE IF NOT EXISTS can still collide in the catalog: serialize.
                with conn.transaction():
                    conn.execute(_LOCK, (lock_id,))
                    conn.execute(_SCHEMA.format_map({"table": table}))
        except psycopg.OperationalError as exc:
            raise self._unreachable(exc) from exc
        except psycopg.Error as exc:
            raise UnavailableError(
                f"{self._where} could not be created: {self._reason(exc)}; create it or grant"
                " this user CREATE on the schema"
            ) from exc

    def close(self) -> None:
        """Close the pool and its connections; later calls raise ClosedError. Idempotent.

        An event loop's connection is closed once its statement in flight has finished."""
        self._closed = True
        self._pool.close()
        for ident in list(self._loop_connections):
            self._drop_loop_connection(ident)

    # -- errors -------------------------------------------------------------------

    def _reason(self, exc: psycopg.Error) -> str:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return reason.replace(self._password, "***") if self._password else reason

    def _unreachable(self, exc: psycopg.Error) -> UnavailableError:
        return UnavailableError(
            f"{self._where} is unreachable: {self._reason(exc)}; start the server, or fix host,"
            " port and database in KVLAKE_KV_URL"
        )

    def _closed_error(self) -> ClosedError:
        return ClosedError(f"the KV store on {self._where} was closed; open a new one")

    def _failed(self, what: str, exc: psycopg.Error) -> ClosedError | UnavailableError:
        if self._closed:
            return self._closed_error()
        return UnavailableError(
            f"{self._where} could not {what}: {self._reason(exc)}; check the server, then retry"
        )

    # -- statements -----------------------------------------------------------------

    def _run(
        self,
        what: str,
        query: str,
        params: Sequence[Any],
        result: Callable[[_Cursor], _T],
        *,
        idempotent: bool = True,
    ) -> _T:
        try:
            try:
                return self._execute(query, params, result)
            except _ConnectionLost:
                if not idempotent:
                    raise
            return self._execute(query, params, result)
        except _ConnectionLost as lost:
            cause = lost.__cause__
            assert isinstance(cause, psycopg.Error)
            raise self._failed(what, cause) from cause
        except psycopg.Error as exc:
            raise self._failed(what, exc) from exc

    def _execute(self, query: str, params: Sequence[Any], result: Callable[[_Cursor], _T]) -> _T:
        if _get_running_loop() is not None:
            return self._execute_on_loop(query, params, result)
        pool = self._pool
        conn = pool.getconn()
        try:
            return result(conn.execute(query, params, binary=True))
        except psycopg.Error as exc:
            if not conn.broken:
                raise
            lost = exc
        finally:
            pool.putconn(conn)
        # A restart kills every pooled connection at once: replace them all, not one per call.
        pool.check()
        raise _ConnectionLost() from lost

    def _execute_on_loop(
        self, query: str, params: Sequence[Any], result: Callable[[_Cursor], _T]
    ) -> _T:
        ident = threading.get_ident()
        own = self._loop_connections.get(ident)
        if own is None:
            own = self._open_loop_connection(ident)
        with own.lock:
            if self._closed:
                raise self._closed_error()
            try:
                return result(own.connection.execute(query, params, binary=True))
            except psycopg.Error as exc:
                if not own.connection.broken:
                    raise
                lost = exc
        self._drop_loop_connection(ident)  # the retry, if any, connects afresh
        raise _ConnectionLost() from lost

    def _open_loop_connection(self, ident: int) -> _LoopConnection:
        if self._closed:
            raise self._closed_error()
        # The connections of loops whose threads have ended (a test client's portal) go first.
        alive = {thread.ident for thread in threading.enumerate()}
        for gone in [known for known in self._loop_connections if known not in alive]:
            self._drop_loop_connection(gone)
        own = _LoopConnection(psycopg.connect(self._conninfo, autocommit=True))
        self._loop_connections[ident] = own
        if self._closed:  # closed while connecting: close() may have missed it
            self._drop_loop_connection(ident)
            raise self._closed_error()
        return own

    def _drop_loop_connection(self, ident: int) -> None:
        own = self._loop_connections.pop(ident, None)
        if own is not None:
            with own.lock:
                own.connection.close()

    # -- the primitives -------------------------------------------------------------

    def _get(self, partition: bytes, key: bytes) -> bytes:
        row = self._run("read a key", self._get_sql, (partition, key), _fetch_one)
        if row is None:
            raise KeyNotFoundError(f"KV key {key!r} not found in partition {partition!r}")
        value: bytes = row[0]
        return value

    def _get_many(self, partition: bytes, keys: list[bytes]) -> dict[bytes, bytes]:
        rows = self._run("read keys", self._get_many_sql, (keys, partition), _fetch_all)
        return {bytes(key): bytes(value) for key, value in rows}

    def _get_across(
        self, partitions: list[bytes], keys: list[bytes]
    ) -> dict[bytes, dict[bytes, bytes]]:
        rows = self._run("read keys", self._get_across_sql, (partitions, keys), _fetch_all)
        found: dict[bytes, dict[bytes, bytes]] = {}
        for partition, key, value in rows:
            found.setdefault(bytes(partition), {})[bytes(key)] = bytes(value)
        return found

    def _set(self, partition: bytes, key: bytes, value: bytes) -> None:
        self._run("write a key", self._set_sql, (partition, key, value), _row_count)

    def _set_if(
        self, partition: bytes, key: bytes, value: bytes, predicate: Predicate | None
    ) -> None:
        params: tuple[bytes, ...]
        if predicate is None:
            query, params = self._insert_new_sql, (partition, key, value)
        elif predicate.expected is None:
            query, params = self._update_existing_sql, (value, partition, key)
        else:
            query = self._update_unchanged_sql
            params = (value, partition, key, predicate.expected)
        if self._run("write a key", query, params, _row_count, idempotent=False) != 1:
            raise precondition_failed(partition, key, predicate)

    def _delete(self, partition: bytes, key: bytes) -> None:
        self._run("delete a key", self._delete_sql, (partition, key), _row_count)

    def _delete_if(self, partition: bytes, key: bytes, expected: bytes) -> bool:
        # Not retried on a lost connection: a delete that ran would then report False.
        params = (partition, key, expected)
        deleted = self._run(
            "delete a key", self._delete_unchanged_sql, params, _row_count, idempotent=False
        )
        return deleted == 1

    def _scan_page(
        self, partition: bytes, start: bytes, inclusive: bool, limit: int
    ) -> list[KeyValue]:
        query = self._scan_from_sql if inclusive else self._scan_after_sql
        page: list[KeyValue] = self._run(
            "scan a partition", query, (partition, start, limit), _fetch_all
        )
        return page

    def _partitions(self, after: bytes) -> Iterator[bytes]:
        # Skip-scan the primary key: one index probe per partition, however many keys each holds.
        last = after
        while True:
            row = self._run("list partitions", self._next_partition_sql, (last,), _fetch_one)
            if row is None:
                return
            last = row[0]
            yield last

    # -- batches -------------------------------------------------------------------

    def _set_many(self, partition: bytes, items: list[KeyValue]) -> None:
        # One statement may not update a row twice: keep the last value of a repeated key.
        latest = dict(items)
        params = (partition, list(latest), list(latest.values()))
        self._run("write keys", self._set_many_sql, params, _row_count)

    def _delete_many(self, partition: bytes, keys: list[bytes]) -> None:
        self._run("delete keys", self._delete_many_sql, (partition, keys), _row_count)

    def _swap_many(self, partition: bytes, swaps: list[tuple[bytes, bytes, bytes]]) -> list[bytes]:
        missed: list[bytes] = []
        for start in range(0, len(swaps), _SWAP_CHUNK):
            chunk = swaps[start : start + _SWAP_CHUNK]
            wanted = [key for key, _, _ in chunk]  # each once (swap_many checks): one row each
            params = (wanted, [e for _, e, _ in chunk], [v for _, _, v in chunk], partition)
            # Not retried on a lost connection: swaps that ran would then count as missed.
            rows = self._run(
                "write keys", self._swap_many_sql, params, _fetch_all, idempotent=False
            )
            written = {bytes(row[0]) for row in rows}
            missed.extend(key for key in wanted if key not in written)
        return missed

    def _drop_partition(self, partition: bytes) -> None:
        self._run("drop a partition", self._drop_partition_sql, (partition,), _row_count)
