"""Health, configuration, first set-up, login and the current user."""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake import LAKEFS_API_VERSION, __version__
from kvlake.api.routing import Call, Operation, client_address, json_response, no_content
from kvlake.api.wire import auth as wire_auth
from kvlake.api.wire import setup as wire
from kvlake.auth import SESSION_COOKIE, install, is_installed
from kvlake.auth.credentials import SESSION_SECONDS
from kvlake.errors import ConflictError

API_GROUP: Final = "setup"


def health_check(call: Call[None]) -> Response:
    return no_content()


def storage_config(call: Call[None]) -> wire.StorageConfig:
    blockstore = call.services.blockstore
    scheme = blockstore.scheme
    return wire.StorageConfig(
        blockstore_type=scheme,
        blockstore_namespace_example=f"{scheme}://example-bucket/repo1",
        validity=f"^{scheme}://",
        default_namespace_prefix=f"{scheme}://",
        blockstore_description=f"kvlake {scheme} blockstore",
        # Presigned reads and uploads (getPhysicalAddress, linkPhysicalAddress, and the
        # presigned multipart calls).
        pre_sign_support=blockstore.presigns,
        pre_sign_support_ui=blockstore.presigns,
        pre_sign_multipart_upload=blockstore.presigns,
        import_support=call.services.catalog.imports.supported,
        import_validity_regex=f"^{scheme}://" if call.services.catalog.imports.supported else "^$",
    )


def get_config(call: Call[None]) -> Response:
    storage = storage_config(call)
    return json_response(
        wire.Config(
            version_config=version_config(),
            storage_config=storage,
            storage_config_list=[storage],
            capabilities_config={"async_ops": False},
        )
    )


def get_storage_config(call: Call[None]) -> Response:
    return json_response(storage_config(call))


def version_config() -> wire.VersionConfig:
    """lakeFS's version field carries the lakeFS API version kvlake implements: clients such
    as lakefs-spec enable features by it (`touch` needs 1.3.1). kvlake's own is beside it."""
    return wire.VersionConfig(version=LAKEFS_API_VERSION, kvlake_version=__version__)


def get_version(call: Call[None]) -> Response:
    return json_response(version_config())


def get_setup_state(call: Call[None]) -> Response:
    installed = is_installed(call.services.auth)
    return json_response(wire.SetupState(state="initialized" if installed else "not_initialized"))


def setup(call: Call[wire.Setup]) -> Response:
    request = call.body
    key = request.key
    made = install(
        call.services.auth,
        user_name=request.username,
        access_key_id=key.access_key_id if key else "",
        secret=key.secret_access_key if key else "",
    )
    credential = call.services.auth.get_credential(made.access_key_id)
    return json_response(
        wire_auth.CredentialsWithSecret(
            access_key_id=made.access_key_id,
            secret_access_key=made.secret,
            creation_date=credential.creation_date,
        )
    )


def login(call: Call[wire.LoginInformation]) -> Response:
    request = call.body
    token, expiry = call.services.authenticator.login(
        request.access_key_id, request.secret_access_key, client=client_address(call)
    )
    response = json_response(wire.AuthenticationToken(token=token, token_expiration=expiry))
    response.set_cookie(
        SESSION_COOKIE, token, max_age=SESSION_SECONDS, httponly=True, samesite="strict"
    )
    return response


def logout(call: Call[None]) -> Response:
    """Revoke the session the call carries (cookie or Bearer token), then drop the cookie."""
    scheme, _, value = call.request.headers.get("authorization", "").strip().partition(" ")
    tokens = [value.strip()] if scheme.lower() == "bearer" else []
    tokens.append(call.request.cookies.get(SESSION_COOKIE, ""))
    for token in filter(None, tokens):
        call.services.authenticator.logout(token)
    response = no_content()
    response.delete_cookie(SESSION_COOKIE)
    return response


def get_current_user(call: Call[None]) -> Response:
    assert call.user is not None
    user = call.user
    return json_response(
        wire_auth.CurrentUser(
            user=wire_auth.User(
                id=user.id,
                creation_date=user.creation_date,
                friendly_name=user.friendly_name,
                email=user.email,
            )
        )
    )


OPERATIONS: Final = (
    Operation(
        "healthCheck",
        "GET",
        "/healthcheck",
        health_check,
        API_GROUP,
        public=True,
        responses={204: None},
    ),
    Operation("getConfig", "GET", "/config", get_config, API_GROUP, responses={200: wire.Config}),
    Operation(
        "getStorageConfig",
        "GET",
        "/config/storage",
        get_storage_config,
        API_GROUP,
        responses={200: wire.StorageConfig},
    ),
    Operation(
        "getLakeFSVersion",
        "GET",
        "/config/version",
        get_version,
        API_GROUP,
        responses={200: wire.VersionConfig},
    ),
    Operation(
        "getSetupState",
        "GET",
        "/setup_lakefs",
        get_setup_state,
        API_GROUP,
        public=True,
        responses={200: wire.SetupState},
    ),
    Operation(
        "setup",
        "POST",
        "/setup_lakefs",
        setup,
        API_GROUP,
        public=True,
        body=wire.Setup,
        responses={200: wire_auth.CredentialsWithSecret, 409: None},
        lakefs_errors={ConflictError: "lakeFS already initialized"},
    ),
    Operation(
        "login",
        "POST",
        "/auth/login",
        login,
        "auth",
        public=True,
        body=wire.LoginInformation,
        responses={200: wire.AuthenticationToken, 401: None},
    ),
    Operation("logout", "POST", "/auth/logout", logout, "auth", public=True, responses={204: None}),
    Operation(
        "getCurrentUser",
        "GET",
        "/user",
        get_current_user,
        "auth",
        responses={200: wire_auth.CurrentUser},
    ),
)
