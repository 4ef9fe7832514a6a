"""The demo's HTML report opened in a real headless browser (`make test-browser`).

Chromium loads ``reports/demo/report.html`` from a ``file://`` URL, as a colleague opening the
file would. The page must log no console error, request nothing but itself (no network, no
other file), and show every section and figure; a full-page screenshot is saved beside it
as ``report.png`` for a person to look at.
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
REPORT = ROOT / "reports" / "demo" / "report.html"
SECTIONS = [
    "dataset", "headline", "comparison", "forest", "distributions", "paired", "calibration", "efficiency", "consensus",
    "diagnosis", "answers", "provenance",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    if not REPORT.is_file():
        pytest.fail(f"{REPORT} is missing; `make test-browser` runs `make demo` first")
    with chrome() as driver:
        driver.get(REPORT.as_uri())
        yield driver


def test_the_page_logs_no_console_error(browser: webdriver.Chrome) -> None:
    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors


def test_the_page_requests_nothing_but_itself(browser: webdriver.Chrome) -> None:
    events = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    requested = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    failed = [e["params"] for e in events if e["method"] == "Network.loadingFailed"]
    assert requested[0] == REPORT.as_uri()
    # Inline rasters inside the SVG figures are data: URLs (decoded in place, nothing fetched).
    others = [url for url in requested[1:] if not url.startswith("data:image/png;base64,")]
    assert not others, others
    assert not failed, failed


def test_every_section_and_figure_is_visible(browser: webdriver.Chrome) -> None:
    sections = browser.find_elements(By.CSS_SELECTOR, "section[data-section]")
    assert [s.get_attribute("id") for s in sections] == SECTIONS
    for section in sections:
        browser.execute_script("arguments[0].scrollIntoView();", section)
        assert section.is_displayed(), section.get_attribute("id")
        assert section.find_element(By.TAG_NAME, "h2").text
    figures = browser.find_elements(By.CSS_SELECTOR, "figure[data-figure] svg")
    assert len(figures) >= 6
    for figure in figures:
        browser.execute_script("arguments[0].scrollIntoView();", figure)
        assert figure.is_displayed()
        assert figure.size["width"] > 300 and figure.size["height"] > 100, figure.size
    assert browser.find_elements(By.CSS_SELECTOR, "table[data-table='comparison'] tbody tr")


def test_the_comparison_table_fits_a_laptop_window(browser: webdriver.Chrome) -> None:
    # At 1280 px no column of the comparison table hides behind a horizontal scroll bar.
    table = browser.find_element(By.CSS_SELECTOR, "table[data-table='comparison']")
    frame = table.find_element(By.XPATH, "..")
    hidden = browser.execute_script("return arguments[0].scrollWidth - arguments[0].clientWidth;", frame)
    assert hidden <= 0, f"{hidden} px of the comparison table scroll out of view"


def test_a_full_page_screenshot_is_saved(browser: webdriver.Chrome) -> None:
    browser.execute_script("window.scrollTo(0, 0);")
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    target = REPORT.with_name("report.png")
    target.write_bytes(base64.b64decode(shot["data"]))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
