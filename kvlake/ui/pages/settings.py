"""A repository's settings: its garbage collection rules (view, set, delete).

The rules are lakeFS's getGCRules / setGCRules / deleteGCRules, run as the signed-in
user: the page shows them to users allowed `retention:GetGarbageCollectionRules` and
the form to those allowed `retention:SetGarbageCollectionRules`. Setting replaces the
rules whole (a default retention in days and per-branch days), as the API does, so the
form lists every current branch rule, plus empty rows for new ones; a row left blank
is dropped. A repository without rules says so; its GC runs are refused until some are set.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from kvlake.api.errors import status_of
from kvlake.errors import InvalidInputError, KvlakeError
from kvlake.ui.page import NavItem, Page, page, url

NEW_ROWS: Final = 3
MAX_ROWS: Final = 1000


def settings(page: Page) -> Response:
    repository = page.repository
    path = {"repository": repository}
    found = page.api("getRepository", path=path)
    rules: dict[str, Any] | None = None
    may_read = page.may("getGCRules", path=path)
    if may_read:
        try:
            rules = page.api("getGCRules", path=path)
        except KvlakeError as exc:
            if status_of(exc) != 404:
                raise
    branch_rules = rules["branches"] if rules is not None else []
    return page.render(
        "settings/settings.html",
        repository=repository,
        found=found,
        may_read=may_read,
        rules=rules,
        rows=[*branch_rules, *({"branch_id": "", "retention_days": ""},) * NEW_ROWS],
        may_set=page.may("setGCRules", path=path),
        may_delete=page.may("deleteGCRules", path=path),
    )


def _days(text: str, what: str) -> int:
    if not text.isdigit():
        raise InvalidInputError(
            f"{what}: {text!r} is not a number of days (0, 1, 2...); nothing was changed"
        )
    return int(text)


def set_rules(page: Page) -> Response:
    """Replace the rules with the form's: the default days and every filled branch row."""
    repository = page.repository
    default = _days(page.field("default_retention_days"), "default retention")
    rows = str(page.form.get("rows", "0"))
    count = min(int(rows), MAX_ROWS) if rows.isdigit() else 0
    branches = []
    for row in range(count):
        branch = str(page.form.get(f"branch_{row}", "")).strip()
        days = str(page.form.get(f"days_{row}", "")).strip()
        if not branch and not days:
            continue
        if not branch:
            raise InvalidInputError(f"row {row + 1} has days but no branch: name one")
        branches.append({"branch_id": branch, "retention_days": _days(days, f"branch {branch!r}")})
    page.api_response(
        "setGCRules",
        path={"repository": repository},
        body={"default_retention_days": default, "branches": branches},
    )
    return page.redirect(url("repositories", repository, "settings"))


def delete_rules(page: Page) -> Response:
    repository = page.repository
    page.api_response("deleteGCRules", path={"repository": repository})
    return page.redirect(url("repositories", repository, "settings"))


_BASE: Final = "/repositories/{repository}"
ROUTES: Final = [
    page(_BASE + "/settings", settings),
    page(_BASE + "/settings/gc-rules", set_rules, methods=("POST",)),
    page(_BASE + "/settings/gc-rules/delete", delete_rules, methods=("POST",)),
]
NAV: Final[list[NavItem]] = []
