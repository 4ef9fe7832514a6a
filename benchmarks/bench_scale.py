"""Benchmark of scoring at scale: 1M and 10M simulated decision runs in a sharded Dataset.

Usage::

    python benchmarks/bench_scale.py                       # 1,000,000 and 10,000,000 runs
    python benchmarks/bench_scale.py --runs 1000000        # one size
    python benchmarks/bench_scale.py --workdir /big/disk   # where the Datasets go (3 GB at 10M)

Each size is simulated in chunks of 1,000,000 runs of the benchmark shape of
``bench_decision.py`` (5 agents, 4 alternatives, 3 criteria per run). Chunk k has seed k and
its run and case ids prefixed ``cK-``; every chunk is written with the same number of shards
(one per 62,500 runs), and the chunks' files are concatenated shard by shard. The prefixes
sort in chunk order, so each shard stays sorted by key, as ``Dataset.write`` leaves it; then
the joined shards' key codes are stored (:mod:`mas_eval.storage.stored_codes`), as ``Dataset.write`` does.

Then, each in a fresh process so that its peak RSS is its own:

* **plain read**: every column of the six tables, shard by shard (the floor scoring is
  compared with);
* **score, 1 process**: ``score_shards(ds, out, workers=1)``, every output table written;
* **score, 2 workers**: ``score_shards(ds, out, workers=2)``; its peak RSS is the larger of the
  parent's and the largest worker's;
* at 1M, **score in memory**: ``score(ds)`` returning the tables;
* **compare** the 2-worker Scores folder's runs, as ``mas-eval compare`` reads them (lazily):
  four metrics per task, Welch's test and the paired test on ``case_id``.

Sizes up to ``--repeat-below`` runs are measured ``--repeats`` times and the median is
reported; larger ones once. Results go to ``reports/benchmarks/scale.json``, where the rows of
sizes not measured this time are kept.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

import mas_eval  # noqa: E402
from benchmarks.machine import environment, peak_rss_gb, run_fresh, write_json  # noqa: E402
from mas_eval import Dataset  # noqa: E402
from mas_eval.scoring.shards import score_shards  # noqa: E402
from mas_eval.storage.sharding import PART, SHARD_COLUMN  # noqa: E402
from mas_eval.storage.stored_codes import write_codes  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "scale.json"
SHAPE = {"agents": (5, 5), "alternatives": (4, 4), "criteria": (3, 3)}
CHUNK = 1_000_000
RUNS_PER_SHARD = 62_500


def _prefixed(ds: Dataset, prefix: str) -> Dataset:
    """``ds`` with every run id and case id prefixed, so that chunks never share one."""
    frames = {}
    for name in ds.table_names:
        frame = ds[name]
        columns = frame.collect_schema().names()
        frames[name] = frame.with_columns(
            (pl.lit(prefix) + pl.col(column)).alias(column) for column in ("run_id", "case_id") if column in columns
        )
    return Dataset.from_frames(**frames)


def simulate_sharded(runs: int, folder: Path, chunk_runs: int = CHUNK) -> dict:
    """Simulate ``runs`` in chunks into one sharded Dataset at ``folder``; return what it took."""
    shards = max(1, runs // RUNS_PER_SHARD)
    chunks = folder.parent / f"{folder.name}_chunks"
    start = time.perf_counter()
    parts = []
    for k, offset in enumerate(range(0, runs, chunk_runs)):
        size = min(chunk_runs, runs - offset)
        chunk = _prefixed(mas_eval.simulate(size, seed=k, **SHAPE), f"c{k:03d}-")
        parts.append(chunk.write(chunks / f"c{k:03d}", shards=shards, overwrite=True, validate=False))
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    manifest = json.loads((parts[0] / "_dataset.json").read_text())
    for name in manifest["tables"]:
        if not (parts[0] / name).is_dir():  # a table written whole (keyed by case)
            pl.concat([pl.scan_parquet(p / f"{name}.parquet") for p in parts]).sink_parquet(folder / f"{name}.parquet")
            continue
        for index in range(shards):
            files = [p / name / f"{SHARD_COLUMN}={index}" / PART for p in parts]
            target = folder / name / f"{SHARD_COLUMN}={index}" / PART
            target.parent.mkdir(parents=True)
            pl.concat([pl.scan_parquet(f, hive_partitioning=False) for f in files]).sink_parquet(target)
    # The chunks' stored codes number each chunk's runs from 0: the joined shards get their own.
    manifest.pop("codes", None)
    codes = write_codes(folder, manifest["tables"], shards)
    if codes is not None:
        manifest["codes"] = codes
    (folder / "_dataset.json").write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(chunks)
    return {"shards": shards, "simulate_and_write_seconds": round(time.perf_counter() - start, 1)}


# -- what the fresh processes run ------------------------------------------------------------


def _peak_with_workers_gb() -> float:
    """The larger of this process's peak and its largest worker's (workers inherit this process's
    ``ru_maxrss`` at their start, which is small: the simulation runs in its own process)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # Linux: KiB
    return max(peak_rss_gb(), children)


def plain_read(folder: str) -> dict:
    ds = Dataset.open(folder)
    start = time.perf_counter()
    rows = 0
    for index in range(ds.shards):
        shard = ds.shard(index)
        rows += sum(shard[name].collect().height for name in shard.table_names)
    return {"seconds": time.perf_counter() - start, "rows": rows, "peak_rss_gb": peak_rss_gb()}


def score_to_folder(folder: str, out: str, workers: str) -> dict:
    ds = Dataset.open(folder)
    start = time.perf_counter()
    score_shards(ds, out, workers=int(workers), overwrite=True)
    return {"seconds": time.perf_counter() - start, "peak_rss_gb": _peak_with_workers_gb()}


def score_in_memory(folder: str) -> dict:
    ds = Dataset.open(folder)
    start = time.perf_counter()
    scores = mas_eval.score(ds)
    return {"seconds": time.perf_counter() - start, "peak_rss_gb": peak_rss_gb(), "runs": scores.runs.height}


#: The metrics compared (per task, MAS against the single agent) on the 2-worker Scores folder.
COMPARED = ["dqs", "decision_confidence", "consensus_level", "efficiency_score"]


def compare_scores(out: str, test: str) -> dict:
    """``compare`` of the Scores folder's runs, read lazily as ``mas-eval compare`` reads them."""
    from mas_eval import Scores
    from mas_eval.stats import compare

    start = time.perf_counter()
    paired = {"pair_on": "case_id"} if test == "paired" else {}
    table = compare(Scores.scan(out, "runs"), COMPARED, by="task", test=test, **paired)  # type: ignore[arg-type]
    return {"seconds": time.perf_counter() - start, "rows": table.height, "peak_rss_gb": peak_rss_gb()}


def simulate(runs: str, folder: str, chunk_runs: str) -> dict:
    return simulate_sharded(int(runs), Path(folder), int(chunk_runs))


MODES = {
    "simulate": simulate,
    "plain_read": plain_read,
    "score_to_folder": score_to_folder,
    "score_in_memory": score_in_memory,
    "compare_scores": compare_scores,
}


# -- the benchmark -----------------------------------------------------------------------------


def _measured(runs: int, repeats: int, mode: str, *args: str) -> dict:
    results = [run_fresh(__file__, "--mode", mode, *args) for _ in range(repeats)]
    seconds = statistics.median(r["seconds"] for r in results)
    return {
        "seconds": round(seconds, 2),
        "seconds_each": [round(r["seconds"], 2) for r in results],
        "runs_per_second": round(runs / seconds),
        "peak_rss_gb": round(max(r["peak_rss_gb"] for r in results), 2),
    }


def bench(runs: int, workdir: Path, repeats: int, chunk_runs: int) -> dict:
    folder = workdir / f"scale_{runs}"
    # In its own process, so that this one stays small: the measured processes start from it.
    row: dict = {"runs": runs, **run_fresh(__file__, "--mode", "simulate", str(runs), str(folder), str(chunk_runs))}
    out = str(workdir / f"scores_{runs}")
    row["plain_read"] = _measured(runs, repeats, "plain_read", str(folder))
    row["score_1_process"] = _measured(runs, repeats, "score_to_folder", str(folder), out, "1")
    row["score_2_workers"] = _measured(runs, repeats, "score_to_folder", str(folder), out, "2")
    for test in ("welch", "paired"):
        row[f"compare_{test}"] = _measured(runs, repeats, "compare_scores", out, test)
    if runs <= CHUNK:
        row["score_in_memory"] = _measured(runs, repeats, "score_in_memory", str(folder))
    for mode in ("score_1_process", "score_2_workers"):
        row[mode]["times_plain_read"] = round(row[mode]["seconds"] / row["plain_read"]["seconds"], 1)
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3, help="measurements per size up to --repeat-below")
    parser.add_argument("--repeat-below", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--chunk-runs", type=int, default=CHUNK, help="runs simulated at a time")
    parser.add_argument("--mode", choices=sorted(MODES), help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.mode:  # a fresh process measuring one thing
        print(json.dumps(MODES[args.mode](*rest)))
        return
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        results = []
        for runs in args.runs:
            repeats = args.repeats if runs <= args.repeat_below else 1
            results.append(bench(runs, Path(tmp), repeats, args.chunk_runs))
            print(json.dumps(results[-1]), flush=True)
    # Sizes not measured this time keep their earlier rows (and machine facts are this run's).
    if OUT.is_file():
        measured = {r["runs"] for r in results}
        earlier = [r for r in json.loads(OUT.read_text()).get("results", []) if r["runs"] not in measured]
        results = sorted([*earlier, *results], key=lambda r: r["runs"])
    report = {"benchmark": "scale", **environment(shape=SHAPE, runs_per_shard=RUNS_PER_SHARD), "results": results}
    by_size = {r["runs"]: r for r in results}
    if 1_000_000 in by_size and 10_000_000 in by_size:
        for mode in ("score_1_process", "score_2_workers"):
            small, large = by_size[1_000_000][mode], by_size[10_000_000][mode]
            ratio = small["runs_per_second"] / large["runs_per_second"]
            report[f"{mode}_runs_per_second_1m_over_10m"] = round(ratio, 2)
    write_json(OUT, report)


if __name__ == "__main__":
    main()
