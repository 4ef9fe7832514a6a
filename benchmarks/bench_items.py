"""Benchmark of the answers family: score a million simulated answer pairs, and the per-item oracle for comparison.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_items.py                      # 1,000,000 answers
    .venv/bin/python benchmarks/bench_items.py --answers 20000      # a smoke check
    .venv/bin/python benchmarks/bench_items.py --data /tmp/items    # keep (or reuse) the Dataset folder

The answers are simulated with :func:`mas_eval.simulation.answers.simulate_answers` (seed 1;
``--items`` items per case, every text ~300 characters: prediction, rationale, reference and
reference rationale, plus a reference diagnosis), written to Parquet, then
``mas_eval.score(Dataset.open(folder))`` runs in a fresh process so that its peak RSS is the
scoring's own; the median of ``--repeats`` such runs is reported. The plain-Python oracle
(``tests/oracles/answers.py``, one answer at a time) is timed on a random sample of
``--oracle-answers`` answers of the same data, its time per answer extrapolated to all of them,
and its values checked against what ``score`` wrote for those answers. Results go to
``reports/benchmarks/items.json``. When ``score`` produces no ``items`` table the script says so
and exits with status 2, writing nothing.
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
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, peak_rss_gb, run_fresh, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

import mas_eval  # noqa: E402
from mas_eval import Dataset  # noqa: E402
from mas_eval.simulation.answers import simulate_answers  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "items.json"
SEED = 1
TEXTS = ("prediction", "rationale", "reference", "reference_rationale", "reference_diagnosis")
TARGETS = {"score_seconds": 25, "peak_rss_gb": 6}
CHECKED = (
    "clinical_accuracy",
    "reasoning_quality",
    "token_f1",
    "structure",
    "evidence",
    "factual_consistency",
    "fallacy_penalty",
)
SAMPLE_FILE = "_oracle_sample.parquet"


# -- the scoring, in a fresh process ---------------------------------------------------------------------


def score_in_this_process(folder: str, sample: str | None) -> dict[str, Any]:
    """Score the Dataset at ``folder``; overwrite ``sample`` with the items rows of the answers it lists."""
    ds = Dataset.open(folder)
    start = time.perf_counter()
    scores = mas_eval.score(ds)
    seconds = time.perf_counter() - start
    out = {
        "seconds": seconds,
        "peak_rss_gb": peak_rss_gb(),
        "tables": {name: frame.height for name, frame in scores.tables.items()},
        "ran": list(scores.ran),
        "skipped": dict(scores.skipped),
        "has_items": "items" in scores.tables,
    }
    if sample and out["has_items"]:
        wanted = pl.read_parquet(sample).select("run_id", "item_id")
        scores["items"].join(wanted, on=["run_id", "item_id"]).select("run_id", "item_id", *CHECKED).write_parquet(
            sample
        )
    return out


def _score_in_fresh_process(folder: Path, sample: Path | None) -> dict[str, Any]:
    return run_fresh(__file__, "--score-only", str(folder), *(["--sample", str(sample)] if sample is not None else []))


# -- the oracle -------------------------------------------------------------------------------------------


def time_oracle(answers: list[dict[str, Any]]) -> tuple[dict[str, Any], pl.DataFrame]:
    """Seconds the per-answer oracle takes on ``answers`` (compiling its vocabulary is not timed), and its rows."""
    from mas_eval.metrics.answers import answer_synonyms, fact_table, lexicon_table, marker_table
    from tests.oracles import answers as oracle

    vocabulary = oracle.compile_vocabulary(
        answer_synonyms().rows(), lexicon_table().rows(), marker_table().rows(), fact_table().rows()
    )
    rows = []
    start = time.perf_counter()
    for answer in answers:  # the oracle is per answer by design: this loop is what is being timed
        rows.append(oracle.score_item(answer, vocabulary))
    seconds = time.perf_counter() - start
    keys = [{"run_id": a["run_id"], "item_id": a["item_id"]} for a in answers]
    frame = pl.DataFrame([k | {c: row[c] for c in CHECKED} for k, row in zip(keys, rows, strict=True)])
    timing = {"answers": len(answers), "seconds": round(seconds, 3), "seconds_per_answer": seconds / len(answers)}
    return timing, frame


def _disagreements(oracle: pl.DataFrame, scored: pl.DataFrame) -> dict[str, int]:
    """Per checked column, the sampled answers whose oracle value differs from the scored one by more than 1e-12."""
    joined = oracle.join(scored, on=["run_id", "item_id"], suffix="_scored", how="left")
    out = {}
    for name in CHECKED:
        a, b = pl.col(name).cast(pl.Float64), pl.col(f"{name}_scored").cast(pl.Float64)
        differ = (a.is_null() != b.is_null()) | ((a - b).abs() > 1e-12)
        out[name] = int(joined.select(differ.fill_null(False).sum()).item())
    return out


# -- the benchmark ----------------------------------------------------------------------------------------


def _simulate(runs: int, items: int, folder: Path) -> dict[str, Any]:
    start = time.perf_counter()
    ds = simulate_answers(runs, seed=SEED, items=(items, items), answer_chars=300)
    generate = time.perf_counter() - start
    start = time.perf_counter()
    ds.write(folder, overwrite=True, validate=False)
    write = time.perf_counter() - start
    return {"generate_seconds": round(generate, 2), "write_seconds": round(write, 2)}


def _data_facts(folder: Path) -> dict[str, Any]:
    answers = pl.scan_parquet(folder / "answers.parquet")
    chars = answers.select(
        *(pl.col(c).str.len_chars().mean().round(1).alias(c) for c in TEXTS),
        text_mb=pl.sum_horizontal(pl.col(c).str.len_bytes() for c in TEXTS).sum() / 1e6,
        answers=pl.len(),
    ).collect()
    facts = chars.row(0, named=True)
    return {
        "answers": facts.pop("answers"),
        "text_mb": round(facts.pop("text_mb"), 1),
        "mean_chars": facts,
        "parquet_mb": round(sum(f.stat().st_size for f in folder.glob("*.parquet")) / 1e6, 1),
    }


def bench(answers: int, items: int, folder: Path, *, oracle_answers: int, repeats: int, reuse: bool) -> dict[str, Any]:
    runs = -(-answers // items)
    row: dict[str, Any] = {"seed": SEED, "runs": runs, "items_per_case": items, "answer_chars": 300}
    if reuse and (folder / "answers.parquet").is_file():
        print(f"reusing the Dataset at {folder}", flush=True)
        row["simulate"] = None
    else:
        print(f"simulating {runs:,} runs x {items} items into {folder} ...", flush=True)
        row["simulate"] = _simulate(runs, items, folder)
        print(f"  {row['simulate']}", flush=True)
    row.update(_data_facts(folder))
    if row["answers"] != runs * items:
        sys.exit(f"bench_items: {folder} holds {row['answers']:,} answers, not {runs * items:,}; pass another --data")

    keys = pl.scan_parquet(folder / "answers.parquet").select("run_id", "item_id").collect()
    picked = sorted(random.Random(SEED).sample(range(keys.height), min(oracle_answers, keys.height)))
    sample_file = folder / SAMPLE_FILE
    keys[picked].write_parquet(sample_file)
    scored = []
    for i in range(repeats):
        print(f"scoring in a fresh process ({i + 1}/{repeats}) ...", flush=True)
        scored.append(_score_in_fresh_process(folder, sample_file if i == 0 else None))
        print(f"  {scored[-1]['seconds']:.1f} s, peak RSS {scored[-1]['peak_rss_gb']:.2f} GB", flush=True)
        if not scored[-1]["has_items"]:
            sys.exit(
                "bench_items: score() produced no 'items' table, so the answers family did not run "
                f"(families run: {scored[-1]['ran']}; skipped: {scored[-1]['skipped'] or 'none'}); nothing was written"
            )
    seconds = statistics.median(s["seconds"] for s in scored)
    row.update(
        {
            "score_seconds": round(seconds, 2),
            "score_seconds_each": [round(s["seconds"], 2) for s in scored],
            "answers_per_second": round(row["answers"] / seconds),
            "peak_rss_gb": round(max(s["peak_rss_gb"] for s in scored), 2),
            "families_ran": scored[0]["ran"],
            "output_rows": scored[0]["tables"],
        }
    )
    row["meets_targets"] = {
        "score_seconds": row["score_seconds"] <= TARGETS["score_seconds"],
        "peak_rss_gb": row["peak_rss_gb"] <= TARGETS["peak_rss_gb"],
    }

    wanted = pl.read_parquet(sample_file).select("run_id", "item_id")  # now the scored rows
    texts = pl.scan_parquet(folder / "answers.parquet").join(wanted.lazy(), on=["run_id", "item_id"]).collect()
    print(f"timing the oracle on {texts.height:,} answers ...", flush=True)
    timing, oracle = time_oracle(texts.select("run_id", "item_id", *TEXTS).to_dicts())
    extrapolated = timing["seconds_per_answer"] * row["answers"]
    row["oracle"] = {
        **timing,
        "extrapolated_seconds": round(extrapolated, 1),
        "answers_per_second": round(1 / timing["seconds_per_answer"]),
        "disagreements": _disagreements(oracle, pl.read_parquet(sample_file)),
    }
    row["speedup_vs_oracle"] = round(extrapolated / seconds, 1)
    sample_file.unlink()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=1_000_000, help="answer pairs in all (default 1,000,000)")
    parser.add_argument("--items", type=int, default=50, help="items per case, so runs = answers / items (50)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh-process scorings; the median is reported (3)")
    parser.add_argument("--oracle-answers", type=int, default=5000, help="answers the oracle is timed on (5,000)")
    parser.add_argument("--data", type=Path, help="the Dataset folder to write, or reuse when it holds one")
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON results file")
    parser.add_argument("--score-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sample", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.score_only is not None:
        print(json.dumps(score_in_this_process(str(args.score_only), str(args.sample) if args.sample else None)))
        return
    if args.answers < 2 or args.items < 1 or args.repeats < 1 or args.oracle_answers < 1:
        parser.error("--answers must be >= 2 and --items, --repeats, --oracle-answers >= 1")
    with tempfile.TemporaryDirectory(prefix="bench_items_") as scratch:
        folder = args.data or Path(scratch) / "answers"
        result = bench(
            args.answers,
            args.items,
            folder,
            oracle_answers=args.oracle_answers,
            repeats=args.repeats,
            reuse=args.data is not None,
        )
    report = {
        "benchmark": "items",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "environment": environment(),
        "targets": TARGETS,
        "result": result,
    }
    print(json.dumps(result, indent=2))
    write_json(args.out, report)


if __name__ == "__main__":
    main()
