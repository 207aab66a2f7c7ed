"""Auth over the real memory KV store, with a clock tests move."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvlake.auth import Authenticator, AuthStore, LoginLimiter, ServerKey
from kvlake.kv.memory import MemoryStore
from tests.graveler.helpers import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def kv() -> Iterator[MemoryStore]:
    with MemoryStore() as store:
        yield store


@pytest.fixture
def auth(kv: MemoryStore, clock: FakeClock) -> AuthStore:
    return AuthStore(kv, ServerKey(b"test master key"), clock=clock)


@pytest.fixture
def authenticator(auth: AuthStore, kv: MemoryStore, clock: FakeClock) -> Authenticator:
    return Authenticator(auth, LoginLimiter(kv, clock=clock), clock=clock)
