"""The case viewer opened in a real headless browser (`make test-browser`).

Chromium loads pages written by :func:`mas_eval.report.write_cases` from ``file://`` URLs: one of
cases with a known McNemar table, one whose transcripts attack the page, one of 10,000 cases of
50 messages each, and the demo's page of the bundled inspect_ai logs (``make demo`` writes it).
A page must list the discordant cases first, open a case's two runs side by side, show hostile
text as text with no script of it run, draw only the rows in view, request nothing but itself,
and log no console error. The large page's load time is measured (navigation start to the
table's first paint, as the page records it) and written to ``reports/demo/viewer_load.json``;
a screenshot of the demo's page with a discordant case open is saved as ``reports/demo/viewer.png``.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

import mas_eval
from mas_eval.report import write_cases
from mas_eval.stats import mcnemar_exact
from tests.viewer_cases import HOSTILE, HOSTILE_CASE, MARKDOWN, RTL, hostile_dataset, many_cases, paired_outcomes
from tests_browser.chrome import chrome

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "reports" / "demo"
INSPECT_PAGE = DEMO / "inspect_cases.html"
#: 3 cases only the MAS passed, 2 only the single agent: McNemar's b = 3, c = 2.
PATTERN = [(True, False), (False, True), (True, True), (True, False), (False, False), (True, True),
           (False, True), (True, True), (True, False), (True, True)]  # fmt: skip
#: The large page: cases, and messages per case (half in each system's run).
LARGE_CASES, LARGE_MESSAGES = 10_000, 50
#: The large page's table must paint within this (the aim is 2 s; the shared machine is slow at times).
FIRST_PAINT_LIMIT_MS = 5_000


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("viewer")
    out = {}
    for name, ds in (("paired", paired_outcomes(PATTERN)), ("hostile", hostile_dataset())):
        write_cases(mas_eval.score(ds), ds, folder / f"{name}.html")
        out[name] = folder / f"{name}.html"
    large = many_cases(LARGE_CASES, LARGE_MESSAGES, seed=7)
    write_cases(mas_eval.score(large), large, folder / "large.html")
    out["large"] = folder / "large.html"
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with chrome() as driver:
        yield driver


def _open(browser: webdriver.Chrome, page: Path) -> None:
    browser.get_log("browser")  # what earlier pages logged
    browser.get_log("performance")
    browser.get(page.as_uri())
    _wait(browser, "return window.__masViewer && window.__masViewer.firstPaint")


def _wait(browser: webdriver.Chrome, script: str, seconds: float = 10) -> Any:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = browser.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"waited {seconds} s for: {script}")


def _rows(browser: webdriver.Chrome) -> list[WebElement]:
    return browser.find_elements(By.CSS_SELECTOR, "#rows tr.row")


def _click(browser: webdriver.Chrome, element: WebElement) -> None:
    # In the middle of the table's box: a row scrolled under the sticky header would take no click.
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    element.click()


def _no_console_error(browser: webdriver.Chrome) -> None:
    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors


def test_the_discordant_cases_come_first_and_count_mcnemars_b_and_c(
    browser: webdriver.Chrome, pages: dict[str, Path]
) -> None:
    _open(browser, pages["paired"])
    b = sum(t and not c for t, c in PATTERN)
    c = sum(c and not t for t, c in PATTERN)
    classes = [row.find_element(By.CSS_SELECTOR, ".badge").text for row in _rows(browser)]
    assert classes[: b + c] == ["mas passed, single failed"] * b + ["single passed, mas failed"] * c
    assert "mas passed, single failed" not in classes[b + c :] and "single passed, mas failed" not in classes[b + c :]
    # The filter of the discordant cases shows exactly those, and its count is b + c.
    button = browser.find_element(By.CSS_SELECTOR, "#classes button[data-cls='discordant']")
    assert button.text == f"the systems differ ({b + c})"
    button.click()
    assert len(_rows(browser)) == b + c
    # The page's comparison is McNemar's exact test on those b and c.
    p = mcnemar_exact(b, c)["p_value"].item()
    line = browser.find_element(By.ID, "comparison-line").text
    assert "McNemar's exact test" in line and f"p = {p:.3g}" in line, line
    _no_console_error(browser)


def test_opening_a_case_shows_both_runs_side_by_side(browser: webdriver.Chrome, pages: dict[str, Path]) -> None:
    _open(browser, pages["paired"])
    _click(browser, _rows(browser)[0])
    panes = browser.find_elements(By.CSS_SELECTOR, "#detail .pane")
    assert [pane.get_attribute("data-side") for pane in panes] == ["treatment", "control"]
    left, right = (pane.rect for pane in panes)
    assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 2  # side by side
    for pane in panes:
        messages = pane.find_elements(By.CSS_SELECTOR, ".msg")
        assert len(messages) == 3 and messages[0].find_element(By.CSS_SELECTOR, ".msg-text").text.startswith("Question")
        assert "tokens" in messages[1].find_element(By.CSS_SELECTOR, ".msg-head").text
        assert pane.find_elements(By.CSS_SELECTOR, ".tool")  # the tool call, under the message asking for it
    treatment, control = panes
    assert "passed" in treatment.find_element(By.TAG_NAME, "h3").text
    assert "failed" in control.find_element(By.TAG_NAME, "h3").text
    assert control.find_element(By.CSS_SELECTOR, ".tool .error").text == "error: timeout after 30 s"
    scorer = treatment.find_element(By.CSS_SELECTOR, "table.data tr.metric").text
    assert "match" in scorer and "the target is yes" in scorer
    assert browser.execute_script("return location.hash").startswith("#case=c")
    _no_console_error(browser)


def test_hostile_text_is_shown_as_text_and_runs_nothing(browser: webdriver.Chrome, pages: dict[str, Path]) -> None:
    _open(browser, pages["hostile"])
    first = _rows(browser)[0]
    assert first.find_elements(By.TAG_NAME, "td")[1].text == HOSTILE_CASE
    _click(browser, first)
    detail = browser.find_element(By.ID, "detail")
    texts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#detail .pane.treatment .msg-text'), e => e.textContent);"
    )
    assert texts == [RTL + " \\u202eevil\\u202c", HOSTILE, MARKDOWN]
    assert detail.find_element(By.TAG_NAME, "h2").text.startswith("case_id " + HOSTILE_CASE)
    # Nothing of the data became an element, and none of its scripts ran.
    assert not browser.execute_script("return document.querySelectorAll('#detail img, #detail script, #detail svg, "
                                      "#detail b, #detail i, #detail table.md').length;")  # fmt: skip
    assert browser.execute_script("return typeof window.__pwned;") == "undefined"
    tables = browser.execute_script(
        "return Array.from(document.querySelectorAll('#detail .pane.treatment table.data'), e => e.textContent);"
    )
    assert any(HOSTILE in text for text in tables)  # the score named HOSTILE, its name as text
    tool = detail.find_element(By.CSS_SELECTOR, ".pane.treatment .tool")
    assert "tool <svg onload=x>" in tool.text and "error: " + HOSTILE in tool.text
    # Searching the transcripts finds the case by its hostile text, still as text.
    browser.find_element(By.ID, "search-transcripts").click()
    browser.find_element(By.ID, "search").send_keys("__pwned = 2")
    _wait(browser, "return document.querySelectorAll('#rows tr.row').length === 1")
    assert browser.execute_script("return typeof window.__pwned;") == "undefined"
    _no_console_error(browser)


def test_the_page_requests_nothing_but_itself(browser: webdriver.Chrome, pages: dict[str, Path]) -> None:
    _open(browser, pages["hostile"])
    _click(browser, _rows(browser)[0])
    events = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
    requested = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    assert requested == [pages["hostile"].as_uri()]


def test_ten_thousand_cases_paint_fast_and_draw_only_the_rows_in_view(
    browser: webdriver.Chrome, pages: dict[str, Path]
) -> None:
    _open(browser, pages["large"])
    state = browser.execute_script("return window.__masViewer;")
    navigation = browser.execute_script(
        "const n = performance.getEntriesByType('navigation')[0]; return [n.domContentLoadedEventEnd, n.loadEventEnd];"
    )
    rows_drawn = len(browser.find_elements(By.TAG_NAME, "tr"))
    size = pages["large"].stat().st_size
    measured = {
        "cases": LARGE_CASES,
        "messages_per_case": LARGE_MESSAGES,
        "file_mb": round(size / 2**20, 1),
        "table_first_paint_ms": round(state["firstPaint"], 1),
        "table_rendered_ms": round(state["tableRendered"], 1),
        "dom_content_loaded_ms": round(navigation[0], 1),
        "load_event_ms": round(navigation[1], 1),
        "tr_elements": rows_drawn,
    }
    # Drawn on demand: about the rows in view, not 10,000.
    assert rows_drawn < 60, rows_drawn
    wrap = browser.find_element(By.ID, "table-wrap")
    first_before = int(_rows(browser)[0].get_attribute("data-case"))
    browser.execute_script("arguments[0].scrollTop = arguments[0].scrollHeight / 2;", wrap)
    _wait(browser, f"return document.querySelector('#rows tr.row').dataset.case !== '{first_before}'")
    middle = [int(row.get_attribute("data-case")) for row in _rows(browser)]
    assert min(middle) > 4000 and len(browser.find_elements(By.TAG_NAME, "tr")) < 60
    browser.execute_script("arguments[0].scrollTop = arguments[0].scrollHeight;", wrap)
    _wait(browser, f"return !!document.querySelector('#rows tr.row[data-case=\"{LARGE_CASES - 1}\"]')")
    # A case opens at once: its chunk of runs parsed, its two transcripts built.
    start = time.perf_counter()
    _click(browser, _rows(browser)[-3])
    panes = browser.find_elements(By.CSS_SELECTOR, "#detail .pane")
    assert [len(p.find_elements(By.CSS_SELECTOR, ".msg")) for p in panes] == [LARGE_MESSAGES // 2] * 2
    measured["open_case_ms"] = round((time.perf_counter() - start) * 1000, 1)
    measured["chunks_parsed"] = browser.execute_script("return window.__masViewer.chunksParsed;")
    DEMO.mkdir(parents=True, exist_ok=True)
    (DEMO / "viewer_load.json").write_text(json.dumps(measured, indent=2) + "\n")
    print(f"\ncase viewer, {LARGE_CASES:,} cases x {LARGE_MESSAGES} messages: {measured}")
    assert state["firstPaint"] <= FIRST_PAINT_LIMIT_MS, measured
    _no_console_error(browser)


def test_a_screenshot_of_the_demos_viewer_with_a_discordant_case_open(browser: webdriver.Chrome) -> None:
    if not INSPECT_PAGE.is_file():
        pytest.fail(f"{INSPECT_PAGE} is missing; `make test-browser` runs `make demo` first")
    _open(browser, INSPECT_PAGE)
    first = _rows(browser)[0]
    assert first.find_element(By.CSS_SELECTOR, ".badge").text == "mockllm/model debate higher"
    _click(browser, first)
    panes = browser.find_elements(By.CSS_SELECTOR, "#detail .pane")
    assert len(panes) == 2 and all(pane.find_elements(By.CSS_SELECTOR, ".msg") for pane in panes)
    # The single agent ran each case 12 times: its epochs are selectable, its worst one shown first.
    select = panes[1].find_element(By.TAG_NAME, "select")
    assert len(select.find_elements(By.TAG_NAME, "option")) == 12
    assert "match failed" in select.find_element(By.CSS_SELECTOR, "option:checked").text
    _no_console_error(browser)
    browser.execute_script("window.scrollTo(0, 0);")
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    target = DEMO / "viewer.png"
    target.write_bytes(base64.b64decode(shot["data"]))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
