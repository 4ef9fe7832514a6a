"""The bundled sample data and the demo that `make demo` runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from mas_eval import Dataset
from mas_eval.ingest import ingest_jsonl
from mas_eval.report import load_json
from mas_eval.simulation.decision import simulate
from mas_eval.simulation.sample import (
    ANSWER_PREFIX,
    ANSWER_RUNS,
    DIAGNOSIS_PREFIX,
    DIAGNOSIS_RUNS,
    RECORDS_RUNS,
    RECORDS_SEED,
    SAMPLE_RUNS,
    sample_dataset,
)

DATA = Path(__file__).resolve().parents[2] / "data"
DECISION_TABLES = ["runs", "agents", "beliefs", "criteria", "scores", "alt_scores"]
DIAGNOSIS_TABLES = ["ddx", "ground_truth", "messages", "interventions"]
#: The bundled files stay small: the whole sample folder under this many bytes.
SAMPLE_BYTES = 1_000_000


def test_bundled_sample_is_valid_and_reproducible() -> None:
    sample = Dataset.open(DATA / "sample").validate()
    assert sample.table_names == [*DECISION_TABLES, *DIAGNOSIS_TABLES, "answers"]
    for name, frame in sample_dataset().frames().items():
        assert_frame_equal(sample.collect(name), frame)
    assert sum(f.stat().st_size for f in (DATA / "sample").rglob("*") if f.is_file()) < SAMPLE_BYTES
    # Three kinds of experiment, apart: diagnostic and answer runs and cases carry their prefix, decision ones none.
    runs = sample.collect("runs")
    for prefix, count in ((DIAGNOSIS_PREFIX, DIAGNOSIS_RUNS), (ANSWER_PREFIX, ANSWER_RUNS)):
        own = runs["run_id"].str.starts_with(prefix)
        assert own.sum() == count
        assert (runs["case_id"].str.starts_with(prefix) == own).all()
    answers = sample.collect("answers")
    assert answers["run_id"].str.starts_with(ANSWER_PREFIX).all()
    # Both systems answer the same 100 items of each of the two tasks.
    per_task = answers.group_by("task").agg(pl.col("item_id").n_unique(), pl.len()).sort("task")
    assert per_task.rows() == [("diagnostic_reasoning", 100, 200), ("patient_communication", 100, 200)]


def test_ingest_of_bundled_records_gives_the_documented_tables(tmp_path: Path) -> None:
    result = ingest_jsonl([DATA / "sample.jsonl"], tmp_path / "ds")
    assert (result.runs, result.rejected) == (RECORDS_RUNS, 0)
    ingested = Dataset.open(tmp_path / "ds").validate()
    assert ingested.table_names == DECISION_TABLES
    for name, frame in simulate(RECORDS_RUNS, seed=RECORDS_SEED, effect=0.05).frames().items():
        assert_frame_equal(ingested.collect(name), frame)


@pytest.mark.subprocess
def test_demo_writes_its_outputs(demo_at_80_columns: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, out = demo_at_80_columns  # the bundled data's demo, run once in the session (tests/conftest.py)
    report = load_json(out / "report.json")
    assert report["provenance"]["mas_eval_version"]
    assert set(report["provenance"]["inputs"]) == {"dataset"}
    per_system = dict(report["tables"]["runs_per_group"].group_by("system").agg(pl.col("runs").sum()).iter_rows())
    assert per_system["mas"] == per_system["single"] == (SAMPLE_RUNS + DIAGNOSIS_RUNS + ANSWER_RUNS) // 2
    # The headline: each system's DQS with its interval, among the columns of every family with values.
    dqs = report["tables"]["headline"].filter(metric="dqs").sort("system")
    assert dqs["system"].to_list() == ["mas", "single"] and (dqs["ci_low"] < dqs["mean"]).all()
    assert not [s["key"] for s in report["sections"] if s["omitted"]]
    assert [s["key"] for s in report["sections"]][-5:] == ["diagnosis", "answers", "cost", "process", "provenance"]
    # The planted effect, in every row of the metrics it is planted in (clinical relevance has none).
    planted = report["tables"]["answer_comparison"].filter(pl.col("metric") != "clinical_relevance")
    assert planted["metric"].n_unique() == 3 and (planted["difference"] > 0).all()
    for suffix in (".html", ".md", ".tex"):
        assert (out / f"report{suffix}").stat().st_size > 0
    figures = [f["name"] for s in report["sections"] for f in s["figures"]]
    assert {p.stem for p in (out / "figures").glob("*.png")} == {*figures, "beliefs_first_run", "consensus_quality"}
    assert (out / "scores" / "runs.parquet").is_file()
    assert Dataset.open(out / "ingested").table_names == DECISION_TABLES


@pytest.mark.subprocess
def test_the_demos_report_of_inspect_logs_leads_with_pass_rates_and_figures(
    demo_at_80_columns: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = demo_at_80_columns
    page = out / "inspect_report.html"
    if not page.is_file():  # inspect_ai is an extra: without it the demo says it skipped the logs
        assert "skipped: inspect_ai is not installed" in done.stdout
        return
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") >= 8 and "Omitted" not in html
    headline = html.split('id="headline"')[1].split("</section>")[0]
    # The pass rate of the debate and of the single agent, each with its interval, leads the page.
    assert "match" in headline and headline.count("[") >= 4
    assert '<section id="decision"' not in html and "<li>Decision quality: no run has a DQS" in html
