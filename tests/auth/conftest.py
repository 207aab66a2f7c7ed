"""Auth over the real memory KV store (`kv`), with a clock tests move (`clock`)."""

from __future__ import annotations

import pytest

from kvlake.auth import Authenticator, AuthStore, LoginLimiter, ServerKey
from kvlake.kv.memory import MemoryStore
from tests.support import FakeClock


@pytest.fixture
def auth(kv: MemoryStore, clock: FakeClock) -> AuthStore:
    return AuthStore(kv, ServerKey(b"test master key"), clock=clock)


@pytest.fixture
def authenticator(auth: AuthStore, kv: MemoryStore, clock: FakeClock) -> Authenticator:
    return Authenticator(auth, LoginLimiter(kv, clock=clock), clock=clock)
