"""Benchmark of `mas_eval.simulate`: generate N runs, validate them, write them to Parquet.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_simulate.py            # 1,000,000 runs
    .venv/bin/python benchmarks/bench_simulate.py 100000 --no-validate

Writes ``reports/benchmarks/simulate.json`` and prints a one-line summary. Times are wall
clock; peak RSS is the process's high-water mark (``ru_maxrss``) after each phase, so the
phase that raised it is visible.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

from mas_eval import Dataset  # noqa: E402
from mas_eval.simulation.decision import simulate  # noqa: E402

SEED = 20240917


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux, bytes on macOS.
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=1_000_000, help="runs to simulate (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"simulation seed (default {SEED})")
    parser.add_argument("--no-validate", action="store_true", help="skip the timed Dataset.validate() phase")
    parser.add_argument(
        "--output",
        type=Path,
        default=ROOT / "reports" / "benchmarks" / "simulate.json",
        help="JSON result file",
    )
    args = parser.parse_args(argv)

    steps: list[tuple[str, float]] = []
    start = time.perf_counter()
    ds = simulate(args.runs, seed=args.seed, progress=lambda step: steps.append((step, time.perf_counter() - start)))
    generate_s = time.perf_counter() - start
    rss_generate = _peak_rss_mb()

    validate_s = None
    if not args.no_validate:
        start = time.perf_counter()
        ds.validate()
        validate_s = time.perf_counter() - start
    rss_validate = _peak_rss_mb()

    # Validation is timed on its own above, so the write is the sink alone (when write can skip it).
    skip = {"validate": False} if "validate" in inspect.signature(Dataset.write).parameters else {}
    with tempfile.TemporaryDirectory(prefix="bench_simulate_") as tmp:
        start = time.perf_counter()
        out = ds.write(Path(tmp) / "sim", **skip)
        write_s = time.perf_counter() - start
        disk_bytes = _folder_bytes(out)
        rows = {
            name: pl.scan_parquet(out / f"{name}.parquet").select(pl.len()).collect().item() for name in ds.table_names
        }
    rss_write = _peak_rss_mb()

    total_s = generate_s + write_s
    result: dict[str, object] = {
        "benchmark": "simulate",
        "runs": args.runs,
        "seed": args.seed,
        "rows": rows,
        "generate_seconds": round(generate_s, 3),
        "validate_seconds": None if validate_s is None else round(validate_s, 3),
        "write_seconds": round(write_s, 3),
        "generate_and_write_seconds": round(total_s, 3),
        "runs_per_second": round(args.runs / total_s),
        "generate_steps_seconds": {step.split(":")[0]: round(t, 3) for step, t in steps},
        "peak_rss_mb": {
            "after_generate": round(rss_generate, 1),
            "after_validate": round(rss_validate, 1),
            "after_write": round(rss_write, 1),
        },
        "parquet_bytes": disk_bytes,
        "environment": environment(numpy=np.__version__),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    write_json(args.output, result)
    validate_part = "" if validate_s is None else f", validate {validate_s:.1f} s"
    print(
        f"simulate {args.runs:,} runs: generate {generate_s:.1f} s + write {write_s:.1f} s = {total_s:.1f} s "
        f"({args.runs / total_s:,.0f} runs/s){validate_part}; peak RSS {rss_write:,.0f} MB; "
        f"{sum(rows.values()):,} rows, {disk_bytes / 2**20:,.0f} MB Parquet -> {args.output}"
    )
    return result


if __name__ == "__main__":
    main()
