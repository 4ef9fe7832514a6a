"""Benchmark of the decision suite: score N simulated runs, and the per-run oracle for comparison.

Usage::

    python benchmarks/bench_decision.py                    # 1,000,000 and 100,000 runs
    python benchmarks/bench_decision.py --runs 200000      # one size
    python benchmarks/bench_decision.py --oracle-runs 5000 # oracle sample size
    python benchmarks/bench_decision.py --in-memory-vs-bulk --runs 1000000   # score(ds) against score_shards(ds, out)

Each size is simulated with 5 agents, 4 alternatives and 3 criteria per run (seed 1),
written to Parquet, then scored from Parquet in a fresh process so that its peak RSS is
the scoring's own; the median of ``--repeats`` such runs is reported. The oracle
(``tests/oracles/decision.py``, plain Python per run) is timed on the first
``--oracle-runs`` runs of the 100,000-run dataset; its runs/s is the rate the vectorised
code is compared with. Results go to ``reports/benchmarks/decision.json``.

``--in-memory-vs-bulk`` measures instead, on each size written in ``--shards`` shards, what a
notebook's ``score(ds)`` takes (the shards scored in worker processes, one per core, their
tables gathered here) against the bulk path ``score_shards(ds, out, workers=--workers)``, in
interleaved fresh processes, each with the peak of its whole process tree (this process and
its workers, sampled every 50 ms from ``/proc``). Results go to
``reports/benchmarks/decision_in_memory.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

import mas_eval  # noqa: E402
from benchmarks.machine import environment, peak_rss_gb, write_json  # noqa: E402
from mas_eval import Dataset  # noqa: E402
from mas_eval.scoring.shards import score_shards  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "decision.json"
IN_MEMORY_OUT = ROOT / "reports" / "benchmarks" / "decision_in_memory.json"
SHAPE = {"agents": (5, 5), "alternatives": (4, 4), "criteria": (3, 3)}


def score_in_this_process(folder: str) -> dict:
    ds = Dataset.open(folder)
    start = time.perf_counter()
    scores = mas_eval.score(ds)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_rss_gb": peak_rss_gb(), "runs": scores.runs.height}


class TreePeak:
    """The largest sum of resident memory of this process and its descendants, sampled every 50 ms
    from ``/proc`` (Linux): the peak of a parent and its workers together, which neither's own
    peak says.

    Each sample reads ``/proc/PID/stat`` of the processes of the tree, which is looked for among
    all processes every tenth sample: reading every process's ``stat`` and ``status`` every 20 ms
    took a third of a core, on a machine of 2, from what it measured.
    """

    PAGE = os.sysconf("SC_PAGE_SIZE")
    EVERY = 0.05

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreePeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @staticmethod
    def _stat(pid: int | str) -> tuple[int, int] | None:
        """A process's parent and resident pages, from ``/proc/PID/stat`` (fields 4 and 24, proc(5))."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = stat[stat.rindex(")") + 2 :].split()
        return int(fields[1]), int(fields[21])

    def _tree(self) -> set[int]:
        parents = {int(e): found[0] for e in os.listdir("/proc") if e.isdigit() and (found := self._stat(e))}
        tree, todo = {os.getpid()}, [os.getpid()]
        while todo:
            parent = todo.pop()
            for pid, ppid in parents.items():
                if ppid == parent and pid not in tree:
                    tree.add(pid)
                    todo.append(pid)
        return tree

    def _sample(self) -> None:
        tree: set[int] = set()
        for count in itertools.count():
            if count % 10 == 0:  # the tree's members looked for again twice a second
                tree = self._tree()
            pages = sum(found[1] for pid in tree if (found := self._stat(pid)))
            self.peak = max(self.peak, pages * self.PAGE)
            if self._stop.wait(self.EVERY):
                return


def score_mode_in_this_process(folder: str, mode: str, workers: int) -> dict:
    ds = Dataset.open(folder)
    with TreePeak() as peak, tempfile.TemporaryDirectory(prefix="mas_eval_bench_") as tmp:
        start = time.perf_counter()
        if mode == "in-memory":
            runs = mas_eval.score(ds).runs.height
        else:
            out = score_shards(ds, Path(tmp) / "scores", workers=workers)
            runs = mas_eval.Scores.manifest(out)["rows"]["runs"]
        seconds = time.perf_counter() - start
    return {"mode": mode, "seconds": seconds, "tree_peak_gb": peak.peak / 2**30, "runs": runs}


def bench_in_memory_vs_bulk(n: int, workdir: Path, shards: int, workers: int, repeats: int) -> dict:
    folder = workdir / f"decision_{n}_{shards}"
    mas_eval.simulate(n, seed=1, **SHAPE).write(folder, overwrite=True, validate=False, shards=shards)
    measured: dict[str, list[dict]] = {"in-memory": [], "bulk": []}
    for _ in range(repeats):  # interleaved: a drift in the machine's speed hits both alike
        for mode in measured:
            done = subprocess.run(
                [sys.executable, __file__, "--score-mode", mode, str(folder), "--workers", str(workers)],
                capture_output=True,
                text=True,
                check=True,
            )
            measured[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    row: dict = {"runs": n, "shards": shards, "bulk_workers": workers, "in_memory_workers": "default (cores)"}
    for mode, runs in measured.items():
        row[mode] = {
            "seconds": round(statistics.median(r["seconds"] for r in runs), 2),
            "seconds_each": [round(r["seconds"], 2) for r in runs],
            "tree_peak_gb": round(max(r["tree_peak_gb"] for r in runs), 2),
        }
    ratios = [a["seconds"] / b["seconds"] for a, b in zip(measured["in-memory"], measured["bulk"], strict=True)]
    row["in_memory_over_bulk"] = round(statistics.median(ratios), 2)
    print(json.dumps(row), flush=True)
    return row


def _score_in_fresh_process(folder: Path) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--score-only", str(folder)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _oracle_runs(folder: Path, limit: int) -> list:
    """The first ``limit`` runs as oracle inputs (building them is not timed)."""
    from tests.oracles.decision import Run

    ds = Dataset.open(folder)
    run_ids = ds["runs"].select("run_id").sort("run_id").head(limit).collect()["run_id"]
    keep = pl.col("run_id").is_in(run_ids.implode())
    frames = {name: ds[name].filter(keep).collect() for name in ds.table_names}
    runs = {
        r["run_id"]: Run(run_id=r["run_id"], recommended=r["recommended"], correct=r["correct"],
                         confidence=r["confidence"], iterations=r["iterations"], api_calls=r["api_calls"],
                         seconds=r["seconds"], tokens=r["tokens"], cost_usd=r["cost_usd"])
        for r in frames["runs"].iter_rows(named=True)
    }  # fmt: skip
    for r in frames["agents"].iter_rows(named=True):
        runs[r["run_id"]].agent_confidence[r["agent_id"]] = r["confidence"]
        runs[r["run_id"]].agent_weight[r["agent_id"]] = r["weight"]
    for r in frames["beliefs"].iter_rows(named=True):
        runs[r["run_id"]].beliefs.setdefault(r["agent_id"], {})[r["alternative"]] = r["mass"]
    for r in frames["criteria"].iter_rows(named=True):
        runs[r["run_id"]].criteria[r["criterion"]] = {k: r[k] for k in ("weight", "kind", "scale")}
    for r in frames["scores"].iter_rows(named=True):
        runs[r["run_id"]].scores.setdefault(r["alternative"], {})[r["criterion"]] = r["score"]
    for r in frames["alt_scores"].iter_rows(named=True):
        runs[r["run_id"]].mcda[r["alternative"]] = r["mcda"]
        runs[r["run_id"]].final[r["alternative"]] = r["final"]
    return list(runs.values())


def time_oracle(folder: Path, limit: int) -> dict:
    from mas_eval.metrics.decision import DecisionParams
    from tests.oracles.decision import score_run

    runs = _oracle_runs(folder, limit)
    params = DecisionParams().as_dict()
    start = time.perf_counter()
    for run in runs:
        score_run(run, params)
    seconds = time.perf_counter() - start
    return {"runs": len(runs), "seconds": seconds, "runs_per_second": len(runs) / seconds}


def bench(n: int, workdir: Path, oracle_runs: int | None, repeats: int) -> dict:
    folder = workdir / f"decision_{n}"
    start = time.perf_counter()
    mas_eval.simulate(n, seed=1, **SHAPE).write(folder, overwrite=True, validate=False)
    simulate_seconds = time.perf_counter() - start
    # This machine's timings vary by +-10% from one run to the next: report the median of several.
    scored = [_score_in_fresh_process(folder) for _ in range(repeats)]
    seconds = statistics.median(s["seconds"] for s in scored)
    row = {
        "runs": n,
        "simulate_and_write_seconds": round(simulate_seconds, 2),
        "score_seconds": round(seconds, 2),
        "score_seconds_each": [round(s["seconds"], 2) for s in scored],
        "runs_per_second": round(n / seconds),
        "peak_rss_gb": round(max(s["peak_rss_gb"] for s in scored), 2),
    }
    if oracle_runs:
        oracle = time_oracle(folder, oracle_runs)
        row["oracle"] = {k: round(v, 2) if isinstance(v, float) else v for k, v in oracle.items()}
        row["speedup_vs_oracle"] = round(row["runs_per_second"] / oracle["runs_per_second"], 1)
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, nargs="*", default=[1_000_000, 100_000])
    parser.add_argument("--oracle-runs", type=int, default=10_000, help="oracle sample, from the 100k dataset")
    parser.add_argument("--repeats", type=int, default=3, help="fresh-process scorings per size (median)")
    parser.add_argument("--score-only", help=argparse.SUPPRESS)
    parser.add_argument("--in-memory-vs-bulk", action="store_true", help="score(ds) against score_shards(ds, out)")
    parser.add_argument("--shards", type=int, default=16, help="with --in-memory-vs-bulk: shards of the Dataset")
    parser.add_argument("--workers", type=int, default=2, help="with --in-memory-vs-bulk: the bulk path's workers")
    parser.add_argument("--score-mode", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.score_only:
        print(json.dumps(score_in_this_process(args.score_only)))
        return
    if args.score_mode:
        print(json.dumps(score_mode_in_this_process(args.score_mode[1], args.score_mode[0], args.workers)))
        return
    if args.in_memory_vs_bulk:
        with tempfile.TemporaryDirectory(prefix="mas_eval_bench_") as tmp:
            rows = [bench_in_memory_vs_bulk(n, Path(tmp), args.shards, args.workers, args.repeats) for n in args.runs]
        report = {
            "benchmark": "score(ds) in memory (shards in worker processes) vs score_shards(ds, out, workers=K)",
            "targets": {"in memory over bulk": 1.3},
            "machine": environment(),
            "results": rows,
        }
        write_json(IN_MEMORY_OUT, report)
        return
    with tempfile.TemporaryDirectory(prefix="mas_eval_bench_") as tmp:
        rows = [bench(n, Path(tmp), args.oracle_runs if n == 100_000 else None, args.repeats) for n in args.runs]
    report = {
        "benchmark": "decision suite (mas_eval.score), 5 agents x 4 alternatives x 3 criteria per run",
        "targets": {"1M runs seconds": 30, "1M runs peak RSS GB": 4, "speedup vs oracle at 100k": 10},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "polars": pl.__version__},
        "mas_eval_version": mas_eval.__version__,
        "results": rows,
    }
    write_json(OUT, report)


if __name__ == "__main__":
    main()
