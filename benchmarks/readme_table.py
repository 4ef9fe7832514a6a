"""The benchmark table, from the JSON results in reports/benchmarks/: the documentation's and the README's.

The documentation's performance page shows :func:`table` (its ``benchmark-table`` directive
calls it at every build). The README shows :func:`headlines`, one line per benchmark script
(its largest run), between its ``benchmarks:start`` and ``benchmarks:end`` markers: run
``python benchmarks/readme_table.py`` after the benchmark scripts (``make bench`` does) to
rewrite them.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "reports" / "benchmarks"
README = ROOT / "README.md"


def _spread(each: list[float], word: str = "median") -> str:
    """Return `` (median of 1.0, 2.0)`` when there are several timings, else nothing."""
    return f" ({word} of {', '.join(f'{x:.1f}' for x in each)})" if len(each) > 1 else ""


def _simulate(s: dict) -> list[str]:
    """Return the rows of ``simulate.json``: writing, then validating."""
    peak = max(s["peak_rss_mb"].values()) / 1024
    return [
        f"| simulate + write | {s['runs']:,} | {s['generate_and_write_seconds']:.1f} s | "
        f"{s['runs_per_second']:,} runs/s | {peak:.2f} GB (with validation) | `benchmarks/bench_simulate.py` |",
        f"| validate | {s['runs']:,} | {s['validate_seconds']:.1f} s | "
        f"{s['runs'] / s['validate_seconds']:,.0f} runs/s | (in the row above) | `benchmarks/bench_simulate.py` |",
    ]


def _ingest(data: dict) -> list[str]:
    """Return the rows of ``ingest.json``: each size, and Arrow's parse alone when measured."""
    rows = []
    for r in data["results"]:
        rss = r["peak_rss_mb"] / 1024
        rows.append(
            f"| ingest JSONL ({r['input_mb']:,.0f} MB) | {r['records']:,} | {r['ingest_seconds']:.1f} s | "
            f"{r['records_per_second']:,} runs/s | {rss:.2f} GB | `benchmarks/bench_ingest.py` |"
        )
        if "parse_only_seconds" in r:  # the floor: Arrow's JSON reader alone on the same file
            rows.append(
                f"| plain read: Arrow's JSON parse alone, the ingest's floor ({r['input_mb']:,.0f} MB) | "
                f"{r['records']:,} | {r['parse_only_seconds']:.1f} s (ingest {r['ingest_to_parse_ratio']:.2f}x) | "
                f"{r['parse_only_records_per_second']:,} runs/s | - | `benchmarks/bench_ingest.py` |"
            )
    return rows


def _ingest_logs(data: dict) -> list[str]:
    """Return the rows of ``ingest_logs.json``: mas_eval's reader and inspect_ai's ``samples_df``."""
    size = data["parameters"]["input_mb"]
    rows = []
    for r in data["results"]:
        what = "ingest inspect_ai logs" if r["reader"].startswith("mas_eval") else "inspect_ai's own samples_df"
        rows.append(
            f"| {what} ({size:,.0f} MB, {r['reader'].split('(')[-1].rstrip(')')}) | {r['samples']:,} | "
            f"{r['seconds']:.1f} s | {r['samples_per_second']:,} samples/s | {r['peak_rss_mb'] / 1024:.2f} GB | "
            "`benchmarks/bench_ingest_logs.py` |"
        )
    return rows


def _decision(data: dict) -> list[str]:
    """Return the rows of ``decision.json``: the decision suite at each size."""
    rows = []
    for r in data["results"]:
        note = f", {r['speedup_vs_oracle']}x the oracle's runs/s" if "speedup_vs_oracle" in r else ""
        each = r.get("score_seconds_each")
        spread = f" (median of {', '.join(f'{x:.1f}' for x in each)})" if each else ""  # even of one run
        rows.append(
            f"| score, decision suite{note} | {r['runs']:,} | {r['score_seconds']:.1f} s{spread} | "
            f"{r['runs_per_second']:,} runs/s | {r['peak_rss_gb']:.2f} GB | `benchmarks/bench_decision.py` |"
        )
    return rows


def _decision_in_memory(data: dict) -> list[str]:
    """Return the rows of ``decision_in_memory.json``: in worker processes, then written by 2 workers."""
    rows = []
    for r in data["results"]:
        for label, key in (("in memory, worker processes", "in-memory"), ("written, 2 workers", "bulk")):
            m = r[key]
            ratio = f", {r['in_memory_over_bulk']}x the written path's time" if key == "in-memory" else ""
            rows.append(
                f"| score, decision suite, {r['shards']} shards, {label}{ratio} (the call, in a fresh process) | "
                f"{r['runs']:,} | {m['seconds']:.1f} s | {r['runs'] / m['seconds']:,.0f} runs/s | "
                f"{m['tree_peak_gb']:.2f} GB (with workers) | `benchmarks/bench_decision.py` |"
            )
    return rows


def _medaisure(data: dict) -> list[str]:
    """Return the rows of ``medaisure.json``: the answers family, then MedAISure's own code."""
    r = data["result"]
    rows = []
    for label, key in (
        ("score, answers family, MedAISure's two metrics", "mas_eval"),
        ("MedAISure's own code, the same pairs", "medaisure"),
    ):
        note = f", {r['ratio']}x MedAISure's pairs/s (CPU {r['cpu_ratio']}x)" if key == "mas_eval" else ""
        rows.append(
            f"| {label}{note} | {r['pairs']:,} | {r[key]['seconds']:.1f} s | "
            f"{r[key]['pairs_per_second']:,} answers/s | - | `benchmarks/bench_medaisure.py` |"
        )
    return rows


def _ddx(data: dict) -> list[str]:
    """Return the row of ``ddx.json``: the diagnosis and decision families."""
    r = data["result"]
    note = f", {r['text_mb']:,.0f} MB of text, {r['speedup_vs_oracle']}x the oracles' runs/s"
    spread = _spread(r.get("score_seconds_each") or [])
    return [
        f"| score, diagnosis + decision families{note} | {r['runs']:,} | {r['score_seconds']:.1f} s{spread} | "
        f"{r['runs_per_second']:,} runs/s | {r['peak_rss_gb']:.2f} GB | `benchmarks/bench_ddx.py` |"
    ]


def _items(data: dict) -> list[str]:
    """Return the row of ``items.json``: the answers family on answer pairs."""
    r = data["result"]
    chars = round(statistics.mean(r["mean_chars"][c] for c in ("prediction", "rationale", "reference")))
    note = f", ~{chars} characters per text, {r['speedup_vs_oracle']}x the oracle's answers/s"
    spread = _spread(r.get("score_seconds_each") or [])
    return [
        f"| score, answers family (answer pairs){note} | {r['answers']:,} | {r['score_seconds']:.1f} s{spread} | "
        f"{r['answers_per_second']:,} answers/s | {r['peak_rss_gb']:.2f} GB | `benchmarks/bench_items.py` |"
    ]


def _compare(c: dict) -> list[str]:
    """Return the rows of ``compare.json``: Welch, then paired on case, each when measured."""
    p = c["parameters"]
    shape = f"{p['metrics']} metrics x {p['groups']} groups"
    rows = []
    for label, key in (("Welch", "welch"), ("paired on case", "paired")):
        if f"{key}_seconds" in c:
            rss = c["peak_rss_mb"].get(f"after_{key}", float("nan")) / 1024
            rows.append(
                f"| compare, {label} ({shape}) | {p['runs']:,} | {c[f'{key}_seconds']:.2f} s | "
                f"{c[f'{key}_rows']:,} rows out | {rss:.2f} GB | `benchmarks/bench_compare.py` |"
            )
    return rows


_SCALE_MODES = [
    ("plain read of the same tables", "plain_read"),
    ("score, decision suite, sharded, 1 process, written", "score_1_process"),
    ("score, decision suite, sharded, 2 workers, written", "score_2_workers"),
    ("score, decision suite, sharded, in memory", "score_in_memory"),
    ("compare, Welch (4 metrics x 3 tasks), sharded Scores", "compare_welch"),
    ("compare, paired on case (4 metrics x 3 tasks), sharded Scores", "compare_paired"),
]


def _scale(data: dict) -> list[str]:
    """Return the rows of ``scale.json``: each size, each way of reading, scoring and comparing measured."""
    rows = []
    for r in data["results"]:
        shards = f"{r['shards']:,} shards"
        for label, key in _SCALE_MODES:
            m = r.get(key)
            if m is None:
                continue
            spread = _spread(m.get("seconds_each") or [])
            ratio = f", {m['times_plain_read']}x the read" if "times_plain_read" in m else ""
            rows.append(
                f"| {label} ({shards}{ratio}) | {r['runs']:,} | {m['seconds']:.1f} s{spread} | "
                f"{m['runs_per_second']:,} runs/s | {m['peak_rss_gb']:.2f} GB | `benchmarks/bench_scale.py` |"
            )
    return rows


def _report(data: dict) -> list[str]:
    """Return the rows of ``report.json``: each size, each format."""
    rows = []
    for r in data["results"]:
        for suffix, m in r["formats"].items():
            spread = _spread([t["wall"] for t in m["each"]], "best")
            figures = f", {m['figures']} figures" if "figures" in m else ""
            rows.append(
                f"| report, {suffix.lstrip('.').upper()}, of logged outcomes (a whole process{figures}) | "
                f"{r['runs']:,} | {m['seconds']:.1f} s{spread} | {r['runs'] / m['seconds']:,.0f} runs/s | "
                f"{m['peak_rss_gb']:.2f} GB | `benchmarks/bench_report.py` |"
            )
    return rows


def _pipeline(data: dict) -> list[str]:
    """Return the rows of ``pipeline.json``: each stage of the command line, then the whole pipeline."""
    p = data["parameters"]
    rows = []
    for r in data["results"]:
        stages = {stage["stage"]: stage for stage in r["stages"]}
        jsonl = r.get("jsonl_mb")
        for name in ("ingest", "score", "compare", "report"):
            stage = stages[name]
            rows.append(
                f"| {PIPELINE_STAGE}{name} ({_STAGE_NOTES[name].format(**p)}) | {r['runs']:,} | "
                f"{stage['seconds']:.1f} s | {r['runs'] / stage['seconds']:,.0f} runs/s | "
                f"{stage['peak_rss_mb'] / 1024:.2f} GB | `benchmarks/bench_pipeline.py` |"
            )
        size = f"{jsonl:,.0f} MB of " if jsonl else ""
        peak = max(stages[name]["peak_rss_mb"] for name in ("ingest", "score", "compare", "report")) / 1024
        rows.append(
            f"| JSONL to HTML report ({size}JSONL; ingest, score, compare, report) | {r['runs']:,} | "
            f"{r['jsonl_to_report_seconds']:.1f} s | {r['runs'] / r['jsonl_to_report_seconds']:,.0f} runs/s | "
            f"{peak:.2f} GB | `benchmarks/bench_pipeline.py` |"
        )
    return rows


#: Each results file the table shows, in the table's order, and the function giving its rows.
_READERS = {
    "simulate.json": _simulate,
    "ingest.json": _ingest,
    "ingest_logs.json": _ingest_logs,
    "decision.json": _decision,
    "decision_in_memory.json": _decision_in_memory,
    "medaisure.json": _medaisure,
    "ddx.json": _ddx,
    "items.json": _items,
    "compare.json": _compare,
    "scale.json": _scale,
    "report.json": _report,
    "pipeline.json": _pipeline,
}


def _rows() -> list[str]:
    """Return the table's rows, from each results file there is."""
    rows = []
    for name, read in _READERS.items():
        file = RESULTS / name
        if file.is_file():
            rows.extend(read(json.loads(file.read_text())))
    return rows


#: How a row of one stage of the command-line pipeline starts (the README lists the whole pipeline's row only).
PIPELINE_STAGE = "pipeline stage: "
_STAGE_NOTES = {
    "ingest": "JSONL, {shards} shards",
    "score": "{workers} workers, validated",
    "compare": "by task",
    "report": "HTML, with the Dataset's summary",
}


HEADER = [
    "| benchmark | runs | wall time | throughput | peak RSS | script |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
]


def table() -> str:
    """Every benchmark result as one Markdown table (the performance page's)."""
    return "\n".join(HEADER + _rows())


def _number(text: str) -> float:
    found = re.match(r"[\d,.]+", text)
    return float(found.group().replace(",", "")) if found else 0.0


def headlines() -> list[str]:
    """One line per benchmark script: its largest run, scoring if it scores, the fastest way if several."""
    best: dict[str, tuple[tuple[float, bool, float], str]] = {}
    for row in _rows():
        label, runs, seconds, throughput, rss, script = (cell.strip() for cell in row.strip("|").split(" | "))
        if label.startswith(("plain read", "inspect_ai's own", PIPELINE_STAGE)) or not rss[:1].isdigit():
            continue
        rank = (_number(runs), label.startswith("score"), _number(throughput))
        unit = "answer pairs" if "answers/s" in throughput else "samples" if "samples/s" in throughput else "runs"
        line = (
            f"- {label.split(' (')[0]}: {runs} {unit} in {seconds.split(' (')[0]}, {rss.split(' (')[0]} peak ({script})"
        )
        if script not in best or rank > best[script][0]:
            best[script] = (rank, line)
    return [line for _, line in best.values()]


def main() -> None:
    lines = "\n".join(headlines())
    text = README.read_text()
    updated = re.sub(
        r"(<!-- benchmarks:start -->\n).*?(\n<!-- benchmarks:end -->)", rf"\g<1>{lines}\g<2>", text, flags=re.S
    )
    README.write_text(updated)
    print(table())


if __name__ == "__main__":
    main()
