"""Repositories: the list, with search and paging (the API's `listRepositories`)."""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from kvlake.ui.page import NavItem, Page, page

PER_PAGE: Final = 50


def repository_list(page: Page) -> Response:
    search = page.query.get("search", "").strip()
    after = page.query.get("after", "")
    listed = page.api(
        "listRepositories", query={"search": search, "after": after, "amount": PER_PAGE}
    )
    pagination = listed["pagination"]
    return page.render(
        "repositories/list.html",
        repositories=listed["results"],
        search=search,
        after=after,
        next_after=pagination["next_offset"] if pagination["has_more"] else "",
    )


ROUTES: Final = [page("/repositories", repository_list)]
NAV: Final = [NavItem("Repositories", "/ui/repositories", "listRepositories")]
