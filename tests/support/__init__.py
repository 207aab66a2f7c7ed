"""Helpers the tests of several layers share: a clock, the KV drivers, PostgreSQL, waiting.

A helper used by one layer's tests stays beside them (tests/graveler/helpers.py);
one that another layer's tests need moves here. Fixtures go in tests/conftest.py.
"""

from tests.support.clock import FakeClock
from tests.support.gate import GatedStarter
from tests.support.postgres import drop_postgres_table
from tests.support.stores import STORES, store_marks, store_params
from tests.support.waiting import wait_until

__all__ = [
    "STORES",
    "FakeClock",
    "GatedStarter",
    "drop_postgres_table",
    "store_marks",
    "store_params",
    "wait_until",
]
