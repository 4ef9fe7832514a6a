"""Defaults from the data: what ``compare`` and ``report`` headline and compare when told nothing, and the closing
"Not in this data" list that replaces a heading over nothing, in every format."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval.metrics.family import NAMED, choose_columns, compared_columns, get, headline_columns
from mas_eval.report import build, load_json
from mas_eval.report.content import chosen_columns
from tests.promises import run

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
DIAGNOSTIC = ["traditional_recall", "clinical_reasoning_quality", "diagnostic_safety", "system_safety_coverage"]


@pytest.fixture(scope="module")
def outcomes_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Scores folder of logged outcomes alone: runs, outcomes, usage (what an evaluation tool's logs hold)."""
    scores = mas_eval.score(mas_eval.simulate_outcomes(300, seed=8, epochs=1, tasks=2))
    return scores.write(tmp_path_factory.mktemp("outcomes") / "scores")


@pytest.fixture(scope="module")
def sample() -> mas_eval.Scores:
    return mas_eval.score(mas_eval.Dataset.open(SAMPLE))


def test_the_families_declare_what_they_headline_and_compare() -> None:
    assert get("outcomes").compared == (NAMED,) and get("outcomes").headline[0] == NAMED
    assert get("process").headline and get("process").compared == ()
    # The columns a family names from the data stand where it declares NAMED; unknown, they are left out.
    assert compared_columns({"outcomes": ["match"]}) == ["dqs", "decision_confidence", *DIAGNOSTIC, "match"]
    assert NAMED not in compared_columns() and NAMED not in headline_columns()


def test_an_outcomes_only_dataset_is_compared_on_its_scores(outcomes_only: Path) -> None:
    scores = mas_eval.Scores.open(outcomes_only)
    chosen = chosen_columns(scores)
    assert chosen.columns == ["f1", "match"]
    assert chosen.by_family == {"outcomes": ["f1", "match"]}
    assert chosen.silent == {"decision": ["dqs", "decision_confidence"]}  # it ran, with nothing to say
    headline = chosen_columns(scores, "headline")
    assert headline.columns == ["f1", "match", "run_tokens", "run_cost_usd", "agents_active"]
    report = build(outcomes_only)
    assert report.provenance["parameters"]["comparison"]["metrics"] == ["f1", "match"]
    tests = dict(report.tables["comparison"].select("metric", "test").unique().iter_rows())
    assert tests == {"match": "mcnemar", "f1": "paired"}  # pass/fail once per case: McNemar; graded: paired t
    assert report.tables["headline"]["metric"].unique(maintain_order=True).to_list() == headline.columns


def test_the_decision_sample_is_compared_on_dqs_confidence_and_the_diagnostic_scores(sample: mas_eval.Scores) -> None:
    chosen = chosen_columns(sample)
    assert chosen.columns == ["dqs", "decision_confidence", *DIAGNOSTIC]
    assert list(chosen.by_family) == ["decision", "diagnosis"] and not chosen.silent
    headline = chosen_columns(sample, "headline").by_family
    assert headline["decision"][:3] == ["dqs", "gt_match", "decision_confidence"]
    assert headline["diagnosis"] == DIAGNOSTIC  # it headlines what it compares
    assert headline["answers"] == [
        "clinical_accuracy",
        "reasoning_quality",
        "diagnostic_accuracy",
        "clinical_relevance",
    ]
    assert set(headline) == {"decision", "diagnosis", "answers", "process"}


def test_a_family_that_ran_with_no_values_is_passed_over_and_named() -> None:
    present = {"match": True, "dqs": False}
    chosen = choose_columns("compared", lambda n: present.get(n, False), ran=["decision", "outcomes"],
                            named={"outcomes": ["match"]})  # fmt: skip
    assert chosen.columns == ["match"]
    assert chosen.sentence() == (
        "Compared by default: match (the outcomes family), the columns of the metric families with values in these "
        "runs; the decision family has no values of dqs, decision_confidence."
    )
    nothing = choose_columns("headline", lambda n: False, ran=["decision"])
    assert nothing.columns == [] and nothing.sentence() == (
        "Headlined by default: nothing, as none of the columns the metric families headline has a value here."
    )


def test_compare_prints_the_columns_it_chose(outcomes_only: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = run(capsys, "compare", outcomes_only, "--pair-on", "case_id", "--out", outcomes_only.parent / "c.json")
    assert done.code == 0, done.err
    said = " ".join(done.out.split())
    assert said.startswith("Compared by default: f1, match (the outcomes family)")
    assert "the decision family has no values of dqs, decision_confidence." in said
    table = json.loads((outcomes_only.parent / "c.json").read_text(encoding="utf-8"))
    rows = table if isinstance(table, list) else table.get("rows", table)
    assert {row["metric"] for row in rows} == {"f1", "match"}


@pytest.mark.slow
def test_compare_and_report_of_the_decision_sample_say_their_choice(
    sample: mas_eval.Scores, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = sample.write(tmp_path / "scores")
    done = run(capsys, "compare", folder, "--pair-on", "case_id", "--by", "task")
    assert done.code == 0, done.err
    said = " ".join(done.out.split())
    assert said.startswith(
        "Compared by default: dqs, decision_confidence (the decision family); traditional_recall, "
        "clinical_reasoning_quality, diagnostic_safety, system_safety_coverage (the diagnosis family)"
    )
    done = run(capsys, "report", folder, "--out", tmp_path / "r.html")
    assert done.code == 0, done.err
    assert " ".join(done.out.split()).startswith("Compared by default: dqs, decision_confidence (the decision family)")


def test_nothing_to_compare_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = pl.DataFrame({"run_id": ["a", "b"], "system": ["mas", "single"], "case_id": ["c", "c"]})
    folder = mas_eval.score(mas_eval.Dataset.from_frames(runs=runs)).write(tmp_path / "scores")
    done = run(capsys, "compare", folder)
    assert done.code == 2 and "name the columns to compare with --metrics" in done.err
    assert "Traceback" not in done.err


@pytest.mark.parametrize("suffix", [".html", ".md", ".json", ".tex"])
@pytest.mark.slow
def test_no_format_has_an_omitted_heading(outcomes_only: Path, tmp_path: Path, suffix: str) -> None:
    report = build(outcomes_only)
    lines = report.not_in_data
    assert lines and lines[0].startswith("Decision quality: no run has a DQS")
    path = report.write(tmp_path / f"r{suffix}")
    text = path.read_text(encoding="utf-8")
    assert "Omitted" not in text and "omitted:" not in text.lower().replace('"omitted": null', "")
    if suffix == ".html":
        assert '<section id="not_in_data"' in text and "<li>Decision quality: no run has a DQS" in text
        for key in ("distributions", "paired", "calibration", "efficiency", "consensus", "decision"):
            assert f'<section id="{key}"' not in text
    elif suffix == ".md":
        assert "## Not in this data" in text and "- Decision quality: no run has a DQS" in text
        assert "## Calibration" not in text
    elif suffix == ".json":
        loaded = load_json(path)
        keys = [s["key"] for s in loaded["sections"]]
        assert keys[-2:] == ["not_in_data", "provenance"] and "calibration" not in keys
        assert loaded["sections"][-2]["items"] == lines
        assert all(s["omitted"] is None for s in loaded["sections"])


@pytest.mark.slow
def test_the_decision_report_lists_its_missing_sections_too(sample: mas_eval.Scores) -> None:
    runs = sample.runs.with_columns(gt_match=pl.lit(None, pl.Boolean), cost_usd=pl.lit(None, pl.Float64))
    report = build(mas_eval.Scores(tables={"runs": runs}))
    assert "Calibration: no ground truth: gt_match is null in every run, so calibration is undefined." in (
        report.not_in_data
    )
    assert "calibration" not in [s.key for s in report.sections]
    assert report.section("calibration").omitted  # still there to ask, not shown
