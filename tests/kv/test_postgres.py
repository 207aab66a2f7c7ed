"""The PostgreSQL driver: URLs, table set-up, lost connections and error mapping."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest

from kvlake.errors import ClosedError, ConfigError, UnavailableError
from kvlake.kv import MUST_EXIST, Store, open_store
from kvlake.kv.postgres import PostgresStore, on_this_machine
from tests.support import drop_postgres_table, wait_until

P = b"partition"
SECRET = "s3cr3t-pa55"

Call = Callable[[Store], object]

OPERATIONS: dict[str, Call] = {
    "get": lambda s: s.get(P, b"k"),
    "scan": lambda s: list(s.scan(P)),
    "partitions": lambda s: list(s.partitions()),
    "set": lambda s: s.set(P, b"k", b"v"),
    "set_if-none": lambda s: s.set_if(P, b"new", b"v", None),
    "set_if-must-exist": lambda s: s.set_if(P, b"k", b"v", MUST_EXIST),
    "delete": lambda s: s.delete(P, b"k"),
    "set_many": lambda s: s.set_many(P, [(b"k", b"v"), (b"k2", b"v")]),
    "delete_many": lambda s: s.delete_many(P, [b"k", b"k2"]),
    "drop_partition": lambda s: s.drop_partition(P),
}


def table_exists(dsn: str, table: str) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (f'"{table}"',)).fetchone()
    return bool(row and row[0])


def assert_no_secret(error: BaseException | None) -> None:
    """Nor in any exception a traceback of this one would print."""
    while error is not None:
        assert SECRET not in str(error)
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)


@pytest.fixture
def app_name() -> str:
    return f"kvlake_test_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def pg_store(postgres_url: str, app_name: str) -> Iterator[Store]:
    with open_store(f"{postgres_url}&application_name={app_name}") as store:
        store.set(P, b"k", b"v")
        yield store


# -- URLs: no server needed ------------------------------------------------------------------


def test_an_unreachable_server_raises_unavailable_naming_where_without_the_password() -> None:
    with pytest.raises(UnavailableError) as caught:
        open_store(f"postgres://kv:{SECRET}@127.0.0.1:1/lake")
    message = str(caught.value)
    assert "127.0.0.1:1/lake" in message
    assert "KVLAKE_KV_URL" in message and "start the server" in message
    assert_no_secret(caught.value)


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("table=no-dashes", "plain SQL name"),
        ("table=1digit", "plain SQL name"),
        ("table=a&table=b", "2 times"),
        ("tablex=1", "not a valid PostgreSQL URL"),
    ],
)
def test_a_malformed_url_raises_config_error_without_the_password(query: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as caught:
        open_store(f"postgresql://kv:{SECRET}@127.0.0.1:1/lake?{query}")
    assert_no_secret(caught.value)


def test_a_url_libpq_cannot_parse_raises_config_error_without_the_password() -> None:
    with pytest.raises(ConfigError, match="KVLAKE_KV_URL") as caught:
        open_store(f"postgres://kv:{SECRET}%zz@127.0.0.1:1/lake")
    assert_no_secret(caught.value)


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("postgresql://u@127.0.0.1:5432/kv", True),
        ("postgres://u@localhost/kv?table=t", True),
        ("postgresql://u@[::1]:5432/kv", True),
        ("postgresql:///kv", True),  # libpq's default: the Unix socket
        ("postgresql:///kv?host=/var/run/postgresql", True),
        ("postgresql://u@127.0.0.2/kv", True),
        ("postgresql://u@db.example.com/kv", False),
        ("postgresql://u@10.0.0.5/kv", False),
        ("postgresql://u@127.0.0.1,db.example.com/kv", False),  # the second may answer
        ("postgresql://u@db/kv?hostaddr=127.0.0.1", True),
        ("postgresql://u@localhost/kv?hostaddr=10.0.0.5", False),
        ("postgres://u%zz@127.0.0.1/kv", False),  # unparsable: never trusted
    ],
)
def test_a_server_counts_as_on_this_machine_only_over_a_socket_or_loopback(
    url: str, local: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGHOST", raising=False)
    assert on_this_machine(url) is local


def test_without_a_host_pghost_says_where_the_server_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGHOST", "db.example.com")
    assert not on_this_machine("postgresql:///kv")


# -- against the server ----------------------------------------------------------------------


@pytest.mark.postgres
def test_the_table_parameter_names_the_table_created(
    postgres_dsn: str, postgres_table: str
) -> None:
    assert not table_exists(postgres_dsn, postgres_table)
    with PostgresStore.from_url(f"{postgres_dsn}?table={postgres_table}") as store:
        store.set(P, b"k", b"v")
    assert table_exists(postgres_dsn, postgres_table)
    with PostgresStore(postgres_dsn, table=postgres_table) as store:  # reopened: data kept
        assert store.get(P, b"k")[0] == b"v"


@pytest.mark.postgres
def test_stores_opening_a_new_table_at_once_create_it_once(
    postgres_dsn: str, postgres_table: str
) -> None:
    start = threading.Barrier(8)

    def open_and_write(n: int) -> None:
        start.wait()
        with PostgresStore(postgres_dsn, table=postgres_table, pool_size=1) as store:
            store.set(P, b"%d" % n, b"v")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(open_and_write, range(8)))
    with PostgresStore(postgres_dsn, table=postgres_table) as store:
        assert len(list(store.scan(P))) == 8


@pytest.mark.postgres
def test_other_query_parameters_reach_the_server(
    pg_store: Store, postgres_dsn: str, app_name: str
) -> None:
    with psycopg.connect(postgres_dsn) as conn:
        query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
        row = conn.execute(query, (app_name,)).fetchone()
    assert row is not None and row[0] >= 1


@pytest.mark.postgres
@pytest.mark.parametrize("call", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_every_operation_on_a_dropped_table_raises_unavailable(
    pg_store: Store, postgres_dsn: str, postgres_table: str, call: Call
) -> None:
    drop_postgres_table(postgres_dsn, postgres_table)
    with pytest.raises(UnavailableError, match="does not exist.*retry") as caught:
        call(pg_store)
    assert isinstance(caught.value.__cause__, psycopg.Error)


def terminate_connections(dsn: str, app_name: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
            " WHERE application_name = %s",
            (app_name,),
        ).fetchall()
    return len(rows)


@pytest.mark.postgres
@pytest.mark.parametrize("call", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_lost_connections_are_replaced_and_safe_statements_rerun(
    pg_store: Store, postgres_dsn: str, app_name: str, call: Call
) -> None:
    assert terminate_connections(postgres_dsn, app_name) >= 1
    if call in (OPERATIONS["set_if-none"], OPERATIONS["set_if-must-exist"]):
        # It might have committed before the connection dropped: never rerun, say so instead.
        with pytest.raises(UnavailableError, match="terminat|closed|lost|connection") as caught:
            call(pg_store)
        assert isinstance(caught.value.__cause__, psycopg.OperationalError)
    call(pg_store)


@pytest.mark.postgres
@pytest.mark.parametrize("on_a_loop", [False, True], ids=["threads", "event-loop"])
def test_closing_the_store_closes_its_connections(
    postgres_url: str, postgres_dsn: str, app_name: str, on_a_loop: bool
) -> None:
    """The pool's connections, and an event loop's own one (`on_a_loop`) too."""
    store = open_store(f"{postgres_url}&application_name={app_name}")
    store.set(P, b"k", b"v")

    def read() -> object:
        return _on_a_loop(lambda: store.get(P, b"k")) if on_a_loop else store.get(P, b"k")

    read()
    assert count_connections(postgres_dsn, app_name) >= (2 if on_a_loop else 1)
    store.close()
    # A backend leaves pg_stat_activity when its process exits, a moment after the
    # client's terminate message: the close is seen, but not at once on a busy machine.
    wait_until(
        lambda: count_connections(postgres_dsn, app_name) == 0,
        timeout=10,
        message="the closed store's connections to leave pg_stat_activity",
    )
    with pytest.raises(ClosedError):
        read()


def count_connections(dsn: str, app_name: str) -> int:
    with psycopg.connect(dsn) as conn:
        query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
        row = conn.execute(query, (app_name,)).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.postgres
def test_a_restart_losing_every_pooled_connection_costs_no_failed_read(
    pg_store: Store, postgres_dsn: str, app_name: str
) -> None:
    with ThreadPoolExecutor(8) as pool:  # readers waiting on each other grow the pool
        for _ in range(20):
            list(pool.map(lambda _: [pg_store.get(P, b"k") for _ in range(20)], range(8)))
            if count_connections(postgres_dsn, app_name) >= 3:
                break
    assert count_connections(postgres_dsn, app_name) >= 3
    assert terminate_connections(postgres_dsn, app_name) >= 3
    for _ in range(5):
        assert pg_store.get(P, b"k")[0] == b"v"


def _on_a_loop(call: Callable[[], object]) -> object:
    """`call` made from a thread running an event loop, as an inline stat is."""

    async def run() -> object:
        return call()

    return asyncio.run(run())


@pytest.mark.postgres
def test_a_call_on_an_event_loop_never_waits_for_the_pool(
    postgres_dsn: str, postgres_table: str
) -> None:
    """The loop's own connection: request threads holding every pooled one (long
    statements) must not stall the loop, and with it every client of the process."""
    with PostgresStore(postgres_dsn, table=postgres_table, pool_size=1, timeout=1) as store:
        store.set(P, b"k", b"v")
        with store._pool.connection():  # the pool's one connection, as a long statement holds it
            with pytest.raises(UnavailableError):
                store.get(P, b"k")  # a thread waits for the pool, and gives up
            assert _on_a_loop(lambda: store.get(P, b"k")[0]) == b"v"


@pytest.mark.postgres
def test_a_loop_s_lost_connection_is_replaced_and_its_read_rerun(
    pg_store: Store, postgres_dsn: str, app_name: str
) -> None:
    assert _on_a_loop(lambda: pg_store.get(P, b"k")[0]) == b"v"
    assert terminate_connections(postgres_dsn, app_name) >= 2  # the pool's and the loop's
    assert _on_a_loop(lambda: pg_store.get(P, b"k")[0]) == b"v"
    with pytest.raises(UnavailableError):  # a compare-and-swap is never rerun
        terminate_connections(postgres_dsn, app_name)
        _on_a_loop(lambda: pg_store.set_if(P, b"new", b"v", None))


@pytest.mark.postgres
def test_a_loop_connecting_while_the_store_closes_leaves_no_connection_open(
    postgres_url: str, postgres_dsn: str, app_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """close() runs while a loop's first call is connecting: the new connection is closed
    too, not left open past the store."""
    store = open_store(f"{postgres_url}&application_name={app_name}")
    connect = psycopg.connect

    def connect_while_closing(*args: Any, **kwargs: Any) -> psycopg.Connection[Any]:
        monkeypatch.undo()  # once: the checks below connect too, and must not close it
        store.close()
        return connect(*args, **kwargs)

    monkeypatch.setattr("kvlake.kv.postgres.psycopg.connect", connect_while_closing)
    with pytest.raises(ClosedError):
        _on_a_loop(lambda: store.get(P, b"k"))
    wait_until(
        lambda: count_connections(postgres_dsn, app_name) == 0,
        timeout=10,
        message="the loop's connection, opened as the store closed, to be closed",
    )
