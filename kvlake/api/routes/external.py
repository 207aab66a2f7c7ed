"""External principals, STS and OIDC logins, answered as lakeFS answers without them.

kvlake authenticates its own users only (access keys, its login tokens). A
lakeFS without an external authentication service answers these operations so:
- the external principal operations and `externalPrincipalLogin`: 501 `Not
  Implemented`, before looking at their inputs (after authentication, for
  those that need credentials);
- `stsLogin`: 501 `Not Implemented` (no OIDC provider to validate the code);
- `oauthCallback`: 200 with an empty body (lakeFS's handler without OIDC writes
  nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.routing import Call, Operation
from kvlake.api.wire import setup as wire
from kvlake.errors import FeatureOffError

API_GROUP: Final = "external"
PRINCIPALS: Final = "/auth/users/{userId}/external/principals"
BodyT = TypeVar("BodyT")
_PRINCIPAL_ID: Final = params.text("principalId", "the external principal", required=True)


def _feature_off() -> FeatureOffError:
    return FeatureOffError(
        "kvlake has no external principals, STS or OIDC logins; use an access key or"
        " POST /auth/login"
    )


def principals_off(call: Call[None]) -> Response:
    raise _feature_off()


def create_principal_off(call: Call[wire.ExternalPrincipalCreation | None]) -> Response:
    raise _feature_off()


def principal_login_off(call: Call[wire.ExternalLoginInformation]) -> Response:
    raise _feature_off()


def sts_login_off(call: Call[wire.StsAuthRequest]) -> Response:
    raise _feature_off()


def oauth_callback(call: Call[None]) -> Response:
    return Response(status_code=200)


_PRINCIPALS_OFF: Final = "external principals: not in kvlake (501, as lakeFS without them)"


def _off(
    operation_id: str,
    method: str,
    path: str,
    handler: Callable[[Call[BodyT]], Response],
    **rest: Any,
) -> Operation[BodyT]:
    """An operation kvlake answers 501 Not Implemented, as lakeFS does without the feature."""
    return Operation(operation_id, method, path, handler, API_GROUP, responses={501: None}, **rest)


OPERATIONS: Final = (
    _off(
        "createUserExternalPrincipal",
        "POST",
        PRINCIPALS,
        create_principal_off,
        summary=_PRINCIPALS_OFF,
        params=(_PRINCIPAL_ID,),
        body=wire.ExternalPrincipalCreation,
        optional_body=True,
    ),
    _off(
        "deleteUserExternalPrincipal",
        "DELETE",
        PRINCIPALS,
        principals_off,
        summary=_PRINCIPALS_OFF,
        params=(_PRINCIPAL_ID,),
    ),
    _off(
        "listUserExternalPrincipals",
        "GET",
        PRINCIPALS + "/ls",
        principals_off,
        summary=_PRINCIPALS_OFF,
        params=params.PAGE,
    ),
    _off(
        "getExternalPrincipal",
        "GET",
        "/auth/external/principals",
        principals_off,
        summary=_PRINCIPALS_OFF,
        params=(_PRINCIPAL_ID,),
    ),
    _off(
        "externalPrincipalLogin",
        "POST",
        "/auth/external/principal/login",
        principal_login_off,
        summary="external principal login: not in kvlake (501, as lakeFS without it)",
        body=wire.ExternalLoginInformation,
        public=True,
    ),
    _off(
        "stsLogin",
        "POST",
        "/sts/login",
        sts_login_off,
        summary="STS login: kvlake has no OIDC provider (501, as lakeFS without one)",
        body=wire.StsAuthRequest,
        public=True,
    ),
    Operation(
        "oauthCallback",
        "GET",
        "/oidc/callback",
        oauth_callback,
        API_GROUP,
        summary="OIDC callback: kvlake has no OIDC provider (an empty 200, as lakeFS)",
        params=(params.text("code", "ignored"), params.text("state", "ignored")),
        responses={200: None},
        public=True,
    ),
)
