"""MedAISure's own clinical-accuracy and reasoning-quality code beside ``score(ds, preset="medaisure")``.

Usage (from the repository root; MedAISure is not shipped, fetch its ``clinical.py`` first)::

    .venv/bin/python benchmarks/bench_medaisure.py --clinical /tmp/medaisure/clinical.py
    .venv/bin/python benchmarks/bench_medaisure.py --clinical ~/src/MedAISure --pairs 20000

``--clinical`` is MedAISure's ``bench/evaluation/metrics/clinical.py`` with its ``base.py``
beside it (the only module it imports), or the folder of a MedAISure checkout. Without them
the script says so in one line and exits with status 2.

The pairs are simulated by :func:`mas_eval.simulation.answers.simulate_answers` (seed
``--seed``, ``--items`` items per case, ~300 characters a text): clinical entities, reasoning
steps built of MedAISure's markers and facts, fallacy phrases and filler, so both sides see
the text they were written for. A case's reference texts repeat across the runs that answer it,
as they do in a benchmark.

What is timed, each side once per repeat, the median of ``--repeats`` reported:

* **MedAISure**: ``ClinicalAccuracyMetric().calculate(expected, model)`` and
  ``ReasoningQualityMetric().calculate(expected, model)`` over all pairs, as its runner calls
  them (lists of dicts, ``expected = {"answer", "rationale", "diagnosis"}``,
  ``model = {"answer", "rationale"}``; the dicts are built before the clock starts). Both
  metrics' times are added.
* **mas_eval**: ``mas_eval.score(ds, preset="medaisure")`` on a Dataset built with
  ``Dataset.from_frames`` from in-memory ``runs`` and ``answers`` frames of the same pairs: the
  whole call, so parameter checks, key encoding, the two metrics and the per-run means are all
  in the time. The ``answers`` frame holds the texts MedAISure's side is given (the
  simulator's ``note``, ``predicted_diagnosis`` and ``specialty`` are dropped): diagnostic
  accuracy and clinical relevance, which its side does not compute, have nothing to score.

The per-pair values are then compared: our ``clinical_accuracy``, ``reasoning_quality`` and
their components with the ``get_last_breakdown()`` rows of MedAISure's last call, with ``==``
(tests/metrics/answers/test_medaisure.py pins them equal on hand-made cases; MedAISure's phrase search
iterates a Python set, so a pair holding two overlapping phrases may depend on the hash seed).
Results go to ``reports/benchmarks/medaisure.json``: pairs per second of each side (wall
clock), their ratio, the CPU seconds of each (all of Polars' threads: on a loaded machine the
wall clock of the multi-threaded side suffers most) and their ratio, agreement counts, and the
machine; MedAISure's file is named by its basename and SHA-256, never by its path.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import hashlib
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine import environment, write_json  # noqa: E402  (benchmarks/machine.py, beside this script)

import mas_eval  # noqa: E402
from mas_eval import Dataset  # noqa: E402
from mas_eval.simulation.answers import simulate_answers  # noqa: E402

OUT = ROOT / "reports" / "benchmarks" / "medaisure.json"
IN_CHECKOUT = Path("bench") / "evaluation" / "metrics" / "clinical.py"
TEXTS = ("prediction", "rationale", "reference", "reference_rationale", "reference_diagnosis")
#: The answers columns only diagnostic accuracy and clinical relevance read (not timed on MedAISure's side).
OTHER_METRICS_INPUTS = ("note", "predicted_diagnosis", "specialty")
CATEGORIES = ("diagnoses", "treatments", "medications", "symptoms", "labs")
#: Our item column and MedAISure's breakdown key, per metric.
ACCURACY = {"clinical_accuracy": "pair_score"}
REASONING = {
    "reasoning_quality": "final_score",
    "token_f1": "overlap_f1",
    "structure": "structure_score",
    "evidence": "evidence_score",
    "factual_consistency": "factual_consistency",
    "fallacy_penalty": "fallacy_penalty",
}


def _fail(message: str) -> None:
    print(f"bench_medaisure: {message}", file=sys.stderr)
    sys.exit(2)


def load_clinical(path: Path) -> tuple[ModuleType, Path]:
    """MedAISure's ``clinical`` module, imported from ``path`` (the file, or a checkout), as a package
    of the folder it sits in so that its ``from .base import Metric`` finds the ``base.py`` beside it."""
    file = path / IN_CHECKOUT if path.is_dir() else path
    if not file.is_file():
        _fail(f"no MedAISure clinical.py at {file}; pass --clinical with the fetched file or a MedAISure checkout")
    if not (file.parent / "base.py").is_file():
        _fail(f"{file.name} imports .base, but there is no base.py beside it in {file.parent}; extract it there too")
    package = "_medaisure_metrics"
    spec = importlib.util.spec_from_file_location(
        package, file.parent / "__init__.py", submodule_search_locations=[str(file.parent)]
    )
    assert spec is not None
    root = importlib.util.module_from_spec(spec)  # an empty package: its __init__.py is not run
    sys.modules[package] = root
    spec = importlib.util.spec_from_file_location(f"{package}.clinical", file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    for name in ("ClinicalAccuracyMetric", "ReasoningQualityMetric"):
        if not hasattr(module, name):
            _fail(f"{file.name} has no {name}; is it MedAISure's bench/evaluation/metrics/clinical.py?")
    return module, file


def make_pairs(pairs: int, items: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``runs`` and ``answers`` frames of ``pairs`` simulated answers (texts decoded, in memory)."""
    runs = -(-pairs // items)
    ds = simulate_answers(max(runs, 2), seed=seed, items=(items, items), answer_chars=300)
    answers = ds["answers"].collect().head(pairs)
    run_table = ds["runs"].collect().join(answers.select("run_id").unique(), on="run_id", how="semi")
    return run_table, answers


def time_medaisure(clinical: ModuleType, answers: pl.DataFrame) -> tuple[float, float, list[dict], list[dict]]:
    """Seconds (wall clock and this process's CPU) of both metrics' ``calculate`` over every pair,
    and their breakdown rows."""
    rows = answers.select(*TEXTS).rows(named=True)
    # A missing text is None, as MedAISure's runner passes a field the output lacks.
    expected = [{"answer": r["reference"], "rationale": r["reference_rationale"], "diagnosis": r["reference_diagnosis"]}
                for r in rows]  # fmt: skip
    model = [{"answer": r["prediction"], "rationale": r["rationale"]} for r in rows]
    accuracy, reasoning = clinical.ClinicalAccuracyMetric(), clinical.ReasoningQualityMetric()
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    accuracy.calculate(expected, model)
    reasoning.calculate(expected, model)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu, accuracy.get_last_breakdown(), reasoning.get_last_breakdown()


def time_ours(runs: pl.DataFrame, answers: pl.DataFrame) -> tuple[float, float, pl.DataFrame]:
    """Seconds (wall clock and CPU, all threads) of the whole ``mas_eval.score(ds, preset="medaisure")``,
    and its items table."""
    # The same metrics as MedAISure's side: without a note or a predicted diagnosis, the two
    # metrics that read them have nothing to score.
    ds = Dataset.from_frames(runs=runs, answers=answers.drop(OTHER_METRICS_INPUTS, strict=False))
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    scores = mas_eval.score(ds, preset="medaisure")
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu, scores["items"]


def agreement(answers: pl.DataFrame, items: pl.DataFrame, accuracy: list[dict], reasoning: list[dict]) -> dict:
    """Per compared column, the pairs whose values are equal (``==``) on both sides."""
    theirs = pl.DataFrame(
        {
            **{ours: [row[key] for row in accuracy] for ours, key in ACCURACY.items()},
            **{ours: [row[key] for row in reasoning] for ours, key in REASONING.items()},
        },
        schema={name: pl.Float64 for name in (*ACCURACY, *REASONING)},
    ).with_columns(answers.select("run_id", "item_id"))
    joined = theirs.join(items, on=["run_id", "item_id"], how="left", suffix="_ours")
    equal = {name: int(joined.select((pl.col(name) == pl.col(f"{name}_ours")).sum()).item()) for name in theirs.columns
             if name not in ("run_id", "item_id")}  # fmt: skip
    return {"pairs": answers.height, "equal": equal}


def _timing(timed: str, seconds: list[float], cpu: float, pairs: int) -> dict[str, Any]:
    """One side's entry of the result: what was timed, its median and each repeat, pairs/s, median CPU."""
    median = statistics.median(seconds)
    return {
        "timed": timed,
        "seconds": round(median, 3),
        "seconds_each": [round(s, 3) for s in seconds],
        "pairs_per_second": round(pairs / median),
        "cpu_seconds": round(cpu, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clinical", type=Path, required=True, help="MedAISure's clinical.py, or a checkout folder")
    parser.add_argument("--pairs", type=int, default=50_000, help="answer pairs (default 50,000)")
    parser.add_argument("--items", type=int, default=50, help="items per case (default 50)")
    parser.add_argument("--seed", type=int, default=1, help="simulation seed (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per side, alternating; median (3)")
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON results file")
    args = parser.parse_args()
    if args.pairs < 1 or args.items < 1 or args.repeats < 1:
        parser.error("--pairs, --items and --repeats must be >= 1")
    clinical, file = load_clinical(args.clinical)

    print(f"simulating {args.pairs:,} answer pairs ...", flush=True)
    runs, answers = make_pairs(args.pairs, args.items, args.seed)
    theirs, ours, theirs_cpu, ours_cpu = [], [], [], []
    for i in range(args.repeats):  # alternating, so that a change of load hits both sides alike
        seconds, cpu, accuracy, reasoning = time_medaisure(clinical, answers)
        theirs.append(seconds)
        theirs_cpu.append(cpu)
        seconds, cpu, items = time_ours(runs, answers)
        ours.append(seconds)
        ours_cpu.append(cpu)
        print(f"  repeat {i + 1}: MedAISure {theirs[-1]:.2f} s, mas_eval {ours[-1]:.3f} s", flush=True)
    t_theirs, t_ours = statistics.median(theirs), statistics.median(ours)
    cpu_theirs, cpu_ours = statistics.median(theirs_cpu), statistics.median(ours_cpu)
    result: dict[str, Any] = {
        "pairs": answers.height,
        "runs": runs.height,
        "items_per_case": args.items,
        "seed": args.seed,
        "mean_chars": answers.select(pl.col(c).str.len_chars().mean().round(1) for c in TEXTS).row(0, named=True),
        "medaisure": _timing(
            "ClinicalAccuracyMetric().calculate + ReasoningQualityMetric().calculate, all pairs",
            theirs,
            cpu_theirs,
            answers.height,
        ),
        "mas_eval": _timing(
            'mas_eval.score(Dataset.from_frames(runs=..., answers=...), preset="medaisure"), whole call',
            ours,
            cpu_ours,
            answers.height,
        ),
        "ratio": round(t_theirs / t_ours, 1),
        "cpu_ratio": round(cpu_theirs / cpu_ours, 1),
        "agreement": agreement(answers, items, accuracy, reasoning),
    }
    report = {
        "benchmark": "medaisure",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "environment": environment(),
        "medaisure_code": {"file": file.name, "sha256": hashlib.sha256(file.read_bytes()).hexdigest()},
        "result": result,
    }
    print(json.dumps(result, indent=2))
    write_json(args.out, report)


if __name__ == "__main__":
    main()
