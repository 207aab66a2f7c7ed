"""A real `kvlake serve` (SQLite over the local folder) for the UI's tests, and a browser.

The UI is server-rendered over the API's operations, so its storage pairs are
the API suite's business: the UI's tests run on one server for the session.
The browser (headless Chromium, tests/ui/browser.py) is shared by a module's
tests; each test gets a `Visitor` with fresh cookies that screenshots every page
into the test's temporary folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from selenium import webdriver

from tests.api.server import Server
from tests.support.backends import Backend, served_params
from tests.support.servers import admin_http, new_repository, session_server
from tests.ui.browser import Visitor, start_chromium


@pytest.fixture(scope="session", params=served_params([Backend("sqlite", "local")]))
def ui_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    yield from session_server(request, tmp_path_factory, "ui")


@pytest.fixture
def admin(ui_server: Server) -> Iterator[httpx.Client]:
    """The REST API as the admin."""
    yield from admin_http(ui_server)


@pytest.fixture
def repository(ui_server: Server, admin: httpx.Client) -> str:
    """A fresh repository with a `main` branch."""
    return new_repository(ui_server, admin, "ui")


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chromium: webdriver.Chrome, ui_server: Server, tmp_path: Path) -> Visitor:
    """The module's browser for this test, with no cookies, screenshotting into tmp_path."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    chromium.get(ui_server.url + "/ui/login")  # cookies are per site: clear this one's
    return Visitor(chromium, ui_server.url, shots)
