"""Regenerate the bundled sample data (``make sample``): fixed seeds, so the output is reproducible.

``data/sample/`` is one simulated Dataset of three kinds of experiment: a few thousand decision
runs (the crisis-MAS methodology's tables), a few hundred differential-diagnosis runs (the LDDx v6 guide's, run
and case ids prefixed ``dx-``, tasks ``ddx1``, ``ddx2``) and a few dozen benchmark-answer runs
(the MedAISure overview's ``answers`` table, run and case ids prefixed ``qa-``: a MAS and a single agent
answering the same 100 items of each of the tasks ``diagnostic_reasoning`` and
``patient_communication``). ``data/sample.jsonl`` holds a few hundred canonical decision run
records. The demo and the notebooks read them as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from mas_eval.ingest import export_jsonl
from mas_eval.simulation.answers import simulate_answers
from mas_eval.simulation.decision import simulate_decision
from mas_eval.simulation.diagnosis import simulate_diagnosis
from mas_eval.storage.dataset import Dataset

SAMPLE_RUNS, SAMPLE_SEED = 4_000, 2026
RECORDS_RUNS, RECORDS_SEED = 300, 2027
#: The diagnostic runs: small teams and short messages keep the bundled files small.
DIAGNOSIS_RUNS, DIAGNOSIS_SEED, DIAGNOSIS_PREFIX = 400, 2028, "dx-"
DIAGNOSIS_SHAPE = {"agents": (3, 5), "responses": 12, "response_chars": 300}
#: The answer runs: 20 cases of 10 items, each answered by both systems. The seed is one whose
#: cases fall 10 and 10 into the two tasks, so each task has 100 items answered twice.
ANSWER_RUNS, ANSWER_SEED, ANSWER_PREFIX = 40, 2033, "qa-"
ANSWER_SHAPE = {"items": (10, 10), "tasks": ("diagnostic_reasoning", "patient_communication")}


def with_id_prefix(ds: Dataset, prefix: str) -> Dataset:
    """``ds`` with ``prefix`` before every ``run_id`` and ``case_id`` (and ``cluster``), so it can join another."""
    ids = ("run_id", "case_id", "cluster")
    tables = {}
    for name in ds.table_names:
        frame = ds.scan(name)
        present = [c for c in ids if c in frame.collect_schema()]
        tables[name] = frame.with_columns((pl.lit(prefix) + pl.col(c)).alias(c) for c in present)
    return Dataset(tables)


def sample_dataset() -> Dataset:
    """Make the bundled sample: decision runs, diagnostic runs and answer runs in one Dataset."""
    decision = simulate_decision(SAMPLE_RUNS, seed=SAMPLE_SEED, effect=0.05, tasks=3, variants=2)
    diagnosis = simulate_diagnosis(DIAGNOSIS_RUNS, seed=DIAGNOSIS_SEED, **DIAGNOSIS_SHAPE)  # type: ignore[arg-type]
    answers = simulate_answers(ANSWER_RUNS, seed=ANSWER_SEED, **ANSWER_SHAPE)  # type: ignore[arg-type]
    return Dataset.concat(
        [decision, with_id_prefix(diagnosis, DIAGNOSIS_PREFIX), with_id_prefix(answers, ANSWER_PREFIX)]
    )


def write_sample(folder: str | Path) -> None:
    """Write ``<folder>/sample/`` and ``<folder>/sample.jsonl``, replacing earlier ones."""
    root = Path(folder)
    sample_dataset().write(root / "sample", overwrite=True)
    export_jsonl(simulate_decision(RECORDS_RUNS, seed=RECORDS_SEED, effect=0.05), root / "sample.jsonl")


if __name__ == "__main__":
    write_sample(sys.argv[1] if len(sys.argv) > 1 else "data")
