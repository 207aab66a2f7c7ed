"""The object browser at any ref: folders (paged), an object's page, its download.

The ref and the path travel in the query string (`?ref=&prefix=`, `?ref=&path=`),
never as path segments: a path may hold any character ('/', '..', '<', unicode)
and arrives at the API's operation exactly as written. Folders list through
`listObjects` with the '/' delimiter, `FOLDER_PAGE` entries a page, so a folder
of 100,000 objects is paged by the API's cursor, never read whole.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

from starlette.responses import Response

from kvlake.ui import previews
from kvlake.ui.page import NavItem, Page, next_after, page

FOLDER_PAGE: Final = 1000


def _ref(page: Page, repository: str) -> str:
    ref = page.query.get("ref", "")
    if ref:
        return ref
    found = page.api("getRepository", path={"repository": repository})
    return str(found["default_branch"])


def folder(page: Page) -> Response:
    repository = page.request.path_params["repository"]
    ref = _ref(page, repository)
    prefix = page.query.get("prefix", "")
    after = page.query.get("after", "")
    listed = page.api(
        "listObjects",
        path={"repository": repository, "ref": ref},
        query={"prefix": prefix, "after": after, "delimiter": "/", "amount": FOLDER_PAGE},
    )
    parts = prefix.rstrip("/").split("/") if prefix else []
    crumbs = [(part, "/".join(parts[: i + 1]) + "/") for i, part in enumerate(parts)]
    writable = page.is_branch(repository, ref) and page.may(
        "uploadObject",
        path={"repository": repository, "branch": ref},
        query={"path": prefix + "new-object"},  # a probe: the typed path is checked on upload
    )
    return page.render(
        "objects/folder.html",
        repository=repository,
        ref=ref,
        prefix=prefix,
        crumbs=crumbs,
        entries=listed["results"],
        after=after,
        next_after=next_after(listed),
        may_upload=writable,
    )


def object_page(page: Page) -> Response:
    repository = page.request.path_params["repository"]
    ref = _ref(page, repository)
    path = page.query.get("path", "")
    stats = page.api(
        "statObject",
        path={"repository": repository, "ref": ref},
        query={"path": path, "user_metadata": True},
    )
    folder_prefix = path.rsplit("/", 1)[0] + "/" if "/" in path else ""

    def read(start: int, end: int) -> bytes:
        answer = page.api_response(
            "getObject",
            path={"repository": repository, "ref": ref},
            query={"path": path},
            headers={"Range": f"bytes={start}-{end - 1}"},
        )
        return bytes(answer.body)

    shown = previews.preview(path, stats.get("content_type") or "", stats["size_bytes"], read)
    return page.render(
        "objects/object.html",
        repository=repository,
        ref=ref,
        path=path,
        folder_prefix=folder_prefix,
        stats=stats,
        last_commit=_last_commit(page, repository, ref, path),
        preview=shown,
        may_delete=page.is_branch(repository, ref)
        and page.may(
            "deleteObject", path={"repository": repository, "branch": ref}, query={"path": path}
        ),
    )


def download(page: Page) -> Response:
    """The object's bytes from the API's getObject, saved under its base name."""
    repository = page.request.path_params["repository"]
    ref = _ref(page, repository)
    path = page.query.get("path", "")
    answer = page.api_response(
        "getObject", path={"repository": repository, "ref": ref}, query={"path": path}
    )
    name = path.rsplit("/", 1)[-1] or "object"
    # RFC 6266: the ASCII fallback and the exact name, percent-encoded (no header injection).
    fallback = "".join(c if c.isascii() and c.isalnum() or c in "._-" else "_" for c in name)
    answer.headers["Content-Disposition"] = (
        f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
    )
    return answer


ROUTES: Final = [
    page("/repositories/{repository}/objects", folder),
    page("/repositories/{repository}/object", object_page),
    page("/repositories/{repository}/download", download),
]
NAV: Final[list[NavItem]] = []


def _last_commit(page: Page, repository: str, ref: str, path: str) -> dict[str, Any] | None:
    """The newest commit reachable from `ref` that changed `path` (logCommits with
    `objects` and `limit`, as lakeFS's UI asks it), or None: never committed, or the
    user may not read commits (the page then leaves the line out)."""
    where = {"repository": repository, "ref": ref}
    if not page.may("logCommits", path=where):
        return None
    found = page.api("logCommits", path=where, query={"objects": path, "limit": True, "amount": 1})
    results: list[dict[str, Any]] = found["results"]
    return results[0] if results else None
