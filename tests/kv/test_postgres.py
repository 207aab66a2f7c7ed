"""The PostgreSQL driver: URLs, table set-up, lost connections and error mapping."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from kvlake.errors import ClosedError, ConfigError, UnavailableError
from kvlake.kv import MUST_EXIST, Store, open_store
from kvlake.kv.postgres import PostgresStore
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
def test_closing_the_store_closes_its_connections(
    postgres_url: str, postgres_dsn: str, app_name: str
) -> None:
    store = open_store(f"{postgres_url}&application_name={app_name}")
    store.set(P, b"k", b"v")
    assert count_connections(postgres_dsn, app_name) >= 1
    store.close()
    # A backend leaves pg_stat_activity when its process exits, a moment after the
    # client's terminate message: the close is seen, but not at once on a busy machine.
    wait_until(
        lambda: count_connections(postgres_dsn, app_name) == 0,
        timeout=10,
        message="the closed store's connections to leave pg_stat_activity",
    )
    with pytest.raises(ClosedError):
        store.get(P, b"k")


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
