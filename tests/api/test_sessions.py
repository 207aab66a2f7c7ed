"""Failed logins slow the guessing address only; session tokens die with logout, key and user."""

from __future__ import annotations

import uuid

import httpx
import lakefs_sdk
from lakefs_sdk.client import LakeFSClient

from kvlake.auth.ratelimit import FREE_FAILURES
from tests.api.server import Server


def _user(sdk: LakeFSClient) -> tuple[str, str, str]:
    user_id = f"u-{uuid.uuid4().hex[:10]}"
    sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user_id))
    sdk.auth_api.add_group_membership("Viewers", user_id)
    key = sdk.auth_api.create_credentials(user_id)
    return user_id, key.access_key_id, key.secret_access_key


def _client_from(server: Server, address: str) -> httpx.Client:
    """A client whose requests come from `address` (any 127/8 address reaches loopback)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=f"{server.url}/api/v1", transport=transport, timeout=60)


def test_a_guessing_address_is_slowed_down_while_the_owner_logs_in_elsewhere(
    server: Server, sdk: LakeFSClient
) -> None:
    _, key, secret = _user(sdk)
    with _client_from(server, "127.0.0.2") as guesser, _client_from(server, "127.0.0.1") as owner:
        for _ in range(FREE_FAILURES + 1):
            assert guesser.get("/user", auth=(key, "wrong")).status_code == 401
        slowed = guesser.get("/user", auth=(key, secret))  # even the right secret waits
        assert slowed.status_code == 429
        assert "retry in" in slowed.json()["message"]
        assert owner.get("/user", auth=(key, secret)).status_code == 200
        login = owner.post("/auth/login", json={"access_key_id": key, "secret_access_key": secret})
        assert login.status_code == 200


def _login(http: httpx.Client, key: str, secret: str) -> str:
    answer = http.post("/auth/login", json={"access_key_id": key, "secret_access_key": secret})
    assert answer.status_code == 200, answer.text
    token: str = answer.json()["token"]
    http.cookies.clear()  # the login's cookie would be sent (and logged out) with every call
    return token


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_logout_revokes_the_token_it_carries(server: Server, sdk: LakeFSClient) -> None:
    _, key, secret = _user(sdk)
    with httpx.Client(base_url=f"{server.url}/api/v1", timeout=60) as http:
        token, other = _login(http, key, secret), _login(http, key, secret)
        assert http.get("/user", headers=_bearer(token)).status_code == 200
        assert http.post("/auth/logout", headers=_bearer(token)).status_code == 204
        refused = http.get("/user", headers=_bearer(token))
        assert refused.status_code == 401 and "logged out" in refused.json()["detail"]
        assert http.get("/user", headers=_bearer(other)).status_code == 200


def test_a_token_dies_with_its_credential_and_its_user(server: Server, sdk: LakeFSClient) -> None:
    user_id, key, secret = _user(sdk)
    with httpx.Client(base_url=f"{server.url}/api/v1", timeout=60) as http:
        token = _login(http, key, secret)
        second_key = sdk.auth_api.create_credentials(user_id)
        second = _login(http, second_key.access_key_id, second_key.secret_access_key)
        sdk.auth_api.delete_credentials(user_id, key)
        assert http.get("/user", headers=_bearer(token)).status_code == 401
        assert http.get("/user", headers=_bearer(second)).status_code == 200
        sdk.auth_api.delete_user(user_id)
        assert http.get("/user", headers=_bearer(second)).status_code == 401
        # A new user under the same id, even with the same access key id and secret.
        sdk.auth_api.create_user(lakefs_sdk.UserCreation(id=user_id))
        sdk.auth_api.add_group_membership("Viewers", user_id)
        assert http.get("/user", headers=_bearer(second)).status_code == 401
