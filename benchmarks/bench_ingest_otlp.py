"""Benchmark of `mas_eval.ingest.ingest_otlp` on deep and wide traces: seconds and peak RSS.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_ingest_otlp.py --label after
    .venv/bin/python benchmarks/bench_ingest_otlp.py --label before --shapes chained:6000 chained:10000

A trace's spans form a tree; how long it takes to walk depends on its shape more than on its
size. Each shape is one trace in one OTLP JSON file, one ``ExportTraceServiceRequest`` a line
(the Collector's file exporter's layout, 500 spans a line as its batch processor sends them):

- ``chained:N``: N spans, each the child of the one before (a path N deep): an agent span every
  third span, a ``chat`` span with token counts otherwise;
- ``wide:N``: a root agent span and N - 1 ``chat`` spans directly under it.

Each ingest (``ingest_otlp(file)``, in memory) runs in a fresh process, whose peak RSS
(``VmHWM``) is its own, imports included; ``seconds`` is its wall time and ``cpu_seconds`` the
processor time it took (all threads), which a machine shared with other work inflates less.
The results of each ``--label`` (the code measured: ``before`` and ``after`` a change) are kept
side by side in ``reports/benchmarks/ingest_otlp.json``.
RSS MB are 2**20 bytes, as in the other benchmarks.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, peak_rss_gb, run_fresh, write_json  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "ingest_otlp.json"
SHAPES = ("chained:6000", "chained:10000", "wide:10000")
#: Spans a line holds: the Collector's batch processor sends at most 512 spans a request by default.
BATCH = 500
SECOND = 1_000_000_000


def _value(value: object) -> dict[str, Any]:
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def _span(index: int, parent: int | None, start: int, attributes: dict[str, object]) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": format(index + 1, "016x"),
        "name": f"span {index}",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + SECOND // 10),
        "attributes": [{"key": key, "value": _value(value)} for key, value in attributes.items()],
    }
    if parent is not None:
        span["parentSpanId"] = format(parent + 1, "016x")
    return span


def spans_of(shape: str, count: int) -> list[dict[str, Any]]:
    """The spans of one trace of ``shape`` (``chained`` or ``wide``), ``count`` of them."""
    base = 1_700_000_000 * SECOND
    spans = []
    for index in range(count):
        parent = None if index == 0 else (index - 1 if shape == "chained" else 0)
        agent = index == 0 or (shape == "chained" and index % 3 == 0)
        attributes: dict[str, object] = (
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": f"agent {index % 4}"}
            if agent
            else {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 100 + index % 7,
                "gen_ai.usage.output_tokens": 20 + index % 5,
            }
        )
        if index == 0:
            attributes["mas_eval.case_id"] = "case-1"
        spans.append(_span(index, parent, base + index * 1000, attributes))
    return spans


def write_trace(path: Path, shape: str, count: int) -> None:
    """One trace as OTLP JSON lines, ``BATCH`` spans a line."""
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "mas"}}]}
    spans = spans_of(shape, count)
    with path.open("w", encoding="utf-8") as out:
        for first in range(0, len(spans), BATCH):
            batch = spans[first : first + BATCH]
            request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": batch}]}]}
            out.write(json.dumps(request, separators=(",", ":")) + "\n")


def ingest_in_this_process(path: Path) -> dict[str, Any]:
    from mas_eval.ingest.otlp import ingest_otlp

    start, cpu = time.perf_counter(), time.process_time()
    result = ingest_otlp(path)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    usage = result.dataset.collect("usage")
    return {
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "peak_rss_mb": round(peak_rss_gb() * 1024, 1),
        "runs": result.runs,
        "model_calls": int(usage["calls"].sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", required=True, help="what code is measured, e.g. before or after")
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), help="shape:spans, e.g. chained:6000")
    parser.add_argument("--ingest", type=Path, help=argparse.SUPPRESS)  # the fresh process's own work
    args = parser.parse_args()
    if args.ingest is not None:
        print(json.dumps(ingest_in_this_process(args.ingest)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for item in args.shapes:
            shape, _, count = item.partition(":")
            path = Path(folder) / f"{shape}_{count}.json"
            write_trace(path, shape, int(count))
            measured = run_fresh(__file__, "--label", args.label, "--ingest", path)
            row = {"shape": shape, "spans": int(count), "megabytes": round(path.stat().st_size / 2**20, 2), **measured}
            print(json.dumps(row))
            rows.append(row)
    results = json.loads(OUT.read_text()) if OUT.is_file() else {}
    results.setdefault("labels", {})[args.label] = {"environment": environment(), "rows": rows}
    write_json(OUT, results)


if __name__ == "__main__":
    main()
