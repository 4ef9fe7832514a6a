"""Benchmark of the command-line pipeline, stage by stage: from logs on disk to an HTML report.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_pipeline.py                  # 200,000 and 1,000,000 runs
    .venv/bin/python benchmarks/bench_pipeline.py 200000 --workers 2
    .venv/bin/python benchmarks/bench_pipeline.py --keep-logs /tmp/logs   # the JSONL kept for the next call

``--keep-logs DIR`` makes each size's JSONL once, in ``DIR/<runs>/``, and starts at the ingest
when it is there: two versions (``PYTHONPATH`` set to each checkout) are then timed on the same
logs, alternating, without simulating them twice.

Each stage is one fresh process, as a user runs it (``python -m mas_eval.cli`` is ``mas-eval``):

1. ``mas-eval simulate --runs N`` (decision runs) writes a Dataset;
2. ``export_jsonl`` turns it into canonical JSONL run records, the logs a user brings
   (there is no command for this; a one-line Python call);
3. ``mas-eval ingest runs.jsonl --shards S``;
4. ``mas-eval score DATASET --workers W``;
5. ``mas-eval compare SCORES --by task --out comparisons.parquet``;
6. ``mas-eval report SCORES --comparisons comparisons.parquet --dataset DATASET --out report.html``.

Each stage's wall time is measured around its process, and its peak RSS is the largest of
the process and its worker processes (``wait4``'s ``ru_maxrss``, Linux: MB of 2**20 bytes).
"JSONL to report" is stages 3 to 6, the part a user with logs waits for. Writes
``reports/benchmarks/pipeline.json`` and prints a line per stage.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

SEED = 20240917
OUT = ROOT / "reports" / "benchmarks" / "pipeline.json"
#: The stages a user with JSONL logs waits for (the first two make those logs).
FROM_JSONL = ("ingest", "score", "compare", "report")
_EXPORT = (
    "import sys; from mas_eval import Dataset; from mas_eval.ingest import export_jsonl; "
    "export_jsonl(Dataset.open(sys.argv[1]), sys.argv[2])"
)


def _run(name: str, command: list[str]) -> dict[str, Any]:
    """Run ``command`` in a fresh process: its wall time and peak RSS (with its children's)."""
    start = time.perf_counter()
    env = os.environ | {"COLUMNS": "100"}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        msg = f"{name} failed ({process.returncode}): {' '.join(command)}\n{errors.decode(errors='replace')}"
        raise SystemExit(msg)
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: KiB on Linux, bytes on macOS
    return {"stage": name, "seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss * scale / 2**20, 1)}


def bench(runs: int, seed: int, workers: int, shards: int, workdir: Path, logs: Path | None = None) -> dict[str, Any]:
    """Time the stages in ``workdir``; with ``logs``, a folder holding ``runs.jsonl`` made by an
    earlier call for the same runs and seed, the first two stages are skipped and it is read."""
    cli = [sys.executable, "-m", "mas_eval.cli"]
    simulated, jsonl, dataset = workdir / "simulated", workdir / "runs.jsonl", workdir / "dataset"
    if logs is not None:
        jsonl = logs / "runs.jsonl"
    scores, comparisons, report = workdir / "scores", workdir / "comparisons.parquet", workdir / "report.html"
    report_args = ["--comparisons", str(comparisons), "--dataset", str(dataset), "--out", str(report)]
    stages = [
        ("simulate", [*cli, "simulate", "--runs", str(runs), "--seed", str(seed), "--out", str(simulated)]),
        ("export", [sys.executable, "-c", _EXPORT, str(simulated), str(jsonl)]),
        ("ingest", [*cli, "ingest", str(jsonl), "--out", str(dataset), "--shards", str(shards)]),
        ("score", [*cli, "score", str(dataset), "--out", str(scores), "--workers", str(workers)]),
        ("compare", [*cli, "compare", str(scores), "--by", "task", "--out", str(comparisons)]),
        ("report", [*cli, "report", str(scores), *report_args]),
    ]
    if logs is not None:
        stages = stages[2:]
    rows = []
    for name, command in stages:
        row = _run(name, command)
        rows.append(row)
        print(f"{runs:>9,} runs  {name:<8} {row['seconds']:7.2f} s  peak {row['peak_rss_mb']:7,.0f} MB", flush=True)
    from_jsonl = sum(r["seconds"] for r in rows if r["stage"] in FROM_JSONL)
    print(f"{runs:>9,} runs  JSONL to report: {from_jsonl:.2f} s", flush=True)
    return {
        "runs": runs,
        "stages": rows,
        "jsonl_mb": round(jsonl.stat().st_size / 1e6, 1),
        "jsonl_to_report_seconds": round(from_jsonl, 2),
        "total_seconds": round(sum(r["seconds"] for r in rows), 2),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in rows),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=int, default=[200_000, 1_000_000], help="runs; default 200000 1000000")
    parser.add_argument("--seed", type=int, default=SEED, help=f"simulation seed (default {SEED})")
    parser.add_argument("--workers", type=int, default=2, help="score --workers (default 2)")
    parser.add_argument("--shards", type=int, default=8, help="ingest --shards (default 8)")
    parser.add_argument("--output", type=Path, default=OUT, help="JSON result file")
    parser.add_argument(
        "--keep-logs",
        type=Path,
        help="keep each size's JSONL in DIR/<runs>/ and reuse it when there (to time two versions on the same logs)",
    )
    args = parser.parse_args(argv)
    results = []
    for runs in args.runs:
        logs = None
        if args.keep_logs is not None:
            logs = args.keep_logs / str(runs)
            if not (logs / "runs.jsonl").is_file():
                logs.mkdir(parents=True, exist_ok=True)
                subprocess.run(
                    [sys.executable, "-m", "mas_eval.cli", "simulate", "--runs", str(runs), "--seed", str(args.seed),
                     "--out", str(logs / "simulated")],
                    check=True, stdout=subprocess.DEVNULL,
                )  # fmt: skip
                export = [sys.executable, "-c", _EXPORT, str(logs / "simulated"), str(logs / "runs.jsonl")]
                subprocess.run(export, check=True)
        with tempfile.TemporaryDirectory(prefix="bench_pipeline_") as tmp:
            results.append(bench(runs, args.seed, args.workers, args.shards, Path(tmp), logs))
    result: dict[str, Any] = {
        "benchmark": "pipeline",
        "parameters": {"runs": args.runs, "seed": args.seed, "workers": args.workers, "shards": args.shards},
        "results": results,
        "environment": environment(),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    write_json(args.output, result)
    return result


if __name__ == "__main__":
    main()
