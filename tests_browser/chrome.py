"""Headless Chromium for the browser tests: the installed browser and driver, no network of its own."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"none of {', '.join(names)} is installed; `make test-browser` installs chromium and chromium-driver")


@contextmanager
def chrome() -> Iterator[webdriver.Chrome]:
    """A headless Chromium of 1280x900 that logs the console and the network, quit afterwards."""
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", "chromium-browser", "google-chrome")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--hide-scrollbars"):  # fmt: skip
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # The installed driver, never Selenium Manager: it would try to download one.
    service = Service(executable_path=_binary("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()
