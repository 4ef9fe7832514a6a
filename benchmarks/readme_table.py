"""Rewrite the README's benchmark table from the JSON results in reports/benchmarks/.

Run after the benchmark scripts: ``python benchmarks/readme_table.py``. The table sits
between the ``benchmarks:start`` and ``benchmarks:end`` markers of README.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "reports" / "benchmarks"
README = ROOT / "README.md"


def _rows() -> list[str]:
    rows = []
    simulate = RESULTS / "simulate.json"
    if simulate.is_file():
        s = json.loads(simulate.read_text())
        peak = max(s["peak_rss_mb"].values()) / 1024
        rows.append(
            f"| simulate + write (validation timed apart: {s['validate_seconds']:.1f} s) | {s['runs']:,} | "
            f"{s['generate_and_write_seconds']:.1f} s | {s['runs_per_second']:,} runs/s | {peak:.2f} GB | "
            "`benchmarks/bench_simulate.py` |"
        )
    decision = RESULTS / "decision.json"
    if decision.is_file():
        for r in json.loads(decision.read_text())["results"]:
            note = f" ({r['speedup_vs_oracle']}x the oracle's runs/s)" if "speedup_vs_oracle" in r else ""
            rows.append(
                f"| score, decision suite{note} | {r['runs']:,} | {r['score_seconds']:.1f} s | "
                f"{r['runs_per_second']:,} runs/s | {r['peak_rss_gb']:.2f} GB | `benchmarks/bench_decision.py` |"
            )
    compare = RESULTS / "compare.json"
    if compare.is_file():
        c = json.loads(compare.read_text())
        for r in c.get("results", []):
            rows.append(
                f"| compare ({r.get('label', r.get('test', ''))}) | {r.get('runs', 0):,} | {r['seconds']:.1f} s | "
                f"{r.get('metrics', '')} metrics x {r.get('groups', '')} groups | "
                f"{r.get('peak_rss_gb', float('nan')):.2f} GB | `benchmarks/bench_compare.py` |"
            )
    return rows


def main() -> None:
    header = [
        "| benchmark | runs | wall time | throughput | peak RSS | script |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    table = "\n".join(header + _rows())
    text = README.read_text()
    updated = re.sub(
        r"(<!-- benchmarks:start -->\n).*?(\n<!-- benchmarks:end -->)", rf"\g<1>{table}\g<2>", text, flags=re.S
    )
    README.write_text(updated)
    print(table)


if __name__ == "__main__":
    main()
