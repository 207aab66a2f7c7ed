"""The commit log of a ref (paged by the API's cursor) and a commit's page: its
metadata, parents and diff against its first parent.

A root commit has no parent to diff against: its page lists what it holds, as
added. Both pages read through logCommits, getCommit, diffRefs and listObjects,
as the signed-in user.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from kvlake.ui.page import NavItem, Page, next_after, page

LOG_PAGE: Final = 50
DIFF_PAGE: Final = 1000


def log(page: Page) -> Response:
    repository = page.repository
    ref = page.query.get("ref", "")
    if not ref:
        ref = str(page.api("getRepository", path={"repository": repository})["default_branch"])
    after = page.query.get("after", "")
    listed = page.api(
        "logCommits",
        path={"repository": repository, "ref": ref},
        query={"after": after, "amount": LOG_PAGE},
    )
    return page.render(
        "commits/log.html",
        repository=repository,
        ref=ref,
        commits=listed["results"],
        after=after,
        next_after=next_after(listed),
    )


def commit(page: Page) -> Response:
    repository = page.repository
    commit_id = page.request.path_params["commit_id"]
    found = page.api("getCommit", path={"repository": repository, "commitId": commit_id})
    after = page.query.get("after", "")
    if found["parents"]:
        listed = page.api(
            "diffRefs",
            path={
                "repository": repository,
                "leftRef": found["parents"][0],
                "rightRef": found["id"],
            },
            query={"after": after, "amount": DIFF_PAGE, "type": "two_dot"},
        )
        entries = listed["results"]
    else:
        listed = page.api(
            "listObjects",
            path={"repository": repository, "ref": found["id"]},
            query={"after": after, "amount": DIFF_PAGE},
        )
        entries = [_added(entry) for entry in listed["results"]]
    default = str(page.api("getRepository", path={"repository": repository})["default_branch"])
    return page.render(
        "commits/commit.html",
        repository=repository,
        commit=found,
        entries=entries,
        after=after,
        next_after=next_after(listed),
        default=default,
        may_revert=page.may("revertBranch", path={"repository": repository, "branch": default}),
    )


def _added(entry: dict[str, Any]) -> dict[str, Any]:
    return {"type": "added", "path": entry["path"], "path_type": "object", **entry}


_BASE: Final = "/repositories/{repository}"
ROUTES: Final = [
    page(_BASE + "/commits", log),
    page(_BASE + "/commits/{commit_id}", commit),
]
NAV: Final[list[NavItem]] = []
