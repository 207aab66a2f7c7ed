"""Helpers the tests of several layers share: a clock, the backends, PostgreSQL, waiting.

A helper used by one layer's tests stays beside them (tests/graveler/helpers.py);
one that another layer's tests need moves here. Fixtures go in tests/conftest.py.
"""

from tests.support.backends import STORES, store_params
from tests.support.clock import FakeClock
from tests.support.postgres import drop_postgres_table
from tests.support.waiting import wait_until

__all__ = [
    "STORES",
    "FakeClock",
    "drop_postgres_table",
    "store_params",
    "wait_until",
]
