"""Fixtures every layer's tests share: a PostgreSQL database for driver-parametrized suites.

Invariant: PostgreSQL tests never vanish silently in CI. Locally a missing server skips them with
a message saying how to enable them; with CI=true it fails the run instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

POSTGRES_DSN_VARIABLE = "KVLAKE_TEST_POSTGRES_DSN"
DEFAULT_POSTGRES_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def postgres_target(dsn: str) -> str:
    """host:port/db of a DSN: never the DSN itself, which may carry a password."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        return f"(an invalid {POSTGRES_DSN_VARIABLE})"
    return f"{params.get('host', 'localhost')}:{params.get('port', 5432)}/{params.get('dbname')}"


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The test server's DSN; skips (fails when CI=true) if it cannot be reached."""
    dsn = os.environ.get(POSTGRES_DSN_VARIABLE, DEFAULT_POSTGRES_DSN)
    try:
        with psycopg.connect(dsn, connect_timeout=5, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())
        message = (
            f"PostgreSQL at {postgres_target(dsn)} is unreachable ({reason}); start PostgreSQL"
            f" or set {POSTGRES_DSN_VARIABLE} to a database you may create tables in"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return dsn


def drop_postgres_table(dsn: str, table: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))


@pytest.fixture
def postgres_table(postgres_dsn: str) -> Iterator[str]:
    """A table name no other test uses; the table is dropped after the test."""
    table = f"kv_test_{uuid.uuid4().hex[:16]}"
    yield table
    drop_postgres_table(postgres_dsn, table)


@pytest.fixture
def postgres_url(postgres_dsn: str, postgres_table: str) -> str:
    """A KV URL on the test server whose table is this test's alone."""
    return f"{postgres_dsn}{'&' if '?' in postgres_dsn else '?'}table={postgres_table}"
