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


def _simulate_rows() -> list[str]:
    """The rows of ``simulate.json`` (none if it is absent)."""
    rows: list[str] = []
    simulate = RESULTS / "simulate.json"
    if simulate.is_file():
        s = json.loads(simulate.read_text())
        peak = max(s["peak_rss_mb"].values()) / 1024
        rows.append(
            f"| simulate + write | {s['runs']:,} | {s['generate_and_write_seconds']:.1f} s | "
            f"{s['runs_per_second']:,} runs/s | {peak:.2f} GB (with validation) | `benchmarks/bench_simulate.py` |"
        )
        rows.append(
            f"| validate | {s['runs']:,} | {s['validate_seconds']:.1f} s | "
            f"{s['runs'] / s['validate_seconds']:,.0f} runs/s | (in the row above) | `benchmarks/bench_simulate.py` |"
        )
    return rows


def _ingest_rows() -> list[str]:
    """The rows of ``ingest.json`` (none if it is absent)."""
    rows: list[str] = []
    ingest = RESULTS / "ingest.json"
    if ingest.is_file():
        for r in json.loads(ingest.read_text())["results"]:
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


def _ingest_logs_rows() -> list[str]:
    """The rows of ``ingest_logs.json`` (none if it is absent)."""
    rows: list[str] = []
    logs = RESULTS / "ingest_logs.json"
    if logs.is_file():
        data = json.loads(logs.read_text())
        size = data["parameters"]["input_mb"]
        for r in data["results"]:
            what = "ingest inspect_ai logs" if r["reader"].startswith("mas_eval") else "inspect_ai's own samples_df"
            rows.append(
                f"| {what} ({size:,.0f} MB, {r['reader'].split('(')[-1].rstrip(')')}) | {r['samples']:,} | "
                f"{r['seconds']:.1f} s | {r['samples_per_second']:,} samples/s | {r['peak_rss_mb'] / 1024:.2f} GB | "
                "`benchmarks/bench_ingest_logs.py` |"
            )
    return rows


def _decision_rows() -> list[str]:
    """The rows of ``decision.json`` (none if it is absent)."""
    rows: list[str] = []
    decision = RESULTS / "decision.json"
    if decision.is_file():
        for r in json.loads(decision.read_text())["results"]:
            note = f", {r['speedup_vs_oracle']}x the oracle's runs/s" if "speedup_vs_oracle" in r else ""
            each = r.get("score_seconds_each")
            spread = f" (median of {', '.join(f'{x:.1f}' for x in each)})" if each else ""
            rows.append(
                f"| score, decision suite{note} | {r['runs']:,} | {r['score_seconds']:.1f} s{spread} | "
                f"{r['runs_per_second']:,} runs/s | {r['peak_rss_gb']:.2f} GB | `benchmarks/bench_decision.py` |"
            )
    return rows


def _decision_in_memory_rows() -> list[str]:
    """The rows of ``decision_in_memory.json`` (none if it is absent)."""
    rows: list[str] = []
    in_memory = RESULTS / "decision_in_memory.json"
    if in_memory.is_file():
        for r in json.loads(in_memory.read_text())["results"]:
            for label, key in (("in memory, worker processes", "in-memory"), ("written, 2 workers", "bulk")):
                m = r[key]
                ratio = f", {r['in_memory_over_bulk']}x the written path's time" if key == "in-memory" else ""
                rows.append(
                    f"| score, decision suite, {r['shards']} shards, {label}{ratio} (the call, in a fresh process) | "
                    f"{r['runs']:,} | {m['seconds']:.1f} s | {r['runs'] / m['seconds']:,.0f} runs/s | "
                    f"{m['tree_peak_gb']:.2f} GB (with workers) | `benchmarks/bench_decision.py` |"
                )
    return rows


def _medaisure_rows() -> list[str]:
    """The rows of ``medaisure.json`` (none if it is absent)."""
    rows: list[str] = []
    medaisure = RESULTS / "medaisure.json"
    if medaisure.is_file():
        r = json.loads(medaisure.read_text())["result"]
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


def _ddx_rows() -> list[str]:
    """The rows of ``ddx.json`` (none if it is absent)."""
    rows: list[str] = []
    ddx = RESULTS / "ddx.json"
    if ddx.is_file():
        r = json.loads(ddx.read_text())["result"]
        note = f", {r['text_mb']:,.0f} MB of text, {r['speedup_vs_oracle']}x the oracles' runs/s"
        each = r.get("score_seconds_each") or []
        spread = f" (median of {', '.join(f'{x:.1f}' for x in each)})" if len(each) > 1 else ""
        rows.append(
            f"| score, diagnosis + decision families{note} | {r['runs']:,} | {r['score_seconds']:.1f} s{spread} | "
            f"{r['runs_per_second']:,} runs/s | {r['peak_rss_gb']:.2f} GB | `benchmarks/bench_ddx.py` |"
        )
    return rows


def _items_rows() -> list[str]:
    """The rows of ``items.json`` (none if it is absent)."""
    rows: list[str] = []
    items = RESULTS / "items.json"
    if items.is_file():
        r = json.loads(items.read_text())["result"]
        chars = round(statistics.mean(r["mean_chars"][c] for c in ("prediction", "rationale", "reference")))
        note = f", ~{chars} characters per text, {r['speedup_vs_oracle']}x the oracle's answers/s"
        each = r.get("score_seconds_each") or []
        spread = f" (median of {', '.join(f'{x:.1f}' for x in each)})" if len(each) > 1 else ""
        rows.append(
            f"| score, answers family (answer pairs){note} | {r['answers']:,} | {r['score_seconds']:.1f} s{spread} | "
            f"{r['answers_per_second']:,} answers/s | {r['peak_rss_gb']:.2f} GB | `benchmarks/bench_items.py` |"
        )
    return rows


def _compare_rows() -> list[str]:
    """The rows of ``compare.json`` (none if it is absent)."""
    rows: list[str] = []
    compare = RESULTS / "compare.json"
    if compare.is_file():
        c = json.loads(compare.read_text())
        p = c["parameters"]
        shape = f"{p['metrics']} metrics x {p['groups']} groups"
        for label, key in (("Welch", "welch"), ("paired on case", "paired")):
            if f"{key}_seconds" in c:
                rss = c["peak_rss_mb"].get(f"after_{key}", float("nan")) / 1024
                rows.append(
                    f"| compare, {label} ({shape}) | {p['runs']:,} | {c[f'{key}_seconds']:.2f} s | "
                    f"{c[f'{key}_rows']:,} rows out | {rss:.2f} GB | `benchmarks/bench_compare.py` |"
                )
    return rows


def _scale_rows() -> list[str]:
    """The rows of ``scale.json`` (none if it is absent)."""
    rows: list[str] = []
    scale = RESULTS / "scale.json"
    if scale.is_file():
        for r in json.loads(scale.read_text())["results"]:
            shards = f"{r['shards']:,} shards"
            modes = [
                ("plain read of the same tables", "plain_read"),
                ("score, decision suite, sharded, 1 process, written", "score_1_process"),
                ("score, decision suite, sharded, 2 workers, written", "score_2_workers"),
                ("score, decision suite, sharded, in memory", "score_in_memory"),
                ("compare, Welch (4 metrics x 3 tasks), sharded Scores", "compare_welch"),
                ("compare, paired on case (4 metrics x 3 tasks), sharded Scores", "compare_paired"),
            ]
            for label, key in modes:
                m = r.get(key)
                if m is None:
                    continue
                each = m.get("seconds_each") or []
                spread = f" (median of {', '.join(f'{x:.1f}' for x in each)})" if len(each) > 1 else ""
                ratio = f", {m['times_plain_read']}x the read" if "times_plain_read" in m else ""
                rows.append(
                    f"| {label} ({shards}{ratio}) | {r['runs']:,} | {m['seconds']:.1f} s{spread} | "
                    f"{m['runs_per_second']:,} runs/s | {m['peak_rss_gb']:.2f} GB | `benchmarks/bench_scale.py` |"
                )
    return rows


def _report_rows() -> list[str]:
    """The rows of ``report.json`` (none if it is absent)."""
    rows: list[str] = []
    report = RESULTS / "report.json"
    if report.is_file():
        for r in json.loads(report.read_text())["results"]:
            for suffix, m in r["formats"].items():
                each = [t["wall"] for t in m["each"]]
                spread = f" (best of {', '.join(f'{x:.1f}' for x in each)})" if len(each) > 1 else ""
                figures = f", {m['figures']} figures" if "figures" in m else ""
                rows.append(
                    f"| report, {suffix.lstrip('.').upper()}, of logged outcomes (a whole process{figures}) | "
                    f"{r['runs']:,} | {m['seconds']:.1f} s{spread} | {r['runs'] / m['seconds']:,.0f} runs/s | "
                    f"{m['peak_rss_gb']:.2f} GB | `benchmarks/bench_report.py` |"
                )
    return rows


def _ingest_otlp_rows() -> list[str]:
    """The rows of ``ingest_otlp.json`` (none if it is absent)."""
    rows: list[str] = []
    otlp = RESULTS / "ingest_otlp.json"
    if otlp.is_file():
        labels = json.loads(otlp.read_text())["labels"]
        before = {(r["shape"], r["spans"]): r for r in labels.get("before", {}).get("rows", [])}
        for r in labels.get("after", {}).get("rows", []):
            was = before.get((r["shape"], r["spans"]))
            then = f", {was['cpu_seconds']:.1f} s CPU before" if was else ""
            rows.append(
                f"| ingest OTLP trace, one {r['shape']} trace ({r['megabytes']:.1f} MB, "
                f"{r['cpu_seconds']:.2f} s CPU{then}) | {r['spans']:,} | {r['seconds']:.1f} s | "
                f"{r['spans'] / r['seconds']:,.0f} spans/s | {r['peak_rss_mb'] / 1024:.2f} GB | "
                "`benchmarks/bench_ingest_otlp.py` |"
            )
    return rows


def _viewer_rows() -> list[str]:
    """The rows of ``viewer.json`` (none if it is absent)."""
    rows: list[str] = []
    viewer = RESULTS / "viewer.json"
    if viewer.is_file():
        for r in json.loads(viewer.read_text())["results"]:
            rows.append(
                f"| case viewer, {r['messages_per_case']} messages a case ({r['file_mb']:.0f} MB page; table "
                f"painted in {r['load']['table_first_paint_ms'] / 1000:.2f} s in Chromium) | {r['cases']:,} | "
                f"{r['write_seconds']:.1f} s | {r['cases'] / r['write_seconds']:,.0f} cases/s | - | "
                "`benchmarks/bench_viewer.py` |"
            )
    return rows


def _process_rows() -> list[str]:
    """The rows of ``process.json`` (none if it is absent)."""
    rows: list[str] = []
    process = RESULTS / "process.json"
    if process.is_file():
        r = json.loads(process.read_text())["result"]
        for mode, label in (("default", "with the process family"), ("redundancy", "with its redundancy")):
            m = r["summary"][mode]
            rows.append(
                f"| score, diagnosis + decision families {label} ({r['text_mb']:,.0f} MB of text, "
                f"{m['cpu_seconds']['ratio_to_without']}x the CPU without) | {r['runs']:,} | "
                f"{m['wall_seconds']['median']:.1f} s | {r['runs'] / m['wall_seconds']['median']:,.0f} runs/s | "
                f"{m['peak_rss_gb']:.2f} GB | `benchmarks/bench_process.py` |"
            )
    return rows


def _pipeline_rows() -> list[str]:
    """The rows of ``pipeline.json`` (none if it is absent)."""
    rows: list[str] = []
    pipeline = RESULTS / "pipeline.json"
    if pipeline.is_file():
        data = json.loads(pipeline.read_text())
        p = data["parameters"]
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


#: Each results file's rows, in the table's order.
_SECTIONS = (
    _simulate_rows,
    _ingest_rows,
    _ingest_logs_rows,
    _decision_rows,
    _decision_in_memory_rows,
    _medaisure_rows,
    _ddx_rows,
    _items_rows,
    _compare_rows,
    _scale_rows,
    _report_rows,
    _ingest_otlp_rows,
    _viewer_rows,
    _process_rows,
    _pipeline_rows,
)


def _rows() -> list[str]:
    return [row for section in _SECTIONS for row in section()]


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
        units = {"answers/s": "answer pairs", "samples/s": "samples", "spans/s": "spans", "cases/s": "cases"}
        unit = next((name for rate, name in units.items() if rate in throughput), "runs")
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
