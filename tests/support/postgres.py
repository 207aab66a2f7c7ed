"""The PostgreSQL test server: where it is, and dropping the tables tests made on it."""

from __future__ import annotations

import psycopg
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


def drop_postgres_table(dsn: str, table: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
