"""Long-running operations: the list (the user's own, an admin's all), one operation's page
with a live progress bar and its failures, cancel, and starting a bulk delete or a
garbage collection run.

The pages read listOperations, getOperation and listBulkDeleteFailures, so a user
sees only what the API shows them (their own operations; an admin every one).
`/ui/operations/<id>/status` answers getOperation's JSON as is: ui.js polls it to
move the progress bar without reloading the page, and stops once the operation
has finished.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from kvlake.errors import InvalidInputError
from kvlake.ui.page import NavItem, Page, next_after, page, url

PER_PAGE: Final = 100
FAILURES_SHOWN: Final = 100
FINISHED: Final = frozenset({"completed", "completed_with_errors", "failed", "cancelled"})


def operations(page: Page) -> Response:
    after = page.query.get("after", "")
    listed = page.api("listOperations", query={"after": after, "amount": PER_PAGE})
    return page.render(
        "operations/list.html",
        operations=listed["results"],
        after=after,
        next_after=next_after(listed),
        finished=FINISHED,
        path=page.query.get("path", ""),
    )


def operation(page: Page) -> Response:
    operation_id = page.request.path_params["operation_id"]
    found = page.api("getOperation", path={"operation_id": operation_id})
    failures: list[dict[str, Any]] = []
    if found["failed_count"] or found["skipped_count"]:
        failures = page.api(
            "listBulkDeleteFailures",
            path={"operation_id": operation_id},
            query={"amount": FAILURES_SHOWN},
        )["results"]
    return page.render(
        "operations/operation.html", operation=found, failures=failures, finished=FINISHED
    )


def status(page: Page) -> Response:
    """getOperation's JSON, for ui.js's progress bar."""
    operation_id = page.request.path_params["operation_id"]
    return page.api_response("getOperation", path={"operation_id": operation_id})


def cancel(page: Page) -> Response:
    operation_id = page.request.path_params["operation_id"]
    page.api_response("cancelOperation", path={"operation_id": operation_id})
    return page.redirect(url("operations", operation_id))


def start_bulk_delete(page: Page) -> Response:
    """A bulk delete of `lakefs://<repository>/<branch>/<prefix>`, with a glob filter, a
    dry run and a commit when done as the form asks; its page follows."""
    path = str(page.form.get("path", "")).strip()
    if not path:
        raise InvalidInputError("type the path to delete under: lakefs://repository/branch/prefix")
    body: dict[str, Any] = {"dry_run": page.form.get("dry_run") == "on"}
    glob = str(page.form.get("glob", "")).strip()
    if glob:
        body["filters"] = {"glob": glob}
    message = str(page.form.get("commit_message", "")).strip()
    if message:
        body["commit"] = {"message": message}
    created = page.api("createBulkDelete", query={"path": path}, body=body)
    return page.redirect(url("operations", created["operation_id"]))


def start_gc_run(page: Page) -> Response:
    """A garbage collection run of the repository (startGarbageCollectionRun: its GC rules
    must be set; a dry run only finds what it would delete); its page follows."""
    repository = str(page.form.get("repository", "")).strip()
    if not repository:
        raise InvalidInputError("type the repository to collect garbage in")
    body = {"mode": "run", "dry_run": page.form.get("dry_run") == "on"}
    started = page.api("startGarbageCollectionRun", path={"repository": repository}, body=body)
    return page.redirect(url("operations", started["run_id"]))


ROUTES: Final = [
    page("/operations", operations),
    page("/operations/bulk-delete", start_bulk_delete, methods=("POST",)),
    page("/operations/gc", start_gc_run, methods=("POST",)),
    page("/operations/{operation_id}", operation),
    page("/operations/{operation_id}/status", status),
    page("/operations/{operation_id}/cancel", cancel, methods=("POST",)),
]
NAV: Final = [NavItem("Operations", "/ui/operations", "listOperations")]
