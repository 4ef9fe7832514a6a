"""Benchmark of ``mas-eval report`` on logged outcomes: 100,000 runs, the whole command timed as a process.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_report.py                     # 100,000 runs, report.html, best of 3
    .venv/bin/python benchmarks/bench_report.py --runs 20000 --repeats 1 --formats .html .json   # a smoke check
    .venv/bin/python benchmarks/bench_report.py --profile           # also where the time goes, in one process

For each size, :func:`mas_eval.simulate_outcomes` (seed 3: two systems, 5 epochs a case, 3 tasks, per-agent
usage, so the outcomes and process families both run) is scored once and written as a Scores folder
(not timed). Then ``python -m mas_eval.cli report SCORES --out report<suffix>`` runs ``--repeats`` times in a
fresh interpreter each (imports included, as a user's shell runs it): its wall-clock seconds (the best, and
each), its CPU seconds (user + system, of the child alone: the machine is shared by other work, which
inflates wall-clock time but not CPU time), and the largest peak RSS of the reports so far. ``--profile``
builds and writes the report once more in this process under :mod:`cProfile` and records the functions that
took the most cumulative time.
Writes ``reports/benchmarks/report.json``. Target: at most 10 s for 100,000 runs, on 2 cores.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

import mas_eval  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "report.json"
SEED = 3
TARGETS = {"report_seconds_at_100000_runs": 10.0}


def _report_once(scores: Path, target: Path) -> dict[str, float]:
    """One ``mas-eval report`` in a fresh interpreter: wall-clock and CPU seconds of that child alone."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mas_eval.cli", "report", str(scores), "--out", str(target), "--overwrite"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120"},
    )
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        sys.exit(f"mas-eval report failed (exit {done.returncode}):\n{done.stderr.strip()[-4000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall": round(wall, 2), "cpu": round(cpu, 2)}


def _children_peak_rss_gb() -> float:
    """The largest peak RSS of the children waited for so far (the reports: the simulation runs in this process)."""
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / 2**30


def _profile(scores: Path, target: Path, top: int = 25) -> list[dict[str, Any]]:
    """The report built and written in this process under cProfile: the ``top`` functions by cumulative time."""
    from mas_eval.report import build

    profiler = cProfile.Profile()
    profiler.enable()
    build(scores).write(target, overwrite=True)
    profiler.disable()
    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream).sort_stats("cumulative")
    rows = []
    for (file, line, name), (_, calls, _, cumulative, _) in sorted(
        stats.stats.items(),  # type: ignore[attr-defined]
        key=lambda item: -item[1][3],
    )[:top]:
        where = file.replace(str(ROOT) + os.sep, "").split("site-packages" + os.sep)[-1]
        rows.append({"function": f"{where}:{line}({name})", "calls": calls, "cumulative_seconds": round(cumulative, 3)})
    return rows


def bench(runs: int, formats: list[str], repeats: int, profile: bool, folder: Path) -> dict[str, Any]:
    start = time.perf_counter()
    scores = mas_eval.score(mas_eval.simulate_outcomes(runs, seed=SEED)).write(folder / f"scores_{runs}")
    made = time.perf_counter() - start
    result: dict[str, Any] = {"runs": runs, "simulate_and_score_seconds": round(made, 2), "formats": {}}
    for suffix in formats:
        times = [_report_once(scores, folder / f"report{suffix}") for _ in range(repeats)]
        best = min(times, key=lambda t: t["wall"])
        size = (folder / f"report{suffix}").stat().st_size
        figures = (folder / f"report{suffix}").read_text(encoding="utf-8").count("<svg") if suffix == ".html" else None
        result["formats"][suffix] = {
            "seconds": best["wall"],
            "cpu_seconds": best["cpu"],
            "each": times,
            "peak_rss_gb": round(_children_peak_rss_gb(), 2),
            "file_mb": round(size / 2**20, 2),
            **({"figures": figures} if figures is not None else {}),
        }
        print(
            f"{runs:,} runs, report{suffix}: {best['wall']} s wall, {best['cpu']} s CPU (best of {repeats}; "
            f"each {[t['wall'] for t in times]}), {size / 2**20:.2f} MiB"
        )
    if profile:
        result["profile"] = _profile(scores, folder / "profiled.html")
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[100_000], help="runs (default 100,000)")
    parser.add_argument("--formats", nargs="+", default=[".html"], help="report formats (default .html)")
    parser.add_argument("--repeats", type=int, default=3, help="reports of each format, the best kept (default 3)")
    parser.add_argument("--profile", action="store_true", help="also profile one build and write in this process")
    parser.add_argument("--out", type=Path, default=OUT, help=f"result JSON (default {OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_report_") as folder:
        results = [bench(n, args.formats, args.repeats, args.profile, Path(folder)) for n in args.runs]
    data = {
        "benchmark": "report",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "environment": environment(seed=SEED),
        "targets": TARGETS,
        "results": results,
    }
    write_json(args.out, data)
    return data


if __name__ == "__main__":
    main()
