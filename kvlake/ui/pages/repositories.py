"""Repositories: the list (search, paging), create (with sample data), a repository's
page (its branches, the default first) and delete (with the purge choice explained).

Each calls the API's operation of the same name; the delete form shows only to
users whose policies allow `deleteRepository` on that repository.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from kvlake.ui.page import NavItem, Page, next_after, page, url

PER_PAGE: Final = 50
BRANCHES_SHOWN: Final = 100


def repository_list(page: Page) -> Response:
    search = page.query.get("search", "").strip()
    after = page.query.get("after", "")
    listed = page.api(
        "listRepositories", query={"search": search, "after": after, "amount": PER_PAGE}
    )
    return page.render(
        "repositories/list.html",
        repositories=listed["results"],
        search=search,
        after=after,
        next_after=next_after(listed),
    )


def new_repository(page: Page) -> Response:
    return page.render("repositories/new.html", form={}, error="")


def create_repository(page: Page) -> Response:
    form = {name: str(page.form.get(name, "")).strip() for name in _CREATE_FIELDS}
    body: dict[str, Any] = {"name": form["name"], "storage_namespace": form["storage_namespace"]}
    if form["default_branch"]:
        body["default_branch"] = form["default_branch"]
    body["sample_data"] = page.form.get("sample_data") == "on"
    if not form["name"] or not form["storage_namespace"]:
        return page.render(
            "repositories/new.html",
            400,
            form=form,
            error="enter the repository's name and its storage namespace",
        )
    created = page.api("createRepository", body=body)
    return page.redirect(url("repositories", created["id"]))


_CREATE_FIELDS: Final = ("name", "storage_namespace", "default_branch")


def repository(page: Page) -> Response:
    name = page.request.path_params["repository"]
    found = page.api("getRepository", path={"repository": name})
    listed = page.api("listBranches", path={"repository": name}, query={"amount": BRANCHES_SHOWN})
    default = found["default_branch"]
    branches = sorted(listed["results"], key=lambda b: (b["id"] != default, b["id"]))
    return page.render(
        "repositories/repository.html",
        repository=found,
        branches=branches,
        more_branches=listed["pagination"]["has_more"],
        may_delete=page.may("deleteRepository", path={"repository": name}),
    )


def delete_repository(page: Page) -> Response:
    name = page.request.path_params["repository"]
    if page.form.get("confirm", "") != name:
        return page.error_page(
            400, f"type the repository's name {name!r} to confirm; nothing was deleted"
        )
    purge = page.form.get("purge") == "on"
    page.api_response("deleteRepository", path={"repository": name}, query={"purge": purge})
    return page.redirect(url("repositories"))


ROUTES: Final = [
    page("/repositories", repository_list),
    page("/repositories/new", new_repository),
    page("/repositories/new", create_repository, methods=("POST",)),
    page("/repositories/{repository}", repository),
    page("/repositories/{repository}/delete", delete_repository, methods=("POST",)),
]
NAV: Final = [NavItem("Repositories", "/ui/repositories", "listRepositories")]
