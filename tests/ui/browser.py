"""Headless Debian Chromium driven by Selenium, and a view of one test's visits.

One browser serves a whole test module (CI's budget: a start costs about a
second); each test gets a `Visitor` with no cookies left from the test before,
which screenshots every page it lands on into the test's temporary folder
(pytest keeps the folders of failed tests).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Final

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from tests.api.server import ACCESS_KEY_ID, SECRET_ACCESS_KEY

FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)
WAIT_SECONDS: Final = 10.0


def start_chromium(profile: Path) -> webdriver.Chrome:
    """Debian's chromium and chromedriver (`make install` installs them when missing)."""
    binary = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    assert binary and driver, "chromium or chromedriver is missing: run `make install` (as root)"
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


class Visitor:
    """One test's use of the module's browser, against one server's UI."""

    def __init__(self, driver: webdriver.Chrome, base_url: str, shots: Path) -> None:
        self.driver = driver
        self.base_url = base_url
        self.shots = shots
        self._count = 0
        driver.delete_all_cookies()

    def visit(self, path: str) -> None:
        self.driver.get(self.base_url + path)
        self.screenshot()

    def screenshot(self) -> Path:
        """Save what the browser shows, named by order and path."""
        self._count += 1
        path = self.driver.current_url.removeprefix(self.base_url)
        name = re.sub(r"[^A-Za-z0-9_-]+", "_", path).strip("_")[:80] or "root"
        target = self.shots / f"{self._count:02d}-{name}.png"
        self.driver.save_screenshot(str(target))
        return target

    def find(self, css: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    @property
    def path(self) -> str:
        """The current address below the server (path and query)."""
        return self.driver.current_url.removeprefix(self.base_url)

    def submit(self, button_css: str) -> None:
        """Click a form's button or a link and wait for the next page to load."""
        old = self.find("html")
        self.find(button_css).click()
        WebDriverWait(self.driver, WAIT_SECONDS).until(lambda d: _stale(old))
        self.screenshot()

    def log_in(self, key_id: str = ACCESS_KEY_ID, secret: str = SECRET_ACCESS_KEY) -> None:
        """Fill the login page the browser is on and send it."""
        self.find("#access_key_id").send_keys(key_id)
        self.find("#secret_access_key").send_keys(secret)
        self.submit("#login")


def _stale(element: WebElement) -> bool:
    try:
        element.is_enabled()
    except Exception:  # StaleElementReferenceException: the page was replaced
        return True
    return False
