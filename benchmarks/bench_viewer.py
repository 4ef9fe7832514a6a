"""Benchmark of the case viewer: the page of 10,000 cases of 50 messages each, written and opened in Chromium.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_viewer.py                        # 10,000 cases x 50 and x 100 messages
    .venv/bin/python benchmarks/bench_viewer.py --cases 2000 --messages 50 --loads 1   # a smoke check

For each size, the Dataset is :func:`tests.viewer_cases.many_cases` (two systems, one run each per
case, ``--messages`` messages per case, half in each run, every text distinct; seed 7), scored,
and :func:`mas_eval.report.write_cases` writes the page (timed, best of ``--writes``; the page's
size in MiB, 2**20 bytes, and its parts: the cases-and-runs JSON parsed on load, the chunks of
transcripts parsed when a case of theirs opens). The page is then opened ``--loads`` times in a
fresh headless Chromium (``make test-browser`` installs it, as ``tests_browser/chrome.py`` finds
it), recording from the page's own clock (``performance.now()``, from navigation start): the
table's first paint (the frame after its rows are drawn), DOMContentLoaded and the load event
(the whole file read), the rows in the document, and the time to open the last case (its chunk
parsed, both transcripts built). Medians over the loads are reported beside each load's figures.
Writes ``reports/benchmarks/viewer.json``. Target: the table painted within 2 s at 10,000 x 50.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

import mas_eval  # noqa: E402
from mas_eval.report import write_cases  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "viewer.json"
SEED = 7
TARGETS = {"table_first_paint_ms": 2000}

_OPEN_LAST = """
const rows = document.querySelectorAll('#rows tr.row');
const start = performance.now();
rows[rows.length - 1].click();
return [performance.now() - start, document.querySelectorAll('#detail .msg').length,
        window.__masViewer.chunksParsed];
"""


def _page_parts(html: str) -> dict[str, float]:
    """MiB of the page's parts: its cases-and-runs JSON, its chunks of runs' tables, and the rest (CSS, JS)."""
    cases = re.search(r'<script type="application/json" id="mas-viewer-cases">(.*?)</script>', html, re.DOTALL)
    chunks = sum(len(m) for m in re.findall(r'id="mas-viewer-chunk-\d+">(.*?)</script>', html, re.DOTALL))
    total = len(html.encode("utf-8"))
    cases_bytes = len(cases.group(1).encode("utf-8")) if cases else 0
    return {
        "cases_and_runs_mb": round(cases_bytes / 2**20, 2),
        "chunks_mb": round(chunks / 2**20, 2),
        "total_mb": round(total / 2**20, 2),
    }


def _load(page: Path) -> dict[str, Any]:
    """One load of ``page`` in a fresh headless Chromium: the page's own timings, from navigation start."""
    from tests_browser.chrome import chrome

    with chrome() as browser:
        browser.get(page.as_uri())
        end = time.monotonic() + 60
        state = None
        while time.monotonic() < end:
            state = browser.execute_script("return window.__masViewer;")
            if state and state["firstPaint"]:
                break
            time.sleep(0.05)
        navigation = browser.execute_script(
            "const n = performance.getEntriesByType('navigation')[0];"
            "return [n.domContentLoadedEventEnd, n.loadEventEnd];"
        )
        tr = browser.execute_script("return document.querySelectorAll('tr').length;")
        browser.execute_script("const w = document.getElementById('table-wrap'); w.scrollTop = w.scrollHeight;")
        time.sleep(0.3)
        opened, messages, chunks = browser.execute_script(_OPEN_LAST)
    return {
        "table_first_paint_ms": round(state["firstPaint"], 1),
        "table_rendered_ms": round(state["tableRendered"], 1),
        "dom_content_loaded_ms": round(navigation[0], 1),
        "load_event_ms": round(navigation[1], 1),
        "tr_elements": tr,
        "open_last_case_ms": round(opened, 1),
        "messages_shown": messages,
        "chunks_parsed": chunks,
    }


def bench(cases: int, messages: int, writes: int, loads: int, folder: Path) -> dict[str, Any]:
    from tests.viewer_cases import many_cases

    start = time.perf_counter()
    ds = many_cases(cases, messages, seed=SEED)
    scores = mas_eval.score(ds)
    prepared = time.perf_counter() - start
    page = folder / f"cases_{cases}x{messages}.html"
    seconds = []
    for _ in range(writes):
        start = time.perf_counter()
        write_cases(scores, ds, page, overwrite=True)
        seconds.append(time.perf_counter() - start)
    html = page.read_text(encoding="utf-8")
    each = [_load(page) for _ in range(loads)]
    medians = {key: statistics.median(load[key] for load in each) for key in each[0]}
    result = {
        "cases": cases,
        "messages_per_case": messages,
        "runs": 2 * cases,
        "messages": ds.collect("messages").height,
        "mean_message_chars": round(ds.collect("messages")["text"].str.len_chars().mean(), 1),
        "simulate_and_score_seconds": round(prepared, 2),
        "write_seconds": round(min(seconds), 2),
        "write_seconds_each": [round(s, 2) for s in seconds],
        "file_mb": round(page.stat().st_size / 2**20, 1),
        "parts": _page_parts(html),
        "load": medians,
        "loads": each,
    }
    print(
        f"{cases:,} cases x {messages} messages: {result['file_mb']} MiB written in {result['write_seconds']} s; "
        f"table painted at {medians['table_first_paint_ms']:.0f} ms, whole file loaded at "
        f"{medians['load_event_ms']:.0f} ms, {medians['tr_elements']:.0f} <tr>, last case opened in "
        f"{medians['open_last_case_ms']:.0f} ms (median of {loads})"
    )
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases (default 10,000)")
    parser.add_argument(
        "--messages", type=int, nargs="+", default=[50, 100], help="messages per case, one page each (default 50 100)"
    )
    parser.add_argument("--writes", type=int, default=3, help="writes of each page, the best reported (default 3)")
    parser.add_argument("--loads", type=int, default=3, help="loads of each page in Chromium (default 3)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"result JSON (default {OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_viewer_") as folder:
        results = [bench(args.cases, m, args.writes, args.loads, Path(folder)) for m in args.messages]
    data = {
        "benchmark": "viewer",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "environment": environment(seed=SEED),
        "targets": TARGETS,
        "results": results,
    }
    write_json(args.out, data)
    return data


if __name__ == "__main__":
    main()
