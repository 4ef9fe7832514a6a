"""Benchmark of `mas_eval.ingest.ingest_inspect` beside inspect_ai's own `samples_df`, on the same logs, in one run.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_ingest_logs.py                       # 600 questions x 10 epochs, two logs
    .venv/bin/python benchmarks/bench_ingest_logs.py --baseline ../main    # and another checkout's ingest
    .venv/bin/python benchmarks/bench_ingest_logs.py --cache /tmp/logs     # where the logs are kept

The logs are made once and kept in a cache folder outside the repository (default
``~/.cache/mas_eval/bench_inspect_logs``): inspect_ai itself, with its mock model, runs the two
tasks of ``tests/inspect_logs.py`` (a single agent, and a two-role debate of two rounds) on
``--samples`` questions for 10 epochs each: 12,000 samples in two ``.eval`` logs by default.

Each reader runs ``--repeat`` times, alternating, each time in a fresh process whose peak RSS
(``VmHWM``) is its own, imports included: the ingest (``ingest_inspect(folder, out)``, every table
written), inspect_ai's ``samples_df(folder)`` (its summary table of the samples: ids, scores,
tokens, no messages or events), and with ``--baseline`` the ingest of another checkout (e.g. the
one before a change). The best time of each is kept (this machine is shared: the others' load
only slows a run). Writes ``reports/benchmarks/ingest_logs.json``: the seconds (and the CPU
seconds of the best run: threads add theirs), MB of log read per second, the ratio to
``samples_df``, peak RSS. RSS MB are 2**20 bytes, as in the other
benchmarks; MB of log are 10**6 bytes of the ``.eval`` files.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, peak_rss_gb, write_json  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "ingest_logs.json"
CACHE = Path.home() / ".cache" / "mas_eval" / "bench_inspect_logs"
EPOCHS = 10


def make_logs(cache: Path, samples: int) -> list[Path]:
    """The single agent's and the debate's .eval logs of ``samples`` questions x 10 epochs (made once)."""
    from tests.inspect_logs import write_logs

    folder = cache / f"debate_{samples}x{EPOCHS}"
    done = folder / "_complete"
    if not done.is_file():
        for old in folder.glob("*.eval"):
            old.unlink()
        write_logs(folder, samples=samples, epochs=EPOCHS)
        done.touch()
    return sorted(folder.glob("*.eval"))


def ingest_in_this_process(folder: Path, out: Path) -> dict[str, Any]:
    from mas_eval.ingest import ingest_inspect

    start, cpu = time.perf_counter(), time.process_time()
    result = ingest_inspect(folder, out)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = dict(result.dataset.summary().select("table", "rows").rows())
    return {"seconds": seconds, "cpu": cpu, "runs": result.runs, "rows": rows, "peak_rss_mb": peak_rss_gb() * 1024}


def samples_df_in_this_process(folder: Path) -> dict[str, Any]:
    from inspect_ai.analysis import samples_df

    start, cpu = time.perf_counter(), time.process_time()
    frame = samples_df(str(folder), quiet=True)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"seconds": seconds, "cpu": cpu, "runs": len(frame), "peak_rss_mb": peak_rss_gb() * 1024}


def _fresh(checkout: Path, *args: str | Path) -> dict[str, Any]:
    """This script run with ``args`` in a fresh interpreter that imports ``checkout``'s mas_eval."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), str(ROOT)])}
    command = [sys.executable, __file__, *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[2:])}: failed (exit {done.returncode}):\n{done.stderr.strip()[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=600, help="questions per task (each run 10 epochs); 600")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each reader, alternating; the best is kept")
    parser.add_argument("--baseline", type=Path, help="another checkout whose ingest_inspect is timed beside")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"where the logs are kept (default {CACHE})")
    parser.add_argument("--output", type=Path, default=OUT, help="JSON result file")
    parser.add_argument("--ingest-only", nargs=2, type=Path, metavar=("FOLDER", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--samples-df-only", type=Path, metavar="FOLDER", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ingest_only:
        print(json.dumps(ingest_in_this_process(*args.ingest_only)))
        return None
    if args.samples_df_only:
        print(json.dumps(samples_df_in_this_process(args.samples_df_only)))
        return None

    start = time.perf_counter()
    files = make_logs(args.cache, args.samples)
    made = time.perf_counter() - start
    folder = files[0].parent
    total = 2 * args.samples * EPOCHS
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    readers = {"mas_eval ingest_inspect (every table, written)": ROOT}
    if args.baseline is not None:
        readers[f"mas_eval ingest_inspect of {args.baseline.resolve()} (baseline)"] = args.baseline.resolve()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in [*readers, "inspect_ai samples_df (summaries only)"]}
    for _ in range(args.repeat):
        for name, checkout in readers.items():
            with tempfile.TemporaryDirectory(prefix="bench_ingest_logs_") as tmp:
                runs[name].append(_fresh(checkout, "--ingest-only", folder, Path(tmp) / "ds"))
        runs["inspect_ai samples_df (summaries only)"].append(_fresh(ROOT, "--samples-df-only", folder))
    rows = []
    theirs = min(r["seconds"] for r in runs["inspect_ai samples_df (summaries only)"])
    for name, measured in runs.items():
        assert all(r["runs"] == total for r in measured), (name, measured)
        best = min(measured, key=lambda r: r["seconds"])
        rows.append(
            {
                "reader": name,
                "samples": total,
                "seconds": round(best["seconds"], 2),
                "all_seconds": [round(r["seconds"], 2) for r in measured],
                "cpu_seconds": round(best["cpu"], 2),
                "mb_per_second": round(size_mb / best["seconds"], 1),
                "samples_per_second": round(total / best["seconds"]),
                "times_samples_df": round(theirs / best["seconds"], 2),
                "peak_rss_mb": round(max(r["peak_rss_mb"] for r in measured), 1),
                **({"rows": best["rows"]} if "rows" in best else {}),
            }
        )
    for row in rows:
        print(
            f"{row['reader']}: {total:,} samples ({size_mb:.1f} MB) in {row['seconds']:.2f} s "
            f"({row['mb_per_second']:.1f} MB/s, {row['times_samples_df']:.2f}x samples_df), "
            f"peak RSS {row['peak_rss_mb']:,.0f} MB",
            flush=True,
        )
    result: dict[str, Any] = {
        "benchmark": "ingest_inspect",
        "parameters": {
            "samples": args.samples,
            "epochs": EPOCHS,
            "logs": len(files),
            "input_mb": round(size_mb, 1),
            "repeat": args.repeat,
        },
        "results": rows,
        "logs_made_seconds": round(made, 1),
        "environment": environment(inspect_ai=_inspect_version()),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    write_json(args.output, result)
    return result


def _inspect_version() -> str:
    from importlib.metadata import version

    return version("inspect_ai")


if __name__ == "__main__":
    main()
