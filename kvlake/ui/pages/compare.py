"""Compare two refs (what the right side brings to the left, folder by folder) and merge
the right into the left branch with a strategy; a merge that conflicts shows its paths.

The diff is the API's diffRefs (three-dot: changes since the common ancestor, as
a merge would apply them) with the '/' delimiter, 1,000 entries a page; the merge
is mergeIntoBranch. A conflict is the API's refusal, and nothing was merged: the
page lists the conflicting paths and offers the strategies that settle them.
For the first `PARQUET_COMPARED` Parquet objects of a page, the columns and row
counts of both sides are compared from their footers (kvlake/ui/parquet_diff.py).
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from kvlake.api.errors import OperationError
from kvlake.errors import InvalidInputError, KvlakeError, MergeConflictError
from kvlake.ui import parquet_diff
from kvlake.ui.page import NavItem, Page, next_after, page, url

DIFF_PAGE: Final = 1000
STRATEGIES: Final = {
    "": "fail on conflicts",
    "dest-wins": "the left (destination) wins",
    "source-wins": "the right (source) wins",
}
SHOWN_CONFLICTS: Final = 1000
PARQUET_COMPARED: Final = 20


def compare(page: Page) -> Response:
    repository = page.repository
    left, right = page.query.get("left", ""), page.query.get("right", "")
    return _render(page, repository, left, right, conflicts=None, message="")


def _render(
    page: Page,
    repository: str,
    left: str,
    right: str,
    *,
    conflicts: list[str] | None,
    message: str,
) -> Response:
    """The comparison; after a conflicting merge, its paths and the form as it was sent."""
    prefix, after = page.query.get("prefix", ""), page.query.get("after", "")
    if not left:
        left = str(page.api("getRepository", path={"repository": repository})["default_branch"])
    entries: list[dict[str, Any]] = []
    following = ""
    if right:
        listed = page.api(
            "diffRefs",
            path={"repository": repository, "leftRef": left, "rightRef": right},
            query={"prefix": prefix, "after": after, "amount": DIFF_PAGE, "delimiter": "/"},
        )
        entries = listed["results"]
        following = next_after(listed)
    parquet = _parquet_changes(page, repository, left, right, entries)
    parts = prefix.rstrip("/").split("/") if prefix else []
    crumbs = [(part, "/".join(parts[: i + 1]) + "/") for i, part in enumerate(parts)]
    may_merge = (
        bool(right)
        and page.is_branch(repository, left)
        and page.may(
            "mergeIntoBranch",
            path={"repository": repository, "sourceRef": right, "destinationBranch": left},
        )
    )
    return page.render(
        "compare/compare.html",
        409 if conflicts is not None else 200,
        repository=repository,
        left=left,
        right=right,
        prefix=prefix,
        crumbs=crumbs,
        entries=entries,
        after=after,
        next_after=following,
        may_merge=may_merge,
        strategies=STRATEGIES,
        conflicts=conflicts,
        message=message,
        parquet=parquet,
    )


def _parquet_changes(
    page: Page, repository: str, left: str, right: str, entries: list[dict[str, Any]]
) -> dict[str, parquet_diff.Change]:
    """The column and row-count changes of the page's first Parquet objects, by path."""
    found: dict[str, parquet_diff.Change] = {}
    for entry in entries:
        path = entry["path"]
        if entry["path_type"] != "object" or not path.lower().endswith(".parquet"):
            continue
        if len(found) == PARQUET_COMPARED:
            break
        before = _shape(page, repository, left, path) if entry["type"] != "added" else None
        after = _shape(page, repository, right, path) if entry["type"] != "removed" else None
        found[path] = parquet_diff.change(before, after)
    return found


def _shape(page: Page, repository: str, ref: str, path: str) -> parquet_diff.Shape | str:
    where = {"repository": repository, "ref": ref}
    size = int(page.api("statObject", path=where, query={"path": path})["size_bytes"])

    def read(start: int, end: int) -> bytes:
        headers = {"Range": f"bytes={start}-{end - 1}"}
        answer = page.api_response("getObject", path=where, query={"path": path}, headers=headers)
        return bytes(answer.body)

    return parquet_diff.shape(size, read)


def merge(page: Page) -> Response:
    repository = page.repository
    left, right = str(page.form.get("left", "")), str(page.form.get("right", ""))
    strategy = str(page.form.get("strategy", ""))
    if not left or not right:
        raise InvalidInputError("name both refs to merge: the right one into the left branch")
    if strategy not in STRATEGIES:
        raise InvalidInputError(f"merge strategy {strategy!r} is unknown; use one offered")
    body: dict[str, Any] = {"message": str(page.form.get("message", "")).strip()}
    if strategy:
        body["strategy"] = strategy
    try:
        merged = page.api(
            "mergeIntoBranch",
            path={"repository": repository, "sourceRef": right, "destinationBranch": left},
            body=body,
        )
    except KvlakeError as exc:
        conflict = exc.cause if isinstance(exc, OperationError) else exc
        if not isinstance(conflict, MergeConflictError):
            raise
        paths = [p.decode("utf-8", "replace") for p in conflict.paths[:SHOWN_CONFLICTS]]
        return _render(page, repository, left, right, conflicts=paths, message=body["message"])
    return page.redirect(url("repositories", repository, "commits", merged["reference"]))


_BASE: Final = "/repositories/{repository}"
ROUTES: Final = [
    page(_BASE + "/compare", compare),
    page(_BASE + "/merge", merge, methods=("POST",)),
]
NAV: Final[list[NavItem]] = []
