"""Benchmark of the diagnosis family: score N simulated Local-DDx runs, and the per-run oracles for comparison.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_ddx.py                  # 20,000 runs
    .venv/bin/python benchmarks/bench_ddx.py --runs 500       # a smoke check
    .venv/bin/python benchmarks/bench_ddx.py --data /tmp/ddx  # keep (or reuse) the Dataset folder

The runs are simulated with :func:`mas_eval.simulation.diagnosis.simulate_diagnosis` (seed 1;
MAS teams of 9 agents, 7 rounds, 30 responses of ~1,500 characters; single-agent runs have one
agent and two responses), written to Parquet, then ``mas_eval.score(Dataset.open(folder))``
runs in a fresh process, so that its peak RSS is the scoring's own; the median of
``--repeats`` such runs is reported. The plain-Python oracles (``tests/oracles/labels.py``,
``collaboration.py`` and ``diagnosis.py``, one run at a time) are timed on a random sample
of ``--oracle-runs`` runs of the same data, their time per run extrapolated to all runs, and
their counts and recall checked against what ``score`` wrote for those runs. Results go to
``reports/benchmarks/ddx.json``. When ``score`` produces no ``labels`` table (the diagnosis
family is not wired in), the script says so and exits with status 2, writing nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, peak_rss_gb, run_fresh, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

import mas_eval  # noqa: E402
from mas_eval import Dataset  # noqa: E402
from mas_eval.data.vocabulary import CANT_MISS, DEBATE, FINAL_ROUND, INDEPENDENT, VOTING  # noqa: E402
from mas_eval.simulation.diagnosis import simulate_diagnosis  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "ddx.json"
SEED = 1
SHAPE = {"agents": (9, 9), "rounds": 7, "responses": 30, "response_chars": 1500}
TARGETS = {"score_seconds": 60, "peak_rss_gb": 6}
COUNTS = ("tp", "fp", "fn", "caa", "ae", "tm_sm")
CHECKED = (*COUNTS, "traditional_recall")
SAMPLE_FILE = "_oracle_sample.parquet"


# -- the scoring, in a fresh process ---------------------------------------------------------------------


def score_in_this_process(folder: str, sample: str | None) -> dict[str, Any]:
    """Score the Dataset at ``folder``; write the run rows of the runs listed in ``sample`` beside it."""
    ds = Dataset.open(folder)
    start = time.perf_counter()
    scores = mas_eval.score(ds)
    seconds = time.perf_counter() - start
    out = {
        "seconds": seconds,
        "peak_rss_gb": peak_rss_gb(),
        "runs": scores.runs.height,
        "tables": {name: frame.height for name, frame in scores.tables.items()},
        "ran": list(scores.ran),
        "skipped": dict(scores.skipped),
        "has_labels": "labels" in scores.tables,
    }
    if sample and out["has_labels"]:
        wanted = pl.read_parquet(sample)["run_id"]
        present = [c for c in CHECKED if c in scores.runs.columns]
        scores.runs.filter(pl.col("run_id").is_in(wanted.implode())).select("run_id", *present).write_parquet(sample)
    return out


def _score_in_fresh_process(folder: Path, sample: Path | None) -> dict[str, Any]:
    return run_fresh(__file__, "--score-only", str(folder), *(["--sample", str(sample)] if sample is not None else []))


# -- the oracles ------------------------------------------------------------------------------------------


def _oracle_inputs(folder: Path, run_ids: list[str], count_mentions: bool) -> list[dict[str, Any]]:
    """Each sampled run as the oracles' plain-Python inputs (building them is not timed)."""
    from tests.oracles.labels import Run

    ds = Dataset.open(folder)
    keep = pl.col("run_id").is_in(pl.Series(run_ids).implode())
    runs = ds["runs"].filter(keep).select("run_id", "case_id").collect()
    ddx = ds["ddx"].filter(keep).sort("run_id", "round", "agent_id", "rank").collect()
    messages = ds["messages"].filter(keep).sort("run_id", "round", "turn").collect()
    interventions = ds["interventions"].filter(keep).collect()
    truth = ds["ground_truth"].filter(pl.col("case_id").is_in(runs["case_id"].implode())).collect()
    truth_of: dict[str, list[str]] = defaultdict(list)
    for case_id, diagnosis in truth.iter_rows():
        truth_of[case_id].append(diagnosis)
    inputs = {
        run_id: {
            "run_id": run_id,
            "run": Run(final=[], truth=list(truth_of[case_id])),
            "messages": [],
            "mentions": [],
            "structured": defaultdict(list),
            "rankings": defaultdict(list),
        }
        for run_id, case_id in runs.iter_rows()
    }
    for r in ddx.iter_rows(named=True):
        one, run = inputs[r["run_id"]], inputs[r["run_id"]]["run"]
        if r["round"] == FINAL_ROUND and r["stance"] == "final":
            run.final.append(r["diagnosis"])
        elif r["round"] == CANT_MISS and r["stance"] == "critical":
            run.critical.append((r["agent_id"], r["diagnosis"], r["mentions"], r["evidence"], r["rank"]))
        elif r["round"] == DEBATE and r["stance"] == "excluded":
            run.excluded.append(r["diagnosis"])
        elif r["round"] == VOTING:
            one["rankings"][r["agent_id"]].append(r["diagnosis"])
        if r["round"] == INDEPENDENT:
            one["mentions"] += [r["diagnosis"]] * ((r["mentions"] or 1) if count_mentions else 1)
            if r["evidence"] is not None:
                one["structured"][(r["round"], r["agent_id"])].append((r["diagnosis"], r["evidence"]))
    for r in messages.iter_rows(named=True):
        inputs[r["run_id"]]["messages"].append((r["round"], r["agent_id"], r["text"]))
        if r["round"] == DEBATE:
            inputs[r["run_id"]]["run"].debate.append(r["text"])
    for run_id, text in interventions.iter_rows():
        inputs[run_id]["run"].interventions.append(text)
    return list(inputs.values())


def time_oracles(folder: Path, run_ids: list[str], params: dict[str, Any]) -> tuple[dict[str, Any], pl.DataFrame]:
    """Seconds the three oracles take on the sampled runs, and their counts and recall per run."""
    from mas_eval.metrics.diagnosis.labels import DEFAULT_PATTERNS, LDDX_V6_PATTERNS, intervention_keywords
    from tests.oracles import collaboration, diagnosis, labels
    from tests.oracles import equivalence as eq

    preset = params["label_rules"]
    synonyms = eq.resolve(eq.read_synonyms())
    patterns = DEFAULT_PATTERNS if preset == "spec" else LDDX_V6_PATTERNS
    table = intervention_keywords().rows()
    inputs = _oracle_inputs(folder, run_ids, params["tempo_count_mentions"])
    seconds = {"labels": 0.0, "collaboration": 0.0, "diagnosis": 0.0}
    rows = []
    for one in inputs:
        start = time.perf_counter()
        found = labels.labels(
            one["run"],
            preset=preset,
            synonyms=synonyms,
            patterns=patterns,
            table=table,
            threshold=params["equivalence_threshold"],
            caa_mentions=params["caa_mentions"],
        )
        counts = {name: 0 for name in COUNTS}
        for side, _, label, *_ in found:
            if label != "TP" or side == "ground_truth":
                counts[label.lower().replace("-", "_")] += 1
        middle = time.perf_counter()
        scores = diagnosis.scores(*(counts[name] for name in COUNTS), preset=preset)
        after = time.perf_counter()
        collaboration.tempo(
            one["messages"],
            one["mentions"],
            independent=INDEPENDENT,
            debate=DEBATE,
            count_mentions=params["tempo_count_mentions"],
        )
        weights = collaboration.credibility(
            one["messages"], one["structured"], structured_round=INDEPENDENT, counting=params["keyword_counting"]
        )
        collaboration.vote(one["rankings"], weights, params["vote_keep_share"], params["vote_at_most"])
        end = time.perf_counter()
        seconds["labels"] += middle - start
        seconds["diagnosis"] += after - middle
        seconds["collaboration"] += end - after
        rows.append({"run_id": one["run_id"], **counts, "traditional_recall": scores["traditional_recall"]})
    total = sum(seconds.values())
    timing = {
        "runs": len(inputs),
        "seconds": round(total, 3),
        "seconds_per_run": total / len(inputs),
        "seconds_by_oracle": {name: round(value, 3) for name, value in seconds.items()},
    }
    return timing, pl.DataFrame(rows)


def _disagreements(oracle: pl.DataFrame, scored: pl.DataFrame) -> dict[str, int]:
    """Per checked column, the sampled runs whose oracle value differs from the scored one."""
    joined = oracle.join(scored, on="run_id", suffix="_scored")
    out = {}
    for name in CHECKED:
        if f"{name}_scored" not in joined.columns:
            continue
        a, b = pl.col(name).cast(pl.Float64), pl.col(f"{name}_scored").cast(pl.Float64)
        differ = (a.is_null() != b.is_null()) | ((a - b).abs() > 1e-9)
        out[name] = int(joined.select(differ.fill_null(False).sum()).item())
    return out


# -- the benchmark ----------------------------------------------------------------------------------------


def _simulate(n: int, folder: Path, mas_share: float) -> dict[str, Any]:
    start = time.perf_counter()
    ds = simulate_diagnosis(n, seed=SEED, mas_share=mas_share, **SHAPE)  # type: ignore[arg-type]
    generate = time.perf_counter() - start
    start = time.perf_counter()
    ds.write(folder, overwrite=True, validate=False)
    write = time.perf_counter() - start
    return {
        "generate_seconds": round(generate, 2),
        "write_seconds": round(write, 2),
        "peak_rss_gb": round(peak_rss_gb(), 2),
    }


def _data_facts(folder: Path) -> dict[str, Any]:
    messages = pl.scan_parquet(folder / "messages.parquet")
    text = messages.select(pl.col("text").str.len_bytes().sum()).collect().item()
    rows = {f.stem: pl.scan_parquet(f).select(pl.len()).collect().item() for f in sorted(folder.glob("*.parquet"))}
    return {
        "rows": rows,
        "text_mb": round(text / 1e6, 1),
        "parquet_mb": round(sum(f.stat().st_size for f in folder.glob("*.parquet")) / 1e6, 1),
    }


def bench(n: int, folder: Path, *, oracle_runs: int, repeats: int, mas_share: float, reuse: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"runs": n, "seed": SEED, "mas_share": mas_share, **SHAPE}
    if reuse and (folder / "messages.parquet").is_file():
        print(f"reusing the Dataset at {folder}", flush=True)
        row["simulate"] = None
    else:
        print(f"simulating {n:,} runs into {folder} ...", flush=True)
        row["simulate"] = _simulate(n, folder, mas_share)
        print(f"  {row['simulate']}", flush=True)
    row.update(_data_facts(folder))
    if row["rows"]["runs"] != n:
        sys.exit(f"bench_ddx: {folder} holds {row['rows']['runs']:,} runs, not {n:,}; pass another --data folder")

    all_ids = pl.scan_parquet(folder / "runs.parquet").select("run_id").collect()["run_id"].to_list()
    sample = sorted(random.Random(SEED).sample(all_ids, min(oracle_runs, len(all_ids))))
    sample_file = folder / SAMPLE_FILE
    pl.DataFrame({"run_id": sample}).write_parquet(sample_file)
    scored = []
    for i in range(repeats):
        print(f"scoring in a fresh process ({i + 1}/{repeats}) ...", flush=True)
        scored.append(_score_in_fresh_process(folder, sample_file if i == 0 else None))
        print(f"  {scored[-1]['seconds']:.1f} s, peak RSS {scored[-1]['peak_rss_gb']:.2f} GB", flush=True)
        if not scored[-1]["has_labels"]:
            skipped = scored[-1]["skipped"]
            sys.exit(
                "bench_ddx: score() produced no 'labels' table, so the diagnosis family did not run "
                f"(families run: {scored[-1]['ran']}; skipped: {skipped or 'none'}): wire it into score() first; "
                "nothing was written"
            )
    seconds = statistics.median(s["seconds"] for s in scored)
    row.update(
        {
            "score_seconds": round(seconds, 2),
            "score_seconds_each": [round(s["seconds"], 2) for s in scored],
            "runs_per_second": round(n / seconds),
            "peak_rss_gb": round(max(s["peak_rss_gb"] for s in scored), 2),
            "families_ran": scored[0]["ran"],
            "output_rows": scored[0]["tables"],
        }
    )
    row["meets_targets"] = {
        "score_seconds": row["score_seconds"] <= TARGETS["score_seconds"],
        "peak_rss_gb": row["peak_rss_gb"] <= TARGETS["peak_rss_gb"],
    }

    from mas_eval.metrics.diagnosis.params import DiagnosisParams

    params = DiagnosisParams().as_dict()
    print(f"timing the oracles on {len(sample)} runs ...", flush=True)
    timing, oracle = time_oracles(folder, sample, params)
    extrapolated = timing["seconds_per_run"] * n
    row["oracle"] = {
        **timing,
        "seconds_per_run": round(timing["seconds_per_run"], 5),
        "label_rules": params["label_rules"],
        "extrapolated_seconds": round(extrapolated, 1),
        "disagreements_with_score": _disagreements(oracle, pl.read_parquet(sample_file)),
    }
    row["speedup_vs_oracle"] = round(extrapolated / seconds, 1)
    sample_file.unlink()
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20_000, help="runs to simulate and score (default 20,000)")
    parser.add_argument("--oracle-runs", type=int, default=300, help="runs the oracles are timed on (default 300)")
    parser.add_argument("--repeats", type=int, default=1, help="fresh-process scorings (median; default 1)")
    # A single-agent run has 2 messages, a MAS run 30: at 0.95 the 20,000 runs hold about 870 MB of
    # text, the "~30 responses of ~1,500 characters, about 900 MB".
    parser.add_argument("--mas-share", type=float, default=0.95, help="share of MAS runs (default 0.95)")
    parser.add_argument("--data", type=Path, help="Dataset folder to write and keep (reused when it exists)")
    parser.add_argument("--output", type=Path, default=OUT, help=f"JSON result file (default {OUT.relative_to(ROOT)})")
    parser.add_argument("--score-only", help=argparse.SUPPRESS)
    parser.add_argument("--sample", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.score_only:
        print(json.dumps(score_in_this_process(args.score_only, args.sample)))
        return

    options = {"oracle_runs": args.oracle_runs, "repeats": args.repeats, "mas_share": args.mas_share}
    if args.data is not None:
        row = bench(args.runs, args.data, reuse=True, **options)
    else:
        with tempfile.TemporaryDirectory(prefix="mas_eval_bench_ddx_") as tmp:
            row = bench(args.runs, Path(tmp) / "ddx", reuse=False, **options)
    report = {
        "benchmark": "diagnosis family (mas_eval.score) on simulated Local-DDx runs",
        "targets": TARGETS,
        "environment": environment(numpy=np.__version__),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "result": row,
    }
    write_json(args.output, report)
    oracle = row["oracle"]
    print(
        f"score {row['runs']:,} runs ({row['text_mb']:,.0f} MB of text): {row['score_seconds']:.1f} s "
        f"({row['runs_per_second']:,} runs/s), peak RSS {row['peak_rss_gb']:.2f} GB; oracles "
        f"{oracle['seconds_per_run'] * 1e3:.1f} ms/run -> {oracle['extrapolated_seconds']:,.0f} s, "
        f"{row['speedup_vs_oracle']}x; disagreements {oracle['disagreements_with_score']} -> {args.output}"
    )


if __name__ == "__main__":
    main()
