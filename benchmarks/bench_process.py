"""Benchmark of what the process family adds to scoring long transcripts: ``mas_eval.score`` with and without it.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_process.py                         # 20,000 runs, 3 rounds
    .venv/bin/python benchmarks/bench_process.py --data /tmp/ddx         # keep (or reuse) the Dataset folder
    .venv/bin/python benchmarks/bench_process.py --modes without default redundancy --rounds 3

The Dataset is ``benchmarks/bench_ddx.py``'s (:func:`~mas_eval.simulation.diagnosis.simulate_diagnosis`,
seed 1, 95 % MAS runs of 9 agents, 7 rounds, 30 responses of ~1,500 characters: 858 MB of
transcript at 20,000 runs), written to Parquet once. Each round scores it once per mode, each
in a fresh process, the modes in the order given (interleaved, so that the shared machine's
slow and fast minutes fall on every mode alike):

- ``without``: the process family unregistered, what scoring cost before it existed;
- ``default``: ``mas_eval.score(ds)``, every family with its default parameters;
- ``redundancy``: ``mas_eval.score(ds, redundancy=True)``, the process family's redundancy asked for.

Each process reports the wall and CPU seconds of its ``score`` call (``time.perf_counter`` and
``time.process_time``, which counts every thread of the process), the CPU seconds of the
process family's step alone (from ``score``'s progress steps), and its peak RSS. The JSON
(``reports/benchmarks/process.json``) holds every process's figures, and per mode the median
and range, and the ratio of its median to that of ``without``; so does the printed summary.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, peak_rss_gb, run_fresh, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

import mas_eval  # noqa: E402
from mas_eval import Dataset  # noqa: E402
from mas_eval.simulation.diagnosis import simulate_diagnosis  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "process.json"
SEED = 1
MAS_SHARE = 0.95
SHAPE = {"agents": (9, 9), "rounds": 7, "responses": 30, "response_chars": 1500}
MODES = ("without", "default", "redundancy")
FIGURES = ("wall_seconds", "cpu_seconds", "process_cpu_seconds")


def score_in_this_process(folder: str, mode: str) -> dict[str, Any]:
    """Score the Dataset at ``folder`` as ``mode`` says; the call's wall and CPU seconds, and the family's."""
    from mas_eval.metrics import family as families

    overrides: dict[str, Any] = {}
    if mode == "without":
        families.unregister("process")
    elif mode == "redundancy":
        overrides["redundancy"] = True
    marks: list[tuple[str, float]] = []
    ds = Dataset.open(folder)
    wall, cpu = time.perf_counter(), time.process_time()
    scores = mas_eval.score(ds, progress=lambda step: marks.append((str(step), time.process_time())), **overrides)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    marks.append(("end", time.process_time()))
    steps = {name: after - before for (name, before), (_, after) in itertools.pairwise(marks)}
    return {
        "mode": mode,
        "wall_seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "process_cpu_seconds": round(steps.get("family process", 0.0), 2),
        "peak_rss_gb": round(peak_rss_gb(), 2),
        "ran": list(scores.ran),
        "redundancy_values": int(scores.runs["redundancy"].count()) if "redundancy" in scores.runs.columns else None,
    }


def _dataset(n: int, folder: Path) -> dict[str, Any]:
    if not (folder / "messages.parquet").is_file():
        print(f"simulating {n:,} runs into {folder} ...", flush=True)
        simulate_diagnosis(n, seed=SEED, mas_share=MAS_SHARE, **SHAPE).write(folder, overwrite=True, validate=False)  # type: ignore[arg-type]
    else:
        print(f"reusing the Dataset at {folder}", flush=True)
    messages = pl.scan_parquet(folder / "messages.parquet")
    facts = messages.select(pl.len().alias("messages"), pl.col("text").str.len_bytes().sum().alias("bytes")).collect()
    runs = pl.scan_parquet(folder / "runs.parquet").select(pl.len()).collect().item()
    if runs != n:
        sys.exit(f"bench_process: {folder} holds {runs:,} runs, not {n:,}; pass another --data folder")
    return {"runs": n, "messages": facts["messages"].item(), "text_mb": round(facts["bytes"].item() / 1e6, 1)}


def _summary(results: list[dict[str, Any]], modes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in modes:
        mine = [r for r in results if r["mode"] == mode]
        out[mode] = {
            figure: {
                "median": round(statistics.median(r[figure] for r in mine), 2),
                "min": min(r[figure] for r in mine),
                "max": max(r[figure] for r in mine),
            }
            for figure in FIGURES
        }
        out[mode]["peak_rss_gb"] = max(r["peak_rss_gb"] for r in mine)
    if "without" in out:
        for mode in modes:
            for figure in ("wall_seconds", "cpu_seconds"):
                base = out["without"][figure]["median"]
                out[mode][figure]["ratio_to_without"] = round(out[mode][figure]["median"] / base, 2)
    return out


def bench(n: int, folder: Path, modes: list[str], rounds: int) -> dict[str, Any]:
    row: dict[str, Any] = {"seed": SEED, "mas_share": MAS_SHARE, **SHAPE, **_dataset(n, folder)}
    results = []
    for i in range(rounds):
        for mode in modes:
            print(f"round {i + 1}/{rounds}: {mode} in a fresh process ...", flush=True)
            results.append(run_fresh(__file__, "--score-only", folder, "--mode", mode))
            r = results[-1]
            print(
                f"  wall {r['wall_seconds']:.1f} s, CPU {r['cpu_seconds']:.1f} s (process family "
                f"{r['process_cpu_seconds']:.1f} s), peak RSS {r['peak_rss_gb']:.2f} GB",
                flush=True,
            )
    row["each"] = results
    row["summary"] = _summary(results, modes)
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20_000, help="runs to simulate and score (default 20,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of one fresh process per mode (default 3)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="modes, in the order run")
    parser.add_argument("--data", type=Path, help="Dataset folder to write and keep (reused when it exists)")
    parser.add_argument("--output", type=Path, default=OUT, help=f"JSON result file (default {OUT.relative_to(ROOT)})")
    parser.add_argument("--score-only", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.score_only:
        print(json.dumps(score_in_this_process(args.score_only, args.mode)))
        return

    if args.data is not None:
        row = bench(args.runs, args.data, args.modes, args.rounds)
    else:
        with tempfile.TemporaryDirectory(prefix="mas_eval_bench_process_") as tmp:
            row = bench(args.runs, Path(tmp) / "ddx", args.modes, args.rounds)
    report = {
        "benchmark": "mas_eval.score on bench_ddx.py's Local-DDx runs, with and without the process family",
        "environment": environment(numpy=np.__version__),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "result": row,
    }
    write_json(args.output, report)
    for mode, figures in row["summary"].items():
        wall, cpu = figures["wall_seconds"], figures["cpu_seconds"]
        ratio = f" ({wall['ratio_to_without']}x, CPU {cpu['ratio_to_without']}x)" if "ratio_to_without" in wall else ""
        print(
            f"{mode}: wall {wall['median']:.1f} s [{wall['min']:.1f}-{wall['max']:.1f}], CPU {cpu['median']:.1f} s "
            f"[{cpu['min']:.1f}-{cpu['max']:.1f}]{ratio}"
        )


if __name__ == "__main__":
    main()
