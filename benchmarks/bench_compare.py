"""Benchmark of `mas_eval.stats.compare` on a large run-metrics table.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_compare.py                  # 1,000,000 runs x 20 metrics x 50 groups
    .venv/bin/python benchmarks/bench_compare.py --runs 100000 --no-paired

Builds the table with numpy (seeded; both systems run every case once, so a paired design
has runs / 2 cases), then times ``compare(..., by=["group"], test="welch")`` and a paired
variant (``pair_on="case_id"``, ``test="paired"``). Writes ``reports/benchmarks/compare.json``
and prints a one-line summary. Times are wall clock (best of ``--repeat``); peak RSS is the
process's high-water mark (``ru_maxrss``) after each phase. Target: <= 15 s for the Welch call.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mas_eval import __version__  # noqa: E402
from mas_eval.stats import compare  # noqa: E402

SEED = 20240917
TARGET_SECONDS = 15.0


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux, bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def build(runs: int, metrics: int, groups: int, seed: int) -> pl.DataFrame:
    """``runs`` rows: half MAS, half single, each case run once by both; ``metrics`` float columns."""
    rng = np.random.default_rng(seed)
    cases = runs // 2
    case = np.repeat(np.arange(cases, dtype=np.int64), 2)
    system = np.tile(np.array([0, 1], dtype=np.int8), cases)
    group = (case % groups).astype(np.int32)
    case_effect = rng.normal(0.0, 0.1, size=cases)[case]
    data: dict[str, object] = {
        "run_id": np.arange(case.size, dtype=np.int64),
        "system": pl.Series(np.where(system == 0, "mas", "single")).cast(pl.Categorical),
        "case_id": case,
        "group": group,
    }
    for j in range(metrics):
        effect = 0.02 * (j % 5) * (system == 0)
        data[f"metric_{j:02d}"] = 0.6 + effect + case_effect + rng.normal(0.0, 0.15, size=case.size)
    return pl.DataFrame(data)


def _time(repeat: int, call: object) -> tuple[float, pl.DataFrame]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, result  # type: ignore[return-value]


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000, help="runs (default 1,000,000)")
    parser.add_argument("--metrics", type=int, default=20, help="metric columns (default 20)")
    parser.add_argument("--groups", type=int, default=50, help="groups (default 50)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"data seed (default {SEED})")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best is kept (default 3)")
    parser.add_argument("--no-paired", action="store_true", help="skip the paired variant")
    parser.add_argument(
        "--output", type=Path, default=ROOT / "reports" / "benchmarks" / "compare.json", help="JSON result file"
    )
    args = parser.parse_args(argv)

    start = time.perf_counter()
    frame = build(args.runs, args.metrics, args.groups, args.seed)
    build_s = time.perf_counter() - start
    rss_build = _peak_rss_mb()
    metric_names = [f"metric_{j:02d}" for j in range(args.metrics)]

    welch_s, welch = _time(args.repeat, lambda: compare(frame, metric_names, by=["group"], test="welch"))
    rss_welch = _peak_rss_mb()
    result: dict[str, object] = {
        "benchmark": "compare",
        "mas_eval_version": __version__,
        "created_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "parameters": {
            "runs": args.runs,
            "metrics": args.metrics,
            "groups": args.groups,
            "cases": args.runs // 2,
            "seed": args.seed,
            "repeat": args.repeat,
            "call": 'compare(frame, metrics, by=["group"], test="welch")',
        },
        "build_seconds": round(build_s, 3),
        "welch_seconds": round(welch_s, 3),
        "welch_rows": welch.height,
        "welch_within_target": welch_s <= TARGET_SECONDS,
        "target_seconds": TARGET_SECONDS,
        "peak_rss_mb": {"after_build": round(rss_build, 1), "after_welch": round(rss_welch, 1)},
    }
    if not args.no_paired:
        paired_s, paired = _time(
            args.repeat,
            lambda: compare(frame, metric_names, by=["group"], pair_on="case_id", test="paired"),
        )
        result["paired_seconds"] = round(paired_s, 3)
        result["paired_rows"] = paired.height
        result["paired_call"] = 'compare(frame, metrics, by=["group"], pair_on="case_id", test="paired")'
        result["peak_rss_mb"]["after_paired"] = round(_peak_rss_mb(), 1)  # type: ignore[index]
    result["machine"] = {
        "python": platform.python_version(),
        "polars": pl.__version__,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "polars_threads": pl.thread_pool_size(),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    paired_note = f", paired {result['paired_seconds']:.2f} s" if "paired_seconds" in result else ""
    print(
        f"compare: {args.runs:,} runs x {args.metrics} metrics x {args.groups} groups: welch {welch_s:.2f} s"
        f"{paired_note}; peak RSS {_peak_rss_mb():.0f} MB -> {args.output}"
    )
    return result


if __name__ == "__main__":
    main()
