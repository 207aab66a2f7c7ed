"""lakeFS's internal operations, answered as a lakeFS with those features disabled answers.

kvlake has no invitations or password resets, collects no usage reports, sends
no statistics and asks for no communication preferences:

- `getAuthCapabilities`: `{"invite_user": false}`, lakeFS's answer without an
  email inviter.
- `getUsageReportSummary`: 404 `installation not found`, lakeFS's answer when
  usage reporting is off (it still needs a caller).
- `postStatsEvents`: events are checked as lakeFS checks them, then dropped (204).
- `setupCommPrefs`: 412 `lakeFS is not initialized` before set-up, then 409
  `communication preferences already set`, lakeFS's answers with the email
  subscription off (`getSetupState` says `comm_prefs_missing: false`).
- The preflights (`createBranchProtectionRulePreflight`, `uploadObjectPreflight`)
  only check the caller's permission, as lakeFS does: 204 means allowed now.
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.api import params
from kvlake.api.needs import on_object, on_repository
from kvlake.api.routing import Call, Operation, json_response, no_content
from kvlake.api.wire import setup as wire
from kvlake.auth import is_installed
from kvlake.errors import ConflictError, InvalidInputError, NotFoundError, PreconditionFailedError

API_GROUP: Final = "internal"


def get_auth_capabilities(call: Call[None]) -> Response:
    return json_response(wire.AuthCapabilities(invite_user=False))


def get_usage_report_summary(call: Call[None]) -> Response:
    raise NotFoundError("kvlake collects no usage reports; count requests in your proxy instead")


def post_stats_events(call: Call[wire.StatsEventsList]) -> Response:
    for event in call.body.events:  # lakeFS's checks and texts, in its order
        if not event.event_class:
            raise InvalidInputError("invalid value: class is required")
        if not event.name:
            raise InvalidInputError("invalid value: name is required")
        if event.count < 0:
            raise InvalidInputError("invalid value: count must be a non-negative integer")
    return no_content()  # kvlake sends no statistics anywhere


def setup_comm_prefs(call: Call[wire.CommPrefsInput]) -> Response:
    if not is_installed(call.services.auth):
        raise PreconditionFailedError("run set-up first (POST /setup_lakefs)")
    raise ConflictError("kvlake collects no communication preferences; nothing to set")


def preflight(call: Call[None]) -> Response:
    return no_content()


OPERATIONS: Final = (
    Operation(
        "getAuthCapabilities",
        "GET",
        "/auth/capabilities",
        get_auth_capabilities,
        API_GROUP,
        summary="authentication capabilities: kvlake has no invitations",
        responses={200: wire.AuthCapabilities},
        public=True,
    ),
    Operation(
        "getUsageReportSummary",
        "GET",
        "/usage-report/summary",
        get_usage_report_summary,
        API_GROUP,
        summary="usage report: kvlake collects none (404, as lakeFS with reports off)",
        responses={200: "metadata", 404: None},
        lakefs_errors={NotFoundError: "installation not found"},
    ),
    Operation(
        "postStatsEvents",
        "POST",
        "/statistics",
        post_stats_events,
        API_GROUP,
        summary="statistics events: checked, then dropped (kvlake sends none)",
        body=wire.StatsEventsList,
        responses={204: None, 400: None},
    ),
    Operation(
        "setupCommPrefs",
        "POST",
        "/setup_comm_prefs",
        setup_comm_prefs,
        API_GROUP,
        summary="communication preferences: kvlake collects none",
        body=wire.CommPrefsInput,
        responses={200: None, 409: None, 412: None},
        public=True,
        lakefs_errors={
            PreconditionFailedError: "lakeFS is not initialized",
            ConflictError: "communication preferences already set",
        },
    ),
    Operation(
        "createBranchProtectionRulePreflight",
        "GET",
        "/repositories/{repository}/branch_protection/set_allowed",
        preflight,
        API_GROUP,
        summary="may the caller set branch protection rules here (204: yes, now)",
        responses={204: None},
        permissions=on_repository("fs:SetBranchProtectionRules"),
    ),
    Operation(
        "uploadObjectPreflight",
        "GET",
        "/repositories/{repository}/branches/{branch}/objects/stage_allowed",
        preflight,
        API_GROUP,
        summary="may the caller upload to this path (204: yes, now)",
        params=(params.PATH,),
        responses={204: None},
        permissions=on_object("fs:WriteObject"),
    ),
)
