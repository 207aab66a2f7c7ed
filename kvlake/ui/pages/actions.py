"""A repository's action runs: the list (newest first, by branch) and a run's page with
its hooks and each hook's output.

listRepositoryRuns, getRun, listRunHooks and getRunHookOutput, run as the signed-in user
(`fs:ReadActions`). A hook's output is the log its run wrote; the page shows its first
64 KiB as text (its bytes decoded as UTF-8, anything else replaced) and says when there
is more, so a chatty hook cannot make the page huge.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from kvlake.api.errors import status_of
from kvlake.errors import KvlakeError
from kvlake.ui.page import NavItem, Page, next_after, page

PER_PAGE: Final = 50
HOOKS_SHOWN: Final = 100
OUTPUT_SHOWN: Final = 64 * 1024


def runs(page: Page) -> Response:
    repository = page.repository
    branch = page.query.get("branch", "").strip()
    after = page.query.get("after", "")
    listed = page.api(
        "listRepositoryRuns",
        path={"repository": repository},
        query={"branch": branch, "after": after, "amount": PER_PAGE},
    )
    return page.render(
        "actions/runs.html",
        repository=repository,
        runs=listed["results"],
        branch=branch,
        after=after,
        next_after=next_after(listed),
    )


def run(page: Page) -> Response:
    repository = page.repository
    run_id = page.request.path_params["run_id"]
    path = {"repository": repository, "run_id": run_id}
    found = page.api("getRun", path=path)
    hooks = page.api("listRunHooks", path=path, query={"amount": HOOKS_SHOWN})
    shown = [hook | _output(page, path, hook["hook_run_id"]) for hook in hooks["results"]]
    return page.render(
        "actions/run.html",
        repository=repository,
        run=found,
        hooks=shown,
        more_hooks=hooks["pagination"]["has_more"],
        output_shown=OUTPUT_SHOWN,
    )


def _output(page: Page, path: dict[str, str], hook_run_id: str) -> dict[str, Any]:
    """The hook's output as text (its first OUTPUT_SHOWN bytes), or None when it has none."""
    try:
        body = page.api_response("getRunHookOutput", path=path | {"hook_run_id": hook_run_id}).body
    except KvlakeError as exc:
        if status_of(exc) != 404:
            raise
        return {"output": None, "cut": False}
    data = bytes(body)
    text = data[:OUTPUT_SHOWN].decode("utf-8", errors="replace")
    return {"output": text, "cut": len(data) > OUTPUT_SHOWN}


_BASE: Final = "/repositories/{repository}/actions"
ROUTES: Final = [
    page(_BASE, runs),
    page(_BASE + "/{run_id}", run),
]
NAV: Final[list[NavItem]] = []
