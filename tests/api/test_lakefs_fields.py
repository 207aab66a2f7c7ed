"""kvlake's served OpenAPI document against lakeFS's own, field by field.

For every operation kvlake serves, `lakefs_spec.differences` lists each
difference of meaning from lakeFS's API description (vendored in
`tests/data/lakefs/`): path and method, parameters, request body, response codes
and response bodies. Every difference must be allowed below, by an entry that
names the heading of `docs/api.md` giving its reason; an entry that allows
nothing fails too, so the list stays exact and a new difference fails the test.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from kvlake.api.app import OPERATIONS
from kvlake.api.openapi import document
from tests.api.lakefs_spec import differences, load_lakefs, operations

DOCS: Final = Path(__file__).resolve().parents[2] / "docs" / "api.md"
ERRORS: Final = "Error statuses and `default`"
DETAIL: Final = "The error's `detail`"
NULLS: Final = "Requests may send `null` for an optional field"
ALWAYS: Final = "Fields kvlake always sends"
MISSING: Final = "What kvlake does not have"
FEATURE_OFF: Final = "Operations answered as lakeFS with the feature off"
BODIES: Final = "Bodies kvlake requires"
VALUES: Final = "Values and types the document does not spell out"
STATUSES: Final = "Status codes and bodies of a few operations"
EXTERNAL: Final = (
    "(createUserExternalPrincipal|deleteUserExternalPrincipal|externalPrincipalLogin"
    "|getExternalPrincipal|listUserExternalPrincipals|stsLogin)"
)

ALLOWED: Final[tuple[tuple[str, str], ...]] = (
    # Rules: whole classes of differences, each with one reason.
    (r"\w+ [45]\d\d: not declared \(lakeFS declares it\)", ERRORS),
    (r"\w+ default: declared, lakeFS does not", ERRORS),
    (r"\w+ (404|409): declared, lakeFS does not", ERRORS),
    (r"\w+ (\d{3}|default) application/json\.detail: not in lakeFS", DETAIL),
    (
        r"(importStatus|prepareGarbageCollectionCommitsStatus) 200 application/json"
        r"\.error\.detail: not in lakeFS",
        DETAIL,
    ),
    (r"\w+ request [^:]*: may be null, lakeFS's may not", NULLS),
    (r"\w+ \d{3} [^:]*: may not be null, lakeFS's may", NULLS),
    (r"\w+ \d{3} application/json[^:]*: required, lakeFS's is optional", ALWAYS),
    (r"\w+ 501: declared, lakeFS does not", FEATURE_OFF),
    (EXTERNAL + r" [23]\d\d: not declared \(lakeFS declares it\)", FEATURE_OFF),
    (
        r"createUserExternalPrincipal request application/json\.settings: type is union, "
        r"lakeFS's is object",
        FEATURE_OFF,
    ),
    # One by one.
    (
        r"(createPolicy (request|201)|updatePolicy (request|200)|getPolicy 200) application/json"
        r"\.statement\[\]\.condition: missing \(lakeFS has it\)",
        MISSING,
    ),
    (
        r"list(Group|User)?Policies 200 application/json\.results\[\]\.statement\[\]\.condition: "
        r"missing \(lakeFS has it\)",
        MISSING,
    ),
    (r"getConfig 200 application/json\.ui_config: missing \(lakeFS has it\)", MISSING),
    (
        r"getConfig 200 application/json\.capabilities_config: other fields typed, lakeFS's None",
        MISSING,
    ),
    (
        r"(getConfig 200 application/json\.version_config|getLakeFSVersion 200 application/json)"
        r"\.(latest_version|upgrade_url): missing \(lakeFS has it\)",
        MISSING,
    ),
    (
        r"(getConfig 200 application/json\.version_config|getLakeFSVersion 200 application/json)"
        r"\.kvlake_version: not in lakeFS",
        MISSING,
    ),
    (r"getSetupState 200 application/json\.login_config\.\w+: missing \(lakeFS has it\)", MISSING),
    (
        r"getSetupState 200 application/json\.login_config\.(login_cookie_names|login_url"
        r"|logout_url): optional, lakeFS's is required",
        MISSING,
    ),
    (
        r"getUsageReportSummary 200 application/json\.(installation_id|reports): "
        r"(missing \(lakeFS has it\)|optional, lakeFS's is required)",
        MISSING,
    ),
    (r"getUsageReportSummary 200 application/json: other fields typed, lakeFS's None", MISSING),
    (r"getUsageReportSummary 200: no application/text body \(lakeFS has one\)", MISSING),
    (r"deleteRepository query parameter purge: not in lakeFS", MISSING),
    (r"setup request application/json\.country: not in lakeFS", MISSING),
    (r"oauthCallback query parameter (code|state): not in lakeFS", MISSING),
    (r"oauthCallback 302: not declared \(lakeFS declares it\)", MISSING),
    (r"oauthCallback 200: declared, lakeFS does not", MISSING),
    (
        r"(abortPresignMultipartUpload|completePresignMultipartUpload|createGroup|createUser"
        r"|externalPrincipalLogin|login) request: body required is True, lakeFS's is False",
        BODIES,
    ),
    (
        r"linkPhysicalAddress request application/json\.staging\.physical_address: required, "
        r"lakeFS's is optional",
        BODIES,
    ),
    (
        r"getMetadataObject path parameter type: values are any, lakeFS's are "
        r"\['meta_range', 'range'\]",
        VALUES,
    ),
    (
        r"(getPullRequest 200 application/json|listPullRequests 200 application/json\.results\[\])"
        r"\.status: values are any, lakeFS's are \['closed', 'merged', 'open'\]",
        VALUES,
    ),
    (
        r"mergeIntoBranch request application/json\.strategy: values are \['', 'dest-wins', "
        r"'source-wins'\], lakeFS's are any",
        VALUES,
    ),
    (r"uploadPart(Copy)? path parameter partNumber: type is string, lakeFS's is integer", VALUES),
    (
        r"(restoreRefs 200|updateObjectUserMetadata 201|updatePullRequest 200): not declared "
        r"\(lakeFS declares it\)",
        STATUSES,
    ),
    (
        r"(restoreRefs|updateObjectUserMetadata|updatePullRequest) 204: declared, lakeFS does not",
        STATUSES,
    ),
    (r"headObject (404|416|default): application/json body, lakeFS has none", STATUSES),
    (r"merge(IntoBranch|PullRequest) 409 application/json\.(reference|message): .*", STATUSES),
)
"""(pattern of the whole difference line, heading of docs/api.md that gives the reason)."""


def _kvlake_document() -> dict[str, object]:
    return document(OPERATIONS)


def test_every_served_operation_is_one_of_lakefs_or_a_kvlake_extension() -> None:
    theirs = operations(load_lakefs())
    ours = operations(_kvlake_document())
    assert len(ours.keys() & theirs.keys()) >= 130
    extensions = {op_id for op_id in ours.keys() - theirs.keys()}
    # kvlake's own operations live under its own paths, never on one of lakeFS's.
    lakefs_routes = {(path, method) for path, method, _, _ in theirs.values()}
    assert not {(ours[o][0], ours[o][1]) for o in extensions} & lakefs_routes


def test_every_difference_from_lakefs_is_fixed_or_documented() -> None:
    found = differences(load_lakefs(), _kvlake_document())
    assert len(found) > 100  # the comparison sees the documents (a broken one finds nothing)
    unexplained = [d for d in found if not any(re.fullmatch(p, d) for p, _ in ALLOWED)]
    assert not unexplained, (
        "differences from lakeFS's API description that docs/api.md does not explain: fix "
        "them, or document the reason and allow them in ALLOWED:\n" + "\n".join(unexplained)
    )
    unused = [p for p, _ in ALLOWED if not any(re.fullmatch(p, d) for d in found)]
    assert not unused, "ALLOWED entries that match no difference (remove them):\n" + "\n".join(
        unused
    )


def test_every_allowed_difference_points_at_a_heading_of_the_api_docs() -> None:
    headings = {
        line.lstrip("#").strip() for line in DOCS.read_text().splitlines() if line.startswith("#")
    }
    missing = sorted({heading for _, heading in ALLOWED} - headings)
    assert not missing, f"docs/api.md has no heading {missing}"


def test_the_comparison_finds_a_changed_field_type_and_a_dropped_field() -> None:
    """The check can fail: a field of lakeFS's Diff retyped, and one removed, are both found."""
    lakefs = load_lakefs()
    schemas = lakefs["components"]["schemas"]
    schemas["Diff"]["properties"]["size_bytes"] = {"type": "string"}
    schemas["Diff"]["properties"]["lakefs_only"] = {"type": "string"}
    schemas["Diff"]["required"] = [*schemas["Diff"]["required"], "lakefs_only"]
    found = set(differences(lakefs, _kvlake_document()))
    where = "diffRefs 200 application/json.results[]"
    assert f"{where}.size_bytes: type is integer, lakeFS's is string" in found
    assert f"{where}.lakefs_only: missing (lakeFS has it)" in found
    assert f"{where}.lakefs_only: optional, lakeFS's is required" in found
