"""The documentation site opened in a real headless browser (`make test-browser`, after `make docs`).

Chromium loads the front page and one API page of ``site/`` from ``file://`` URLs, as a reader
opening the built site would. The pages must log no console error, load nothing from outside
the site's folder (no network: the theme's fonts and scripts are its own files), and show their
content; a screenshot of each is saved as ``reports/docs_front.png`` and ``reports/docs_api.png``
for a person to look at.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
PAGES = {"front": SITE / "index.html", "api": SITE / "api" / "mas_eval.html"}


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"none of {', '.join(names)} is installed; `make test-browser` installs chromium and chromium-driver")


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    missing = [str(page) for page in PAGES.values() if not page.is_file()]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing; `make test-browser` runs `make docs` first")
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", "chromium-browser", "google-chrome")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--hide-scrollbars"):  # fmt: skip
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=_binary("chromedriver"))  # never Selenium Manager's download
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.parametrize("name", PAGES)
def test_a_page_loads_only_the_site_and_shows_its_content(browser: webdriver.Chrome, name: str) -> None:
    page = PAGES[name]
    browser.get_log("performance")  # what earlier pages requested
    browser.get(page.as_uri())
    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors
    events = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    requested = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    outside = [url for url in requested if not url.startswith((SITE.as_uri(), "data:"))]
    assert not outside, outside
    article = browser.find_element(By.CSS_SELECTOR, "article")
    assert article.is_displayed() and article.find_element(By.TAG_NAME, "h1").text
    if name == "api":
        assert browser.find_elements(By.CSS_SELECTOR, "dl.py.class, dl.py.function")
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    target = ROOT / "reports" / f"docs_{name}.png"
    target.write_bytes(base64.b64decode(shot["data"]))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
