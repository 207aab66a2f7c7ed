"""Garbage collection rules: lakeFS's getGCRules, setGCRules and deleteGCRules.

The rules live in the graveler (kvlake/graveler/lifecycle/gcrules.py), one record per
repository. As in lakeFS: a repository without rules answers 404 `not found`;
setting replaces the rules whole (204); deleting answers 204 whether or not
there were rules; reading needs `retention:GetGarbageCollectionRules`, setting
and deleting `retention:SetGarbageCollectionRules`. Unlike lakeFS, a negative
retention, a malformed branch name or a branch named twice is refused with 400
and changes nothing. lakeFS's deprecated internal routes (`/gc/rules`) answer the
same, and `setGarbageCollectionRulesPreflight` only checks the caller's
permission, as lakeFS does (204: allowed now).
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from kvlake.api.needs import on_repository
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import retention as wire
from kvlake.errors import KvlakeError, NotFoundError
from kvlake.graveler import make_rules

API_GROUP: Final = "repositories"
RULES: Final = "/repositories/{repository}/settings/gc_rules"
INTERNAL_RULES: Final = "/repositories/{repository}/gc/rules"
GET_RULES: Final = "retention:GetGarbageCollectionRules"
SET_RULES: Final = "retention:SetGarbageCollectionRules"
_NOT_FOUND: Final[dict[type[KvlakeError], str]] = {NotFoundError: "not found"}
"""lakeFS's text when a repository has no rules (graveler.ErrNotFound); a missing repository
keeps its own `repository not found`."""


def get_rules(call: Call[None]) -> Response:
    rules = call.services.graveler.retention.get_rules(call.repository)
    return json_response(
        wire.GarbageCollectionRules(
            default_retention_days=rules.default_retention_days,
            branches=[
                wire.GarbageCollectionRule(branch_id=branch, retention_days=days)
                for branch, days in sorted(rules.branch_retention_days.items())
            ],
        )
    )


def set_rules(call: Call[wire.GarbageCollectionRules]) -> Response:
    body = call.body
    rules = make_rules(
        body.default_retention_days,
        [(rule.branch_id, rule.retention_days) for rule in body.branches],
    )
    call.services.graveler.retention.set_rules(call.repository, rules)
    return no_content()


def delete_rules(call: Call[None]) -> Response:
    call.services.graveler.retention.delete_rules(call.repository)
    return no_content()


def preflight(call: Call[None]) -> Response:
    return no_content()


def _rule_operations(
    names: tuple[str, str, str], path: str, set_method: str, group: str, note: str
) -> tuple[Operation[Any], ...]:
    get_name, set_name, delete_name = names
    return (
        Operation(
            get_name,
            "GET",
            path,
            get_rules,
            group,
            summary=f"the repository's garbage collection rules{note}",
            responses={200: wire.GarbageCollectionRules, 404: None},
            permissions=on_repository(GET_RULES),
            lakefs_errors=_NOT_FOUND,
        ),
        Operation(
            set_name,
            set_method,
            path,
            set_rules,
            group,
            summary=f"replace the repository's garbage collection rules{note}",
            body=wire.GarbageCollectionRules,
            responses={204: None, 400: None, 404: None},
            permissions=on_repository(SET_RULES),
        ),
        Operation(
            delete_name,
            "DELETE",
            path,
            delete_rules,
            group,
            summary=f"delete the repository's garbage collection rules{note}",
            responses={204: None, 404: None},
            permissions=on_repository(SET_RULES),
        ),
    )


OPERATIONS: Final = (
    *_rule_operations(("getGCRules", "setGCRules", "deleteGCRules"), RULES, "PUT", API_GROUP, ""),
    *_rule_operations(
        (
            "internalGetGarbageCollectionRules",
            "internalSetGarbageCollectionRules",
            "internalDeleteGarbageCollectionRules",
        ),
        INTERNAL_RULES,
        "POST",
        "internal",
        " (deprecated: use the settings/gc_rules route)",
    ),
    Operation(
        "setGarbageCollectionRulesPreflight",
        "GET",
        "/repositories/{repository}/gc/rules/set_allowed",
        preflight,
        "internal",
        summary="may the caller set garbage collection rules here (204: yes, now)",
        responses={204: None},
        permissions=on_repository(SET_RULES),
    ),
)
