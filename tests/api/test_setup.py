"""Health, configuration, set-up state, login, the current user and the OpenAPI document."""

from __future__ import annotations

import httpx
import lakefs
import lakefs_sdk
import pytest
from lakefs_sdk.client import LakeFSClient

from kvlake import LAKEFS_API_VERSION, __version__
from kvlake.auth.ratelimit import FREE_FAILURES
from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Server


def test_health_check_needs_no_credentials(server: Server) -> None:
    assert httpx.get(f"{server.url}/api/v1/healthcheck").status_code == 204


@pytest.mark.local_blockstore  # test_s3_lake.py checks S3's storage config
def test_config_reports_a_numeric_version_and_local_storage(sdk: LakeFSClient) -> None:
    config = sdk.config_api.get_config()
    assert config.version_config is not None and config.version_config.version is not None
    major, minor, patch = config.version_config.version.split(".")
    assert all(part.isdigit() for part in (major, minor, patch))
    storage = config.storage_config
    assert storage is not None
    assert storage.blockstore_type == "local"
    assert storage.pre_sign_support is False
    assert storage.default_namespace_prefix == "local://"
    assert storage.blockstore_namespace_validity_regex == "^local://"


@pytest.mark.local_blockstore  # test_s3_lake.py checks S3's storage config
def test_high_level_client_reads_server_version_and_storage(server: Server) -> None:
    client = server.client()
    assert client.version.count(".") == 2
    assert client.storage_config.blockstore_type == "local"


def test_version_is_the_lakefs_api_version_with_kvlakes_own_beside_it(
    http: httpx.Client,
) -> None:
    for config in (
        http.get("/config").json()["version_config"],
        http.get("/config/version").json(),
    ):
        assert config["version"] == LAKEFS_API_VERSION
        assert config["kvlake_version"] == __version__
    # lakefs-spec's touch needs 1.3.1 or later; clients compare numerically.
    assert tuple(int(part) for part in LAKEFS_API_VERSION.split(".")) >= (1, 3, 1)


def test_setup_state_is_initialized_and_setup_again_conflicts(sdk: LakeFSClient) -> None:
    assert sdk.internal_api.get_setup_state().state == "initialized"
    with pytest.raises(lakefs_sdk.ApiException) as raised:
        sdk.internal_api.setup(lakefs_sdk.Setup(username="someone"))
    assert raised.value.status == 409


def test_current_user_is_the_installation_admin(sdk: LakeFSClient) -> None:
    assert sdk.auth_api.get_current_user().user.id == "admin"


def test_login_returns_a_jwt_usable_as_bearer_and_cookie(server: Server) -> None:
    anonymous = LakeFSClient(lakefs_sdk.Configuration(host=f"{server.url}/api/v1"))
    token = anonymous.auth_api.login(
        lakefs_sdk.LoginInformation(
            access_key_id=ACCESS_KEY_ID, secret_access_key=SECRET_ACCESS_KEY
        )
    )
    assert token.token.count(".") == 2
    assert token.token_expiration is not None and token.token_expiration > 0
    bearer = LakeFSClient(
        lakefs_sdk.Configuration(host=f"{server.url}/api/v1", access_token=token.token)
    )
    assert bearer.auth_api.get_current_user().user.id == "admin"
    cookie = httpx.get(f"{server.url}/api/v1/user", cookies={"internal_auth_session": token.token})
    assert cookie.status_code == 200 and cookie.json()["user"]["id"] == "admin"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer not.a.token"},
        {"Authorization": "Basic !!!"},
        {"Authorization": "Digest abc"},
    ],
)
def test_requests_without_valid_credentials_get_401(
    server: Server, headers: dict[str, str]
) -> None:
    response = httpx.get(f"{server.url}/api/v1/repositories", headers=headers)
    assert response.status_code == 401
    assert response.json()["message"]


def test_wrong_secret_gets_401_and_the_same_message_as_an_unknown_key(server: Server) -> None:
    wrong = httpx.get(f"{server.url}/api/v1/user", auth=(ACCESS_KEY_ID, "wrong"))
    unknown = httpx.get(f"{server.url}/api/v1/user", auth=("AKIAUNKNOWN000000000", "wrong"))
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()
    assert SECRET_ACCESS_KEY not in wrong.text


def test_failed_logins_make_the_address_wait(server: Server, http: httpx.Client) -> None:
    user = "rate-limited"
    assert http.post("/auth/users", json={"id": user}).status_code == 201
    key = http.post(f"/auth/users/{user}/credentials").json()
    login = f"{server.url}/api/v1/auth/login"
    attempt = {"access_key_id": key["access_key_id"], "secret_access_key": "wrong"}
    statuses = [httpx.post(login, json=attempt).status_code for _ in range(FREE_FAILURES + 2)]
    assert statuses == [401] * (FREE_FAILURES + 1) + [429]
    good = {"access_key_id": key["access_key_id"], "secret_access_key": key["secret_access_key"]}
    assert httpx.post(login, json=good).status_code == 429  # this address waits, right or wrong


def test_the_server_serves_its_openapi_document(server: Server) -> None:
    document = httpx.get(f"{server.url}/api/v1/openapi.json").json()
    operation_ids = {
        operation["operationId"]
        for path in document["paths"].values()
        for operation in path.values()
    }
    assert {"getObject", "uploadObject", "login", "createRepository"} <= operation_ids
    assert "ObjectStats" in document["components"]["schemas"]


def test_unknown_route_is_a_json_404(http: httpx.Client) -> None:
    response = http.get("/no/such/route")
    assert response.status_code == 404 and "message" in response.json()


def test_high_level_client_sees_its_user(server: Server) -> None:
    assert lakefs.repositories(client=server.client()) is not None
