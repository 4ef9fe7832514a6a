"""The demo's HTML reports opened in a real headless browser (`make test-browser`).

Chromium loads ``reports/demo/report.html`` (the bundled sample's) and ``reports/demo/inspect_report.html``
(the bundled inspect_ai logs') from ``file://`` URLs, as a colleague opening the files would. A page must
log no console error, request nothing but itself (no network, no other file), and show every section and
figure; the report of the logs must lead with its figures (counted) and the pass rates with their intervals,
and say what its data lack in one closing list, never under an "Omitted" heading. Full-page screenshots are
saved beside them as ``report.png`` and ``inspect_report.png`` for a person to look at.
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
INSPECT_REPORT = REPORT.with_name("inspect_report.html")
SECTIONS = [
    "dataset", "headline", "comparison", "forest", "distributions", "paired", "calibration", "efficiency", "consensus",
    "diagnosis", "answers", "cost", "process", "provenance",
]  # fmt: skip
#: The report of the bundled inspect_ai logs: their outcomes, what they cost, how the agents worked.
INSPECT_SECTIONS = [
    "dataset", "headline", "comparison", "forest", "outcomes", "cost", "process", "not_in_data", "provenance",
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


@pytest.fixture(scope="module")
def inspect_page() -> Iterator[webdriver.Chrome]:
    if not INSPECT_REPORT.is_file():
        pytest.fail(f"{INSPECT_REPORT} is missing; `make test-browser` runs `make demo` first (with inspect_ai)")
    with chrome() as driver:
        driver.get(INSPECT_REPORT.as_uri())
        yield driver


def test_the_report_of_the_inspect_logs_leads_with_figures(inspect_page: webdriver.Chrome) -> None:
    sections = inspect_page.find_elements(By.CSS_SELECTOR, "section[data-section]")
    assert [s.get_attribute("id") for s in sections] == INSPECT_SECTIONS
    figures = inspect_page.find_elements(By.CSS_SELECTOR, "figure[data-figure] svg")
    drawn = {f.find_element(By.XPATH, "..").get_attribute("data-figure") for f in figures}
    assert len(figures) >= 10, len(figures)
    assert {"headline", "outcome_pass_rates", "outcome_pass_at_k_match", "outcome_cost_match", "cost_plane",
            "process_profile", "process_agent_shares", "forest_difference"} <= drawn  # fmt: skip
    for figure in figures:
        inspect_page.execute_script("arguments[0].scrollIntoView();", figure)
        assert figure.is_displayed()
        assert figure.size["width"] > 300 and figure.size["height"] > 80, figure.size
    # The headline leads with a figure, then each system's pass rate with its interval.
    headline = inspect_page.find_element(By.ID, "headline")
    first = headline.find_element(By.XPATH, "./*[self::figure or self::div][1]")
    assert first.tag_name == "figure"
    rows = {
        row.find_elements(By.TAG_NAME, "td")[0].text: [td.text for td in row.find_elements(By.TAG_NAME, "td")[1:3]]
        for row in headline.find_elements(By.CSS_SELECTOR, "table[data-table='headline'] tbody tr")
    }
    assert rows["match"][0].startswith("0.9000 [") and rows["match"][1].startswith("0.6083 [")
    page = inspect_page.page_source
    assert "Omitted" not in page
    absent = inspect_page.find_elements(By.CSS_SELECTOR, "#not_in_data li")
    assert absent and absent[0].text.startswith("Decision quality: no run has a DQS")
    errors = [entry for entry in inspect_page.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors


def test_a_full_page_screenshot_of_the_report_of_the_logs_is_saved(inspect_page: webdriver.Chrome) -> None:
    inspect_page.execute_script("window.scrollTo(0, 0);")
    shot = inspect_page.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    target = INSPECT_REPORT.with_name("inspect_report.png")
    target.write_bytes(base64.b64decode(shot["data"]))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
