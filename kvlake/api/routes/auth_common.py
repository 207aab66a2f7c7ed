"""Shared pieces of the auth routes: wire conversions and permission builders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kvlake.api.needs import Needs
from kvlake.api.routing import Call
from kvlake.api.wire import auth as wire
from kvlake.auth import Group, Permission, Policy, Statement, User, group_arn, policy_arn, user_arn
from kvlake.auth.policies import check_statements


def user(record: User) -> wire.User:
    return wire.User(
        id=record.id,
        creation_date=record.creation_date,
        friendly_name=record.friendly_name,
        email=record.email,
    )


def group(record: Group) -> wire.Group:
    return wire.Group(
        id=record.id,
        name=record.id,
        creation_date=record.creation_date,
        description=record.description,
    )


def policy(record: Policy) -> wire.Policy:
    return wire.Policy(
        id=record.id,
        creation_date=record.creation_date,
        statement=[
            wire.Statement(effect=s.effect, resource=s.resource, action=list(s.action))
            for s in record.statement
        ],
    )


def statements(request: wire.Policy) -> tuple[Statement, ...]:
    made = tuple(
        Statement(effect=s.effect, action=tuple(s.action), resource=s.resource)
        for s in request.statement
    )
    check_statements(made)
    return made


def _on(action: str, arn: Callable[[str], str], parameter: str) -> Needs:
    def needed(call: Call[Any]) -> Sequence[Permission]:
        return (Permission(action, arn(call.path[parameter])),)

    return needed


def on_user(action: str) -> Needs:
    return _on(action, user_arn, "userId")


def on_group(action: str) -> Needs:
    return _on(action, group_arn, "groupId")


def on_policy(action: str) -> Needs:
    return _on(action, policy_arn, "policyId")
