"""Wire models of health, configuration, set-up and login."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from kvlake.api.wire.common import Integer, Name, Request


class VersionConfig(msgspec.Struct, frozen=True, kw_only=True):
    """`version` is the lakeFS API version served (clients compare it), `kvlake_version` ours."""

    version: str
    kvlake_version: str
    version_context: str = "kvlake"
    upgrade_recommended: bool = False


class StorageConfig(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    rename={"validity": "blockstore_namespace_ValidityRegex"},
):
    blockstore_type: str
    blockstore_namespace_example: str
    validity: str
    default_namespace_prefix: str
    pre_sign_support: bool = False
    pre_sign_support_ui: bool = False
    import_support: bool = False
    import_validity_regex: str = "^$"
    pre_sign_multipart_upload: bool = False
    blockstore_id: str = ""
    blockstore_description: str = ""


class Config(msgspec.Struct, frozen=True, kw_only=True):
    version_config: VersionConfig
    storage_config: StorageConfig
    storage_config_list: list[StorageConfig]
    capabilities_config: dict[str, bool]


class LoginConfig(msgspec.Struct, frozen=True, kw_only=True):
    login_failed_message: str = "The credentials don't match."


class SetupState(msgspec.Struct, frozen=True, kw_only=True):
    state: Literal["initialized", "not_initialized"]
    comm_prefs_missing: bool = False
    login_config: LoginConfig = LoginConfig()


class AccessKeyCredentials(Request):
    access_key_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    secret_access_key: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class Setup(Request):
    username: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    key: AccessKeyCredentials | None = None
    firstName: Name | None = None  # noqa: N815 - lakeFS's field name
    lastName: Name | None = None  # noqa: N815
    email: Name | None = None
    companyName: Name | None = None  # noqa: N815
    country: Name | None = None
    featureUpdates: bool | None = None  # noqa: N815
    securityUpdates: bool | None = None  # noqa: N815


class LoginInformation(Request):
    access_key_id: Annotated[str, msgspec.Meta(max_length=128)]
    secret_access_key: Annotated[str, msgspec.Meta(max_length=256)]


class AuthenticationToken(msgspec.Struct, frozen=True, kw_only=True):
    token: str
    token_expiration: int


class AuthCapabilities(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    invite_user: bool | None = None
    forgot_password: bool | None = None


class CommPrefsInput(
    Request,
    rename={
        "company_name": "companyName",
        "feature_updates": "featureUpdates",
        "first_name": "firstName",
        "last_name": "lastName",
        "security_updates": "securityUpdates",
    },
):
    feature_updates: bool
    security_updates: bool
    email: Name | None = None
    first_name: Name | None = None
    last_name: Name | None = None
    company_name: Name | None = None


class StatsEvent(Request, rename={"event_class": "class"}):
    event_class: Name
    name: Name
    count: Integer


class StatsEventsList(Request):
    events: Annotated[list[StatsEvent], msgspec.Meta(max_length=10_000)]


class ExternalLoginInformation(Request):
    """externalPrincipalLogin's body (an AWS STS identity request, which kvlake never reads)."""

    # lakeFS spells it so; opaque: an identity request kvlake answers 501 without reading
    identityRequest: dict[str, Any]
    token_expiration_duration: Integer | None = None


class StsAuthRequest(Request):
    """stsLogin's body: an OIDC code to exchange (kvlake has no OIDC provider)."""

    code: str
    state: str
    redirect_uri: str
    ttl_seconds: Integer | None = None


class ExternalPrincipalCreation(Request):
    """Opaque, as above: kvlake answers 501 without reading it."""

    settings: list[Any] | dict[str, Any] | None = None
