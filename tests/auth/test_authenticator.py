"""Authentication by Basic, Bearer and cookie; authorization; failed-login limits in the KV."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from kvlake.auth import Authenticator, AuthStore, LoginLimiter, Permission, ServerKey, Statement
from kvlake.auth.ratelimit import FREE_FAILURES, MAX_DELAY, WINDOW_SECONDS
from kvlake.errors import AuthenticationError, PermissionDeniedError, RateLimitedError
from kvlake.kv.faults import FaultyStore
from kvlake.kv.memory import MemoryStore
from tests.support import FakeClock


def _basic(key: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{key}:{secret}".encode()).decode()


@pytest.fixture
def keys(auth: AuthStore) -> tuple[str, str]:
    auth.create_user("ada")
    credential, secret = auth.create_credentials("ada")
    return credential.access_key_id, secret


def test_basic_bearer_and_cookie_name_the_user(
    authenticator: Authenticator, keys: tuple[str, str], clock: FakeClock
) -> None:
    key, secret = keys
    assert authenticator.authenticate(_basic(key, secret), None).id == "ada"
    token, _ = authenticator.login(key, secret)
    assert authenticator.authenticate(f"Bearer {token}", None).id == "ada"
    assert authenticator.authenticate(None, token).id == "ada"


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Basic",
        "Basic !!!",
        "Basic " + base64.b64encode(b"nocolon").decode(),
        "Bearer",
        "Bearer x.y.z",
        "Negotiate abc",
    ],
)
def test_missing_or_malformed_credentials_are_refused(
    authenticator: Authenticator, header: str | None
) -> None:
    with pytest.raises(AuthenticationError):
        authenticator.authenticate(header, None)


def test_a_token_of_a_deleted_user_is_refused(
    authenticator: Authenticator, auth: AuthStore, keys: tuple[str, str]
) -> None:
    token, _ = authenticator.login(*keys)
    auth.delete_user("ada")
    with pytest.raises(AuthenticationError):
        authenticator.authenticate(f"Bearer {token}", None)


GUESSER = "203.0.113.9"
OWNER = "198.51.100.1"


def _fail(authenticator: Authenticator, key: str, times: int = 1) -> None:
    for _ in range(times):
        with pytest.raises(AuthenticationError):
            authenticator.check_secret(key, "wrong", client=GUESSER)


def test_a_guessing_address_must_wait_while_the_owner_elsewhere_logs_in_at_once(
    authenticator: Authenticator, keys: tuple[str, str], clock: FakeClock
) -> None:
    key, secret = keys
    _fail(authenticator, key, FREE_FAILURES + 1)
    with pytest.raises(RateLimitedError, match="retry in"):
        authenticator.check_secret(key, secret, client=GUESSER)  # even a right guess waits
    assert authenticator.check_secret(key, secret, client=OWNER).id == "ada"
    token, _ = authenticator.login(key, secret, client=OWNER)
    assert authenticator.authenticate(None, token).id == "ada"


def test_the_wait_doubles_with_each_failure_up_to_the_cap(
    authenticator: Authenticator, keys: tuple[str, str], clock: FakeClock
) -> None:
    key, _ = keys
    _fail(authenticator, key, FREE_FAILURES + 1)
    waits = []
    for _ in range(12):
        start = clock()
        while True:  # probe every 0.5 s until an attempt is evaluated (and fails) again
            try:
                authenticator.check_secret(key, "wrong", client=GUESSER)
            except RateLimitedError:
                clock.advance(0.5)
            except AuthenticationError:
                break
        waits.append(clock() - start)
    assert waits[:5] == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert waits[-1] == MAX_DELAY


def test_a_right_secret_after_the_wait_clears_the_address(
    authenticator: Authenticator, keys: tuple[str, str], clock: FakeClock
) -> None:
    key, secret = keys
    _fail(authenticator, key, FREE_FAILURES + 1)
    clock.advance(1.0)
    assert authenticator.check_secret(key, secret, client=GUESSER).id == "ada"
    _fail(authenticator, key, FREE_FAILURES)  # free failures again: the counter restarted
    clock.advance(WINDOW_SECONDS)
    _fail(authenticator, key, FREE_FAILURES)  # and a quiet window forgets them


def test_failure_counts_are_shared_by_every_process_on_the_store(
    auth: AuthStore, kv: MemoryStore, keys: tuple[str, str], clock: FakeClock
) -> None:
    key, secret = keys
    processes = [Authenticator(auth, LoginLimiter(kv, clock=clock), clock=clock) for _ in range(2)]
    for attempt in range(FREE_FAILURES + 1):
        with pytest.raises(AuthenticationError):
            processes[attempt % 2].check_secret(key, "wrong", client=GUESSER)
    for process in processes:
        with pytest.raises(RateLimitedError):
            process.check_secret(key, secret, client=GUESSER)
        assert process.check_secret(key, secret, client=OWNER).id == "ada"


# -- sessions are bound to their credential -----------------------------------------------


def test_a_logged_out_token_is_refused_and_others_keep_working(
    authenticator: Authenticator, keys: tuple[str, str]
) -> None:
    key, secret = keys
    first, _ = authenticator.login(key, secret)
    second, _ = authenticator.login(key, secret)
    authenticator.logout(first)
    with pytest.raises(AuthenticationError, match="logged out"):
        authenticator.authenticate(f"Bearer {first}", None)
    with pytest.raises(AuthenticationError, match="logged out"):
        authenticator.authenticate(None, first)
    assert authenticator.authenticate(None, second).id == "ada"
    authenticator.logout("not a token")  # nothing to revoke: no error


def test_a_token_dies_with_its_credential(
    authenticator: Authenticator, auth: AuthStore, keys: tuple[str, str]
) -> None:
    key, secret = keys
    token, _ = authenticator.login(key, secret)
    auth.delete_credentials("ada", key)
    with pytest.raises(AuthenticationError, match="no longer exists"):
        authenticator.authenticate(None, token)


def test_a_token_does_not_work_for_a_new_user_with_the_same_ids(
    authenticator: Authenticator, auth: AuthStore, clock: FakeClock
) -> None:
    auth.create_user("bob")
    auth.create_credentials("bob", access_key_id="AKIABOB", secret="same secret")
    token, _ = authenticator.login("AKIABOB", "same secret")
    auth.delete_user("bob")
    auth.create_user("bob")
    auth.create_credentials("bob", access_key_id="AKIABOB", secret="same secret")
    with pytest.raises(AuthenticationError, match="no longer exists"):
        authenticator.authenticate(None, token)
    fresh, _ = authenticator.login("AKIABOB", "same secret")
    assert authenticator.authenticate(None, fresh).id == "bob"


def test_unknown_keys_are_not_counted(authenticator: Authenticator, kv: MemoryStore) -> None:
    for _ in range(3):
        with pytest.raises(AuthenticationError):
            authenticator.check_secret("AKIANOSUCHKEY", "x")
    assert list(kv.scan(b"auth/login_failures")) == []


def test_authorize_follows_the_attached_policies(
    authenticator: Authenticator, auth: AuthStore, keys: tuple[str, str]
) -> None:
    user = auth.get_user("ada")
    read = Permission("fs:ReadObject", "arn:lakefs:fs:::repository/r/object/a")
    with pytest.raises(PermissionDeniedError, match="fs:ReadObject"):
        authenticator.authorize(user, [read])
    auth.create_policy("read", (Statement(effect="allow", action=("fs:*",), resource="*"),))
    auth.attach_to_user("ada", "read")
    authenticator.authorize(user, [read])


# -- the memo of successful lookups (kvlake.auth.cache) -------------------------------------

READ = Permission("fs:ReadObject", "arn:lakefs:fs:::repository/r/object/a")


def _counted(clock: FakeClock, *, cache_ttl: float = 1.0) -> tuple[Authenticator, FaultyStore]:
    kv = FaultyStore(MemoryStore(), [])
    auth = AuthStore(kv, ServerKey(b"test master key"), clock=clock)
    auth.create_user("ada")
    auth.create_policy("read", (Statement(effect="allow", action=("fs:*",), resource="*"),))
    auth.attach_to_user("ada", "read")
    limiter = LoginLimiter(kv, clock=clock)
    return Authenticator(auth, limiter, clock=clock, cache_ttl=cache_ttl), kv


def _check(authenticator: Authenticator, header: str) -> None:
    authenticator.authorize(authenticator.authenticate(header, None), [READ])


def test_a_repeated_request_reads_no_auth_record_within_the_ttl(clock: FakeClock) -> None:
    authenticator, kv = _counted(clock)
    _, secret = authenticator.store.create_credentials("ada", access_key_id="AKIAADA")
    header = _basic("AKIAADA", secret)
    _check(authenticator, header)
    before = len(kv.calls)
    _check(authenticator, header)
    assert len(kv.calls) == before
    clock.advance(1.0)
    _check(authenticator, header)
    assert len(kv.calls) > before  # expired: read again


def test_a_zero_ttl_reads_the_records_on_every_request(clock: FakeClock) -> None:
    authenticator, kv = _counted(clock, cache_ttl=0)
    _, secret = authenticator.store.create_credentials("ada", access_key_id="AKIAADA")
    _check(authenticator, _basic("AKIAADA", secret))
    before = len(kv.calls)
    _check(authenticator, _basic("AKIAADA", secret))
    assert len(kv.calls) > before


def test_a_revocation_on_this_process_takes_effect_at_once(clock: FakeClock) -> None:
    authenticator, _ = _counted(clock)
    auth = authenticator.store
    _, secret = auth.create_credentials("ada", access_key_id="AKIAADA")
    _check(authenticator, _basic("AKIAADA", secret))
    auth.detach_from_user("ada", "read")
    with pytest.raises(PermissionDeniedError):
        _check(authenticator, _basic("AKIAADA", secret))
    auth.delete_credentials("ada", "AKIAADA")
    with pytest.raises(AuthenticationError):
        authenticator.authenticate(_basic("AKIAADA", secret), None)


def test_a_revocation_on_another_process_takes_effect_within_the_ttl(clock: FakeClock) -> None:
    authenticator, kv = _counted(clock)
    other = AuthStore(kv, ServerKey(b"test master key"), clock=clock)  # another process
    _, secret = other.create_credentials("ada", access_key_id="AKIAADA")
    header = _basic("AKIAADA", secret)
    _check(authenticator, header)
    other.delete_credentials("ada", "AKIAADA")
    clock.advance(0.5)
    _check(authenticator, header)  # the documented staleness: at most cache_ttl
    clock.advance(0.5)
    with pytest.raises(AuthenticationError):
        authenticator.authenticate(header, None)


def test_a_wrong_secret_is_never_answered_from_the_cache(clock: FakeClock) -> None:
    authenticator, kv = _counted(clock)
    _, secret = authenticator.store.create_credentials("ada", access_key_id="AKIAADA")
    _check(authenticator, _basic("AKIAADA", secret))
    with pytest.raises(AuthenticationError):
        authenticator.authenticate(_basic("AKIAADA", "wrong"), None)
    assert kv.count("set_if", b"auth/login_failures") == 1  # counted, as without a cache


def _signed_with(secret: str) -> Callable[[str], bool]:
    """A signature check as the S3 gateway makes one: does the key's secret sign it?"""
    return lambda expected: expected == secret


def test_a_signature_is_checked_against_the_key_and_cached_within_the_ttl(
    clock: FakeClock,
) -> None:
    authenticator, kv = _counted(clock)
    _, secret = authenticator.store.create_credentials("ada", access_key_id="AKIAADA")
    assert authenticator.check_signature("AKIAADA", _signed_with(secret)).id == "ada"
    before = len(kv.calls)
    assert authenticator.check_signature("AKIAADA", _signed_with(secret)).id == "ada"
    assert len(kv.calls) == before
    clock.advance(1.0)
    authenticator.check_signature("AKIAADA", _signed_with(secret))
    assert len(kv.calls) > before  # expired: read again


def test_a_wrong_signature_is_never_answered_from_the_cache(clock: FakeClock) -> None:
    authenticator, kv = _counted(clock)
    _, secret = authenticator.store.create_credentials("ada", access_key_id="AKIAADA")
    authenticator.check_signature("AKIAADA", _signed_with(secret))
    with pytest.raises(AuthenticationError):
        authenticator.check_signature("AKIAADA", _signed_with("another secret"))
    assert kv.count("set_if", b"auth/login_failures") == 1  # counted, as without a cache


def test_a_deleted_key_stops_signing_at_once_on_this_process(clock: FakeClock) -> None:
    authenticator, _ = _counted(clock)
    _, secret = authenticator.store.create_credentials("ada", access_key_id="AKIAADA")
    authenticator.check_signature("AKIAADA", _signed_with(secret))
    authenticator.store.delete_credentials("ada", "AKIAADA")
    with pytest.raises(AuthenticationError):
        authenticator.check_signature("AKIAADA", _signed_with(secret))


def test_the_cached_caller_is_only_a_caller_checked_before(
    authenticator: Authenticator, keys: tuple[str, str]
) -> None:
    """`cached_caller` answers from the cache alone (the event loop's inline reads call it):
    nothing before a successful check, never a wrong secret, nothing once forgotten."""
    key, secret = keys
    basic = _basic(key, secret)
    token, _ = authenticator.login(key, secret)
    assert authenticator.cached_caller(basic, None) is None
    assert authenticator.cached_caller(f"Bearer {token}", None) is None
    authenticator.authenticate(basic, None)
    authenticator.authenticate(None, token)
    cached = authenticator.cached_caller(basic, None)
    assert cached is not None and cached.id == "ada"
    by_token = authenticator.cached_caller(f"Bearer {token}", None)
    assert by_token is not None and by_token.id == "ada"
    by_cookie = authenticator.cached_caller(None, token)
    assert by_cookie is not None and by_cookie.id == "ada"
    for header in (_basic(key, secret + "x"), "Basic !!!", "Bearer x.y.z", "Negotiate a", None):
        assert authenticator.cached_caller(header, None) is None
    authenticator.forget()
    assert authenticator.cached_caller(basic, None) is None
