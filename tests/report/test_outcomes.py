"""The report of logged outcomes: led by figures, defaults from the data, every format, absent without outcomes."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import mas_eval
from mas_eval.report import build, load_json
from mas_eval.stats import compare, compute_matched, mcnemar_exact, pass_at_k_intervals, pass_rates

OUTCOME_FIGURES = ["outcome_pass_rates", "outcome_pass_at_k_match", "outcome_frontier_match", "outcome_cost_match"]


@pytest.fixture(scope="module")
def with_epochs() -> mas_eval.Scores:
    return mas_eval.score(mas_eval.simulate_outcomes(600, seed=3, epochs=5, tasks=2))


@pytest.fixture(scope="module")
def report(with_epochs: mas_eval.Scores) -> mas_eval.report.Report:
    return build(with_epochs)


def test_the_report_of_outcomes_is_led_by_its_scores_not_the_decision_familys(
    report: mas_eval.report.Report, with_epochs: mas_eval.Scores
) -> None:
    assert [s.key for s in report.sections] == [
        "dataset", "headline", "comparison", "forest", "outcomes", "cost", "process", "not_in_data", "provenance",
    ]  # fmt: skip
    # The decision family ran (it needs only runs) but has nothing to say: one line, no headings.
    assert [line.split(":")[0] for line in report.not_in_data] == ["Decision quality"]
    compared = report.tables["comparison"]
    assert set(compared["metric"]) == {"match", "f1"}
    assert report.provenance["parameters"]["comparison"]["metrics"] == ["f1", "match"]
    assert report.section("comparison").text[0].startswith("Compared by default: f1, match (the outcomes family)")
    assert "the decision family has no values of dqs, decision_confidence" in report.section("comparison").text[0]
    headline = report.tables["headline"]
    # The outcomes family's scores and spending, then the process family's (no transcript here: no turns).
    assert headline["metric"].unique(maintain_order=True).to_list() == [
        "f1", "match", "run_tokens", "run_cost_usd", "agents_active",
    ]  # fmt: skip
    # Epochs repeat each case: the headline's intervals are the cluster-robust ones over cases.
    runs = with_epochs.runs
    rates = pass_rates(runs, "match", cluster="case_id")
    match = headline.filter(metric="match").sort("system")
    assert match["mean"].to_list() == pytest.approx(rates["rate"].to_list())
    assert match["ci_low"].to_list() == pytest.approx(rates["cluster_low"].to_list())
    assert set(match["interval"]) == {"cluster"}


def test_the_outcomes_section_leads_with_its_figures_and_their_statistics(
    report: mas_eval.report.Report, with_epochs: mas_eval.Scores
) -> None:
    section = report.section("outcomes")
    assert [f.name for f in section.figures] == OUTCOME_FIGURES
    tables = {t.name: t.frame for t in section.tables}
    assert list(tables) == [
        "outcome_pass_rates", "outcome_pass_at_k_match", "outcome_compute_matched_match", "outcome_cost_match",
    ]  # fmt: skip
    runs = with_epochs.runs
    # The tables are the statistics' own, on the scores' runs: epochs clustered by case.
    assert tables["outcome_pass_rates"].equals(
        pass_rates(runs, "match", by="task", cluster="case_id").drop("note")  # nothing set aside: no note column
    )
    ks = sorted(set(tables["outcome_pass_at_k_match"]["k"]))
    assert ks[:3] == [1, 2, 4]  # powers of two, and the most epochs of a case
    intervals = pass_at_k_intervals(runs, "match", k=ks, treatment="mas", control="single", n_boot=1000)
    assert tables["outcome_pass_at_k_match"].equals(intervals.filter(pl.col("cases") > 0))
    assert tables["outcome_compute_matched_match"].equals(compute_matched(runs, "match", level="summary"))
    # Each figure draws its table: the pass rates' dots are the rates, one Line2D per system.
    figures = {f.name: f.figure for f in section.figures}
    dots = {line.get_gid(): line.get_xdata().tolist() for line in figures["outcome_pass_rates"].axes[0].lines}
    expected = tables["outcome_pass_rates"]
    assert dots["pass_rate:mas"] == pytest.approx(expected.filter(system="mas")["rate"].to_list())
    assert dots["pass_rate:single"] == pytest.approx(expected.filter(system="single")["rate"].to_list())
    curves = {line.get_gid(): line.get_ydata().tolist() for line in figures["outcome_pass_at_k_match"].axes[0].lines}
    at_k = intervals.filter(pl.col("control").is_null() & (pl.col("measure") == "pass@k") & (pl.col("system") == "mas"))
    assert curves["pass_at_k:mas"] == pytest.approx(at_k.sort("k")["estimate"].to_list())
    labels = {text.get_text() for text in figures["outcome_frontier_match"].axes[0].texts}
    assert labels == {"k=1", "3", "5"}  # odd k only: an even k can tie
    bars = [p for p in figures["outcome_cost_match"].axes[0].patches if p.get_gid() == "per_correct:tokens:mas"]
    per_correct = tables["outcome_cost_match"].filter(system="mas")["tokens_per_correct"].item()
    assert [p.get_width() for p in bars] == pytest.approx([per_correct])
    # Said once: the evaluator's calls are not the system's spending.
    assert any("are not included" in line and "--count-evaluator" in line for line in section.text)


def test_one_run_per_case_is_compared_by_mcnemar_with_newcombes_interval() -> None:
    scores = mas_eval.score(mas_eval.simulate_outcomes(400, seed=5, epochs=1, tasks=1))
    report = build(scores)
    row = report.tables["comparison"].filter(metric="match").row(0, named=True)
    assert row["test"] == "mcnemar"
    runs = scores.runs.pivot("system", index="case_id", values="match")
    b = int((runs["mas"] & ~runs["single"]).sum())
    c = int((~runs["mas"] & runs["single"]).sum())
    assert row["p_value"] == pytest.approx(mcnemar_exact(b, c)["p_value"].item(), rel=1e-12)
    same = compare(scores, ["f1", "match"], pair_on="case_id", by="task").filter(metric="match")
    assert row == same.row(0, named=True)
    # No epochs: no pass@k, and the report says so in one line, not a heading.
    section = report.section("outcomes")
    assert [f.name for f in section.figures] == ["outcome_pass_rates", "outcome_cost_match"]
    assert "Outcomes: no pass@k, pass^k or accuracy–cost frontier of match: each system ran each case once." in (
        report.not_in_data
    )
    # Runs are independent: Wilson's interval in the headline and the figure.
    assert set(report.tables["headline"].filter(metric="match")["interval"]) == {"wilson"}
    assert report.section("outcomes").figures[0].figure.axes[0].get_xlabel().endswith("Wilson interval")


def test_scores_without_outcomes_have_no_such_section() -> None:
    scores = mas_eval.score(mas_eval.simulate(60, seed=1))
    assert "outcomes" not in [s.key for s in build(scores).sections]


@pytest.mark.parametrize("suffix", [".md", ".html", ".tex", ".json"])
@pytest.mark.slow
def test_every_format_holds_its_figures_and_no_omitted_heading(
    report: mas_eval.report.Report, tmp_path: Path, suffix: str
) -> None:
    path = report.write(tmp_path / f"report{suffix}")
    text = path.read_text(encoding="utf-8").replace("\\_", "_")
    figures = [f.name for s in report.sections for f in s.figures]
    assert "Omitted" not in text
    assert ("Not in this data" in text) == (suffix != ".tex")  # LaTeX: the paper's tables and figures
    if suffix == ".html":
        assert text.count("<svg") == len(figures) >= 10
    elif suffix == ".md":
        folder = tmp_path / "report_figures"
        assert sorted(p.name for p in folder.glob("*.png")) == sorted(f"{name}.png" for name in figures)
        assert "## Outcomes" in text and "pass_at_2" not in text
    elif suffix == ".tex":
        folder = tmp_path / "report_pdf_figures"
        assert sorted(p.name for p in folder.glob("*.pdf")) == sorted(f"{name}.pdf" for name in figures)
        assert text.count(r"\includegraphics") == len(figures)
        assert "report_pdf_figures/outcome_pass_rates.pdf" in text
        assert "Pass rate per task and system" in text
    else:
        loaded = load_json(path)
        shown = [f for s in loaded["sections"] for f in s["figures"]]
        assert [f["name"] for f in shown] == figures
        assert all(f["svg"].startswith("<svg") for f in shown)
        # A figure that draws a frame of its own carries it: the frontier's points, read back as a frame.
        (frontier,) = [f for f in shown if f["name"] == "outcome_frontier_match"]
        assert isinstance(frontier["data"], pl.DataFrame) and {"system", "k", "tokens_per_case"} <= set(
            frontier["data"].columns
        )


def test_a_score_of_one_system_only_is_reported_without_comparison() -> None:
    ds = mas_eval.simulate_outcomes(200, seed=2, epochs=1)
    runs = ds.collect("runs").filter(pl.col("system") == "mas")
    outcomes = ds.collect("outcomes").join(runs.select("run_id"), on="run_id")
    report = build(mas_eval.score(mas_eval.Dataset.from_frames(runs=runs, outcomes=outcomes)))
    section = report.section("outcomes")
    assert [t.name for t in section.tables] == ["outcome_pass_rates", "outcome_cost_match"]
    assert any("no comparison: the scores have no run of system single" in line for line in report.not_in_data)
    assert any(line.startswith("Outcomes: no comparison of the outcomes") for line in report.not_in_data)
