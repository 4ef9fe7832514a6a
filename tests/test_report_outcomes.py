"""The report's "Outcomes" section: on scores with logged outcomes, absent without them."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval.report import build
from mas_eval.stats import compare, compute_matched, mcnemar_exact, pass_rates


@pytest.fixture(scope="module")
def with_epochs() -> mas_eval.Scores:
    return mas_eval.score(mas_eval.simulate_outcomes(600, seed=3, epochs=5, tasks=2))


def _section(scores: mas_eval.Scores):
    (section,) = [s for s in build(scores).sections if s.key == "outcomes"]
    return section


def test_with_epochs_the_section_has_rates_comparison_pass_at_k_cost_and_the_frontier(
    with_epochs: mas_eval.Scores,
) -> None:
    section = _section(with_epochs)
    tables = {t.name: t.frame for t in section.tables}
    assert list(tables) == [
        "outcome_pass_rates",
        "outcome_comparison",
        "outcome_cost_match",
        "outcome_pass_at_k_match",
        "outcome_compute_matched_match",
    ]
    runs = with_epochs.runs
    # The tables are the statistics' own, on the scores' runs: epochs clustered by case.
    # (Without a run set aside, its note column, all null, is left out.)
    expected = pass_rates(runs, "match", by="task", cluster="case_id").drop("note")
    assert tables["outcome_pass_rates"].equals(expected)
    comparison = tables["outcome_comparison"]
    assert set(comparison["metric"]) == {"match", "f1"}
    # Cases have several epochs: the paired t on case means, not McNemar, and the row says so.
    assert comparison.filter(metric="match")["test"].unique().to_list() == ["paired"]
    assert tables["outcome_pass_at_k_match"].columns[-1] == "note"
    assert {"pass_at_1", "pass_at_2", "pass_at_4", "pass_at_5"} <= set(tables["outcome_pass_at_k_match"].columns)
    assert tables["outcome_compute_matched_match"].equals(compute_matched(runs, "match", level="summary"))
    (figure,) = section.figures
    labels = {text.get_text() for text in figure.figure.axes[0].texts}
    assert labels == {"k=1", "3", "5"}  # odd k only: an even k can tie


def test_one_run_per_case_is_compared_by_mcnemar() -> None:
    scores = mas_eval.score(mas_eval.simulate_outcomes(400, seed=5, epochs=1, tasks=1))
    section = _section(scores)
    tables = {t.name: t.frame for t in section.tables}
    assert "outcome_pass_at_k_match" not in tables and not section.figures  # no epochs, no pass@k
    row = tables["outcome_comparison"].filter(metric="match").row(0, named=True)
    assert row["test"] == "mcnemar"
    runs = scores.runs.pivot("system", index="case_id", values="match")
    b = int((runs["mas"] & ~runs["single"]).sum())
    c = int((~runs["mas"] & runs["single"]).sum())
    assert row["p_value"] == pytest.approx(mcnemar_exact(b, c)["p_value"].item(), rel=1e-12)
    same = compare(scores, ["match", "f1"], pair_on="case_id", by="task").filter(metric="match")
    assert row == same.row(0, named=True)


def test_scores_without_outcomes_have_no_such_section() -> None:
    scores = mas_eval.score(mas_eval.simulate(runs=60, seed=1))
    assert "outcomes" not in [s.key for s in build(scores).sections]


@pytest.mark.parametrize("suffix", [".md", ".html", ".tex", ".json"])
def test_every_format_writes_it(with_epochs: mas_eval.Scores, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"report{suffix}"
    build(with_epochs).write(path)
    text = path.read_text(encoding="utf-8").replace("\\_", "_")
    if suffix == ".tex":  # the paper's tables alone: pass rates and the comparison
        assert "Pass rate per task and system" in text and "on each outcome" in text
    else:
        assert "Outcomes" in text and "pass_at_2" in text and "mcnemar_p" in text


def test_a_score_of_one_system_only_is_reported_without_comparison() -> None:
    ds = mas_eval.simulate_outcomes(200, seed=2, epochs=1)
    runs = ds.collect("runs").filter(pl.col("system") == "mas")
    outcomes = ds.collect("outcomes").join(runs.select("run_id"), on="run_id")
    scores = mas_eval.score(mas_eval.Dataset.from_frames(runs=runs, outcomes=outcomes))
    section = _section(scores)
    assert any("no mas or no single runs" in line for line in section.text)
    assert [t.name for t in section.tables] == ["outcome_pass_rates", "outcome_cost_match"]
