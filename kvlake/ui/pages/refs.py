"""Branches and tags: list them, create from any ref, delete, reset a branch, revert a
commit, and the repository's branch protection rules.

Every action is the API's operation of the same name, run as the signed-in user;
the page shows a form only to users whose policies allow its operation (`Page.may`),
and the operation checks again when the form is sent. Names travel in form fields,
never in the address, so any name reaches the API exactly as typed. A change of the
protection rules carries the ETag of the rules the page showed (If-Match), so a page
that is out of date changes nothing and says so.
"""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.errors import InvalidInputError
from kvlake.ui.calls import decoded
from kvlake.ui.page import NavItem, Page, page, url

SHOWN: Final = 100
_REVERT_PROBE: Final = {"ref": "main", "parent_number": 0}
PROBE_NAME: Final = "new-ref"
"""A name to ask the policies about creating a branch or tag before one is typed (the
operation's own check, on the typed name, decides when the form is sent)."""


def refs(page: Page) -> Response:
    repository = page.repository
    path = {"repository": repository}
    found = page.api("getRepository", path=path)
    default = found["default_branch"]
    branches = page.api("listBranches", path=path, query={"amount": SHOWN})
    tags = page.api("listTags", path=path, query={"amount": SHOWN})
    ordered = sorted(branches["results"], key=lambda b: (b["id"] != default, b["id"]))
    may_delete = {
        b["id"]: page.may("deleteBranch", path=path | {"branch": b["id"]}) for b in ordered
    }
    may_reset = {
        b["id"]: page.may(
            "hardResetBranch", path=path | {"branch": b["id"]}, query={"ref": default}
        )
        for b in ordered
    }
    may_delete_tag = {
        t["id"]: page.may("deleteTag", path=path | {"tag": t["id"]}) for t in tags["results"]
    }
    probe = {"source": default, "name": PROBE_NAME}
    rules: list[str] | None = None
    etag = ""
    if page.may("getBranchProtectionRules", path=path):
        answer = page.api_response("getBranchProtectionRules", path=path)
        rules, etag = [rule["pattern"] for rule in decoded(answer)], answer.headers["etag"]
    return page.render(
        "refs/refs.html",
        repository=repository,
        default=default,
        branches=ordered,
        tags=tags["results"],
        more_branches=branches["pagination"]["has_more"],
        more_tags=tags["pagination"]["has_more"],
        may_delete=may_delete,
        may_reset=may_reset,
        may_delete_tag=may_delete_tag,
        may_create_branch=page.may("createBranch", path=path, body=probe),
        may_create_tag=page.may("createTag", path=path, body={"id": PROBE_NAME, "ref": default}),
        rules=rules,
        rules_etag=etag,
        may_set_rules=page.may("setBranchProtectionRules", path=path),
        may_revert=any(
            page.may("revertBranch", path=path | {"branch": b["id"]}, body=_REVERT_PROBE)
            for b in ordered
        ),
    )


def create_branch(page: Page) -> Response:
    repository = page.repository
    body = {"name": page.field("name"), "source": page.field("source")}
    page.api_response("createBranch", path={"repository": repository}, body=body)
    return page.redirect(url("repositories", repository, "refs"))


def delete_branch(page: Page) -> Response:
    repository = page.repository
    branch = page.field("branch")
    page.api_response("deleteBranch", path={"repository": repository, "branch": branch})
    return page.redirect(url("repositories", repository, "refs"))


def reset_branch(page: Page) -> Response:
    """Point the branch at another ref (hardResetBranch): its uncommitted changes go too."""
    repository = page.repository
    branch, ref = page.field("branch"), page.field("ref")
    page.api_response(
        "hardResetBranch", path={"repository": repository, "branch": branch}, query={"ref": ref}
    )
    return page.redirect(url("repositories", repository, "refs"))


def revert(page: Page) -> Response:
    """A new commit on the branch undoing the commit's changes (against its parent)."""
    repository = page.repository
    branch, ref = page.field("branch"), page.field("ref")
    parent = str(page.form.get("parent_number", "")).strip() or "0"
    if not parent.isdigit():
        raise InvalidInputError(f"parent number {parent!r} is not a number: use 0, 1, 2...")
    page.api_response(
        "revertBranch",
        path={"repository": repository, "branch": branch},
        body={"ref": ref, "parent_number": int(parent)},
    )
    return page.redirect(url("repositories", repository, "commits", ref=branch))


def create_tag(page: Page) -> Response:
    repository = page.repository
    body = {"id": page.field("name"), "ref": page.field("ref")}
    page.api_response("createTag", path={"repository": repository}, body=body)
    return page.redirect(url("repositories", repository, "refs"))


def delete_tag(page: Page) -> Response:
    repository = page.repository
    tag = page.field("tag")
    page.api_response("deleteTag", path={"repository": repository, "tag": tag})
    return page.redirect(url("repositories", repository, "refs"))


def change_rules(page: Page) -> Response:
    """Add or remove one pattern, replacing the rules only if they are still the ones shown."""
    repository = page.repository
    path = {"repository": repository}
    pattern, etag = page.field("pattern"), page.field("etag")
    current = [rule["pattern"] for rule in page.api("getBranchProtectionRules", path=path)]
    if page.form.get("action") == "remove":
        wanted = [p for p in current if p != pattern]
    else:
        wanted = [*current, pattern] if pattern not in current else current
    page.api_response(
        "setBranchProtectionRules",
        path=path,
        headers={"If-Match": etag},
        body=[{"pattern": p} for p in wanted],
    )
    return page.redirect(url("repositories", repository, "refs"))


_BASE: Final = "/repositories/{repository}"
ROUTES: Final = [
    page(_BASE + "/refs", refs),
    page(_BASE + "/branches/create", create_branch, methods=("POST",)),
    page(_BASE + "/branches/delete", delete_branch, methods=("POST",)),
    page(_BASE + "/branches/reset", reset_branch, methods=("POST",)),
    page(_BASE + "/branches/revert", revert, methods=("POST",)),
    page(_BASE + "/tags/create", create_tag, methods=("POST",)),
    page(_BASE + "/tags/delete", delete_tag, methods=("POST",)),
    page(_BASE + "/protection", change_rules, methods=("POST",)),
]
NAV: Final[list[NavItem]] = []
