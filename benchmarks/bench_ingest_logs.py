"""Benchmark of `mas_eval.ingest.ingest_inspect`: 100,000 inspect_ai samples, beside inspect's own `samples_df`.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_ingest_logs.py                    # 100 logs of 100 samples x 10 epochs
    .venv/bin/python benchmarks/bench_ingest_logs.py --logs 10          # 10,000 samples
    .venv/bin/python benchmarks/bench_ingest_logs.py --cache /tmp/logs  # where the logs are kept

The logs are made once and kept in a cache folder outside the repository (default
``~/.cache/mas_eval/bench_inspect_logs``): inspect_ai itself, with its mock model, runs the
single-agent task of ``tests/inspect_logs.py`` on ``--samples`` questions for 10 epochs; that
log is then written again ``--logs`` times by inspect's own writer with a new eval id, task
name and sample uuids each (so the copies are distinct evaluations, not repeats of one). Generating every sample
with inspect would take longer than the ingest being measured.

The ingest (``ingest_inspect(folder, out)``, every table written) and inspect_ai's
``samples_df(folder)`` (its summary table of the samples: ids, scores, tokens, no messages or
events) each run in a fresh process, whose peak RSS (``VmHWM``) is its own, imports included.
Writes ``reports/benchmarks/ingest_logs.json`` and prints one line per reader. RSS MB are 2**20
bytes, as in the other benchmarks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, peak_rss_gb, run_fresh, write_json  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "ingest_logs.json"
CACHE = Path.home() / ".cache" / "mas_eval" / "bench_inspect_logs"
EPOCHS = 10


def make_logs(cache: Path, samples: int, logs: int) -> list[Path]:
    """``logs`` .eval logs of ``samples`` x 10 epochs in ``cache`` (kept: made once per size)."""
    from inspect_ai import eval as run_eval
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import get_model

    from tests.inspect_logs import mock_answers, yes_no_tasks

    folder = cache / f"{samples}x{EPOCHS}x{logs}"
    done = folder / "_complete"
    if done.is_file():
        return sorted(folder.glob("*.eval"))
    shutil.rmtree(folder, ignore_errors=True)
    base = cache / f"base_{samples}x{EPOCHS}"
    if not any(base.glob("*.eval")):
        model = get_model("mockllm/single", custom_outputs=mock_answers("single", 0.6))
        single, _ = yes_no_tasks(samples, model, (EPOCHS, EPOCHS))
        run_eval(single, epochs=EPOCHS, log_dir=str(base), display="none", max_samples=64)
    log = read_eval_log(str(next(base.glob("*.eval"))))
    uuids = [sample.uuid for sample in log.samples or []]
    folder.mkdir(parents=True)
    for k in range(logs):
        log.eval.eval_id = f"bench{k:05d}"
        log.eval.task = f"yes_no_{k:05d}"
        # samples_df keeps one row per sample uuid: each copy's samples are new samples.
        for sample, uuid in zip(log.samples or [], uuids, strict=True):
            sample.uuid = f"{uuid}-{k:05d}"
        write_eval_log(log, str(folder / f"log_{k:05d}.eval"))
    done.touch()
    return sorted(folder.glob("*.eval"))


def ingest_in_this_process(folder: Path, out: Path) -> dict[str, Any]:
    from mas_eval.ingest import ingest_inspect

    start = time.perf_counter()
    result = ingest_inspect(folder, out)
    seconds = time.perf_counter() - start
    rows = dict(result.dataset.summary().select("table", "rows").rows())
    return {"seconds": seconds, "runs": result.runs, "rows": rows, "peak_rss_mb": peak_rss_gb() * 1024}


def samples_df_in_this_process(folder: Path) -> dict[str, Any]:
    from inspect_ai.analysis import samples_df

    start = time.perf_counter()
    frame = samples_df(str(folder), quiet=True)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "rows": len(frame), "peak_rss_mb": peak_rss_gb() * 1024}


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100, help="questions per log (each run 10 epochs); default 100")
    parser.add_argument("--logs", type=int, default=100, help="logs; default 100 (100,000 samples in all)")
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
    files = make_logs(args.cache, args.samples, args.logs)
    made = time.perf_counter() - start
    folder = files[0].parent
    total = args.samples * EPOCHS * args.logs
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    with tempfile.TemporaryDirectory(prefix="bench_ingest_logs_") as tmp:
        ours = run_fresh(__file__, "--ingest-only", folder, Path(tmp) / "ds")
    theirs = run_fresh(__file__, "--samples-df-only", folder)
    assert ours["runs"] == theirs["rows"] == total, (ours, theirs)
    rows = [
        {
            "reader": "mas_eval ingest_inspect (every table, written)",
            "samples": total,
            "seconds": round(ours["seconds"], 2),
            "samples_per_second": round(total / ours["seconds"]),
            "peak_rss_mb": round(ours["peak_rss_mb"], 1),
            "rows": ours["rows"],
        },
        {
            "reader": "inspect_ai samples_df (summaries only)",
            "samples": total,
            "seconds": round(theirs["seconds"], 2),
            "samples_per_second": round(total / theirs["seconds"]),
            "peak_rss_mb": round(theirs["peak_rss_mb"], 1),
        },
    ]
    for row in rows:
        print(
            f"{row['reader']}: {total:,} samples in {row['seconds']:.1f} s ({row['samples_per_second']:,}/s), "
            f"peak RSS {row['peak_rss_mb']:,.0f} MB",
            flush=True,
        )
    result: dict[str, Any] = {
        "benchmark": "ingest_inspect",
        "parameters": {"samples": args.samples, "epochs": EPOCHS, "logs": args.logs, "input_mb": round(size_mb, 1)},
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
