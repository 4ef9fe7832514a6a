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
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests_browser.chrome import chrome

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
PAGES = {"front": SITE / "index.html", "api": SITE / "api" / "mas_eval.html"}


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    missing = [str(page) for page in PAGES.values() if not page.is_file()]
    if missing:
        pytest.fail(f"{', '.join(missing)} missing; `make test-browser` runs `make docs` first")
    with chrome() as driver:
        yield driver


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
