"""In the browser: start a bulk delete of a folder's objects from its page, see it wait for
a worker, and watch its progress bar reach 100% without a reload once one runs; cancel
over HTTP."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.api.server import Server
from tests.support import wait_until
from tests.support.servers import new_repository
from tests.support.workers import start_worker
from tests.ui.browser import Visitor
from tests.ui.test_security import _csrf, _log_in

OBJECTS = 500
FINISH_SECONDS = 120.0
HELD = {"KVLAKE_SERVER_BACKGROUND": "false", "KVLAKE_SERVER_JOB_INTERVAL": "0.5"}
"""A server that leaves background work to `kvlake worker` processes, and its workers."""


def _fill(admin: httpx.Client, repository: str, count: int) -> None:
    def put(n: int) -> None:
        answer = admin.post(
            f"/repositories/{repository}/branches/main/objects",
            params={"path": f"bulk/{n:05d}"},
            content=b"x",
        )
        assert answer.status_code == 201, answer.text

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(put, range(count)))
    answer = admin.post(
        f"/repositories/{repository}/branches/main/commits", json={"message": "fill"}
    )
    assert answer.status_code == 201, answer.text


@pytest.fixture
def held_server(tmp_path: Path) -> Iterator[Server]:
    """A server with its background work off: an operation it starts waits, not_started,
    until the test starts a `kvlake worker`."""
    server = Server(tmp_path / "held", env=HELD)
    try:
        yield server
    finally:
        server.stop()


def test_a_bulk_delete_started_in_the_ui_reaches_100_percent_live(
    chromium: webdriver.Chrome, held_server: Server, tmp_path: Path
) -> None:
    (tmp_path / "screenshots").mkdir()
    browser = Visitor(chromium, held_server.url, tmp_path / "screenshots")
    with held_server.http() as admin:
        repository = new_repository(held_server, admin, "ui")
        _fill(admin, repository, OBJECTS)
        browser.visit(f"/ui/repositories/{repository}/objects?ref=main&prefix=bulk/")
        browser.log_in()
        browser.submit("#bulk-delete-folder")
        path = browser.find("#bulk-path").get_attribute("value")
        assert path == f"lakefs://{repository}/main/bulk/"
        browser.find("#bulk-commit").send_keys("emptied bulk/")
        browser.submit("#bulk-delete-button")
        assert re.fullmatch(r"/ui/operations/[^/]+", browser.path), browser.path
        operation_id = browser.path.rsplit("/", 1)[-1]
        # No process runs background work yet: the operation waits for a worker.
        assert browser.find(".op-status").text == "not_started"
        browser.driver.execute_script("window.kvlakeTestMarker = 'same page';")
        kv_url = f"sqlite://{held_server.data_dir / 'kv.db'}"
        worker = start_worker(held_server.data_dir, kv_url, HELD)
        try:
            bar = browser.find(".progress progress")
            WebDriverWait(browser.driver, FINISH_SECONDS).until(
                lambda d: bar.get_attribute("value") == "100"
            )
            browser.screenshot()
            marker = browser.driver.execute_script("return window.kvlakeTestMarker;")
            assert marker == "same page", "the page was reloaded: the bar must move by polling"
            assert browser.find(".op-status").text == "completed"
            assert browser.find(".op-deleted").text == str(OBJECTS)
            assert not browser.find("#cancel").is_displayed()
            listed = admin.get(f"/repositories/{repository}/refs/main/objects/ls").json()
            assert listed["results"] == []
            browser.visit("/ui/operations")
            links = browser.find_all("#operations a.operation")
            hrefs = [a.get_attribute("href") or "" for a in links]
            assert any(href.endswith(f"/ui/operations/{operation_id}") for href in hrefs), hrefs
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(30)
    assert worker.returncode == 0, "the worker did not stop cleanly on SIGTERM"


def test_cancel_from_the_ui(held_server: Server) -> None:
    with held_server.http() as admin:
        repository = new_repository(held_server, admin, "ui")
        _fill(admin, repository, 200)
        created = admin.put(
            "/operations/bulk-delete", params={"path": f"lakefs://{repository}/main/"}
        )
        assert created.status_code == 202, created.text
        operation_id = created.json()["operation_id"]
        with httpx.Client(base_url=held_server.url, timeout=30) as client:
            assert _log_in(client).status_code == 303
            sent = client.post(
                f"/ui/operations/{operation_id}/cancel", data={"csrf_token": _csrf(client)}
            )
            assert sent.status_code == 303, sent.text
            assert admin.get(f"/operations/{operation_id}").json()["cancel_requested"]
            kv_url = f"sqlite://{held_server.data_dir / 'kv.db'}"
            worker = start_worker(held_server.data_dir, kv_url, HELD)
            try:
                wait_until(
                    lambda: (
                        admin.get(f"/operations/{operation_id}").json()["status"] == "cancelled"
                    ),
                    timeout=FINISH_SECONDS,
                    message=lambda: f"the worker to cancel {operation_id}",
                )
                again = client.post(
                    f"/ui/operations/{operation_id}/cancel", data={"csrf_token": _csrf(client)}
                )
            finally:
                worker.send_signal(signal.SIGTERM)
                worker.wait(30)
        listed = admin.get(
            f"/repositories/{repository}/refs/main/objects/ls", params={"amount": 1000}
        ).json()
    # Cancelled before it began: nothing was deleted, and a finished one cannot be cancelled.
    assert len(listed["results"]) == 200
    assert again.status_code == 409 and "finished" in again.text, again.text


def test_a_gc_run_without_rules_is_refused_and_nothing_starts(
    ui_server: Server, repository: str, admin: httpx.Client
) -> None:
    with httpx.Client(base_url=ui_server.url, timeout=30) as client:
        assert _log_in(client).status_code == 303
        form = {"csrf_token": _csrf(client), "repository": repository, "dry_run": "on"}
        sent = client.post("/ui/operations/gc", data=form)
    assert sent.status_code == 404, sent.text
    assert "rules" in sent.text
    listed = admin.get("/operations", params={"repository": repository, "kind": "gc-run"})
    assert listed.json()["results"] == []
