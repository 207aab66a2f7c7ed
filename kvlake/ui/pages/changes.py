"""Writes to a branch: its uncommitted changes, the commit form, reset of single paths,
object upload and delete.

Each is the API's operation (diffBranch, commit, resetBranch, uploadObject,
deleteObject) run as the signed-in user, so a protected branch, a missing
permission or a bad path is refused by the API and shown as the error page.
An upload is the form's one file, spooled by Starlette and streamed to
uploadObject as its body; ui.js sends the same form with a progress bar and
takes dropped files.
"""

from __future__ import annotations

from typing import Final

from starlette.datastructures import UploadFile
from starlette.responses import Response

from kvlake.errors import InvalidInputError
from kvlake.ui.page import NavItem, Page, next_after, page, url

CHANGES_PAGE: Final = 1000
METADATA_ROWS: Final = 4
"""Key/value rows of the commit form (empty rows are ignored)."""


def changes(page: Page) -> Response:
    repository = page.repository
    branch = page.query.get("branch", "")
    if not branch:
        branch = str(page.api("getRepository", path={"repository": repository})["default_branch"])
    path = {"repository": repository, "branch": branch}
    after = page.query.get("after", "")
    listed = page.api("diffBranch", path=path, query={"after": after, "amount": CHANGES_PAGE})
    return page.render(
        "changes/changes.html",
        repository=repository,
        branch=branch,
        entries=listed["results"],
        after=after,
        next_after=next_after(listed),
        may_commit=page.may("commit", path=path),
        may_reset=page.may("resetBranch", path=path),
        metadata_rows=range(METADATA_ROWS),
    )


def commit(page: Page) -> Response:
    repository = page.repository
    branch = page.field("branch", strip=False)
    metadata: dict[str, str] = {}
    for row in range(METADATA_ROWS):
        key = str(page.form.get(f"meta_key_{row}", "")).strip()
        value = str(page.form.get(f"meta_value_{row}", ""))
        if key:
            metadata[key] = value
        elif value:
            raise InvalidInputError(f"metadata row {row + 1} has a value but no key: add one")
    made = page.api(
        "commit",
        path={"repository": repository, "branch": branch},
        body={"message": page.field("message", strip=False), "metadata": metadata},
    )
    return page.redirect(url("repositories", repository, "commits", made["id"]))


def reset_path(page: Page) -> Response:
    """Drop the branch's uncommitted change of one object or one folder."""
    repository = page.repository
    branch, path = page.field("branch", strip=False), page.field("path", strip=False)
    kind = "common_prefix" if page.form.get("path_type") == "common_prefix" else "object"
    page.api_response(
        "resetBranch",
        path={"repository": repository, "branch": branch},
        body={"type": kind, "path": path},
    )
    return page.redirect(url("repositories", repository, "changes", branch=branch))


def upload(page: Page) -> Response:
    """The form's file at `prefix` + its name (or the typed path), staged on the branch."""
    repository = page.repository
    branch = page.field("branch", strip=False)
    file = page.form.get("file")
    if not isinstance(file, UploadFile) or not file.filename:
        raise InvalidInputError("choose a file to upload; nothing was changed")
    path = str(page.form.get("path", "")).strip() or (
        str(page.form.get("prefix", "")) + file.filename
    )
    page.api_response(
        "uploadObject",
        path={"repository": repository, "branch": branch},
        query={"path": path},
        source=file.file,
        content_type=file.content_type or "",
    )
    return page.redirect(url("repositories", repository, "object", ref=branch, path=path))


def delete_object(page: Page) -> Response:
    repository = page.repository
    branch, path = page.field("branch", strip=False), page.field("path", strip=False)
    page.api_response(
        "deleteObject", path={"repository": repository, "branch": branch}, query={"path": path}
    )
    folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
    return page.redirect(url("repositories", repository, "objects", ref=branch, prefix=folder))


_BASE: Final = "/repositories/{repository}"
ROUTES: Final = [
    page(_BASE + "/changes", changes),
    page(_BASE + "/commit", commit, methods=("POST",)),
    page(_BASE + "/changes/reset", reset_path, methods=("POST",)),
    page(_BASE + "/upload", upload, methods=("POST",), files=True),
    page(_BASE + "/object/delete", delete_object, methods=("POST",)),
]
NAV: Final[list[NavItem]] = []
