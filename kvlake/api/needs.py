"""What each operation needs from the caller's policies, built from the request.

Resources follow lakeFS's ARNs, so a policy written for lakeFS means the same
here. Builders read only validated inputs (path parameters, query, body).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kvlake.api.routing import Call
from kvlake.auth import Permission, branch_arn, object_arn, repository_arn, tag_arn

Needs = Callable[[Call[Any]], Sequence[Permission]]


def on_repository(*actions: str) -> Needs:
    def needed(call: Call[Any]) -> Sequence[Permission]:
        arn = repository_arn(call.path["repository"])
        return tuple(Permission(action, arn) for action in actions)

    return needed


def on_branch(action: str, parameter: str = "branch") -> Needs:
    def needed(call: Call[Any]) -> Sequence[Permission]:
        return (Permission(action, branch_arn(call.path["repository"], call.path[parameter])),)

    return needed


def on_tag(action: str) -> Needs:
    def needed(call: Call[Any]) -> Sequence[Permission]:
        return (Permission(action, tag_arn(call.path["repository"], call.path["tag"])),)

    return needed


def on_object(action: str) -> Needs:
    """`action` on the object named by the `path` query parameter."""

    def needed(call: Call[Any]) -> Sequence[Permission]:
        arn = object_arn(call.path["repository"], call.query.text("path"))
        return (Permission(action, arn),)

    return needed


def on_all(action: str) -> Needs:
    def needed(call: Call[Any]) -> Sequence[Permission]:
        return (Permission(action, "*"),)

    return needed
