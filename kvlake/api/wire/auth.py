"""Wire models of users, groups, policies and credentials."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from kvlake.api.wire.common import Integer, Name, Pagination, Request

Id = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class User(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    creation_date: int
    friendly_name: str | None = None
    email: str | None = None


class CurrentUser(msgspec.Struct, frozen=True, kw_only=True):
    user: User


class UserCreation(Request):
    id: Id
    invite_user: bool | None = None


class UserList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[User]


class Group(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    name: str
    creation_date: int
    description: str | None = None


class GroupCreation(Request):
    id: Id
    description: Name | None = None


class GroupList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[Group]


class Statement(Request):
    effect: Literal["allow", "deny"]
    resource: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    action: Annotated[
        list[Annotated[str, msgspec.Meta(max_length=256)]],
        msgspec.Meta(min_length=1, max_length=100),
    ]


class Policy(Request, omit_defaults=True):
    id: Id
    statement: Annotated[list[Statement], msgspec.Meta(min_length=1, max_length=100)]
    creation_date: Integer | None = None


class PolicyList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[Policy]


class Credentials(msgspec.Struct, frozen=True, kw_only=True):
    access_key_id: str
    creation_date: int


class CredentialsWithSecret(msgspec.Struct, frozen=True, kw_only=True):
    access_key_id: str
    secret_access_key: str
    creation_date: int


class CredentialsList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[Credentials]


class ACL(Request):
    """A group's ACL level: Read, Write, Super or Admin ("" in an answer: none)."""

    permission: Annotated[str, msgspec.Meta(max_length=64)]


class ErrorNoACL(msgspec.Struct, frozen=True, kw_only=True):
    """lakeFS's 404 when a group's policies are not one ACL policy."""

    message: str
    no_acl: bool = True
