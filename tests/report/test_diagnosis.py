"""The report's "Differential diagnosis" section: its tables and figure, when it is not in the data, every format."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval.report import build, load_json
from mas_eval.report.diagnosis import DIAGNOSIS_METRICS
from mas_eval.stats import compare
from tests.plots.test_collaboration import ddx_scores
from tests.report.test_report import PAYLOAD, _page

#: The decision report's sections; the diagnosis section comes before the provenance.
DECISION_SECTIONS = [
    "dataset", "headline", "comparison", "forest", "distributions", "paired", "calibration", "efficiency", "consensus",
]  # fmt: skip
#: A diagnostic team's report: no decision scores (their sections one line of "Not in this data"), no costs.
DIAGNOSIS_SECTIONS = ["dataset", "headline", "comparison", "forest", "diagnosis", "not_in_data", "provenance"]
TABLES = ["diagnosis_labels", "diagnosis_scores", "diagnosis_comparison"]


@pytest.fixture(scope="module")
def scores() -> mas_eval.Scores:
    return ddx_scores(8)


def test_the_section_holds_label_counts_scores_comparison_and_the_figure(
    scores: mas_eval.Scores, report: mas_eval.report.Report
) -> None:
    assert [s.key for s in report.sections] == DIAGNOSIS_SECTIONS
    # Headlined and compared by default on the diagnostic scores, the family that has values here.
    assert set(report.tables["headline"]["metric"]) == set(DIAGNOSIS_METRICS)
    section = report.section("diagnosis")
    assert section.title == "Differential diagnosis" and section.omitted is None
    assert [t.name for t in section.tables] == TABLES
    assert [f.name for f in section.figures] == ["collaboration"]
    assert len(section.figures[0].figure.axes) == 2

    runs = scores.runs
    labels = report.tables["diagnosis_labels"]
    assert labels.columns == ["system", "runs", "TP", "FP", "FN", "CAA", "AE", "TM-SM"]
    for row in labels.iter_rows(named=True):
        own = runs.filter(pl.col("system") == row["system"])
        assert row["runs"] == own.height == 8
        assert row["TP"] == own["tp"].sum() and row["TM-SM"] == own["tm_sm"].sum()

    means = report.tables["diagnosis_scores"]
    assert means.columns == ["metric", "system", "n", "mean"]
    assert means["metric"].unique(maintain_order=True).to_list() == DIAGNOSIS_METRICS
    got = {(m, s): (n, mean) for m, s, n, mean in means.iter_rows()}
    for metric in DIAGNOSIS_METRICS:
        for system in ("mas", "single"):
            values = runs.filter(pl.col("system") == system)[metric]
            assert got[metric, system] == (8, pytest.approx(values.mean(), rel=1e-12))


def test_the_default_comparison_pairs_the_diagnostic_scores_on_case(
    scores: mas_eval.Scores, report: mas_eval.report.Report
) -> None:
    rows = report.tables["diagnosis_comparison"]
    assert rows["metric"].to_list() == DIAGNOSIS_METRICS
    assert set(rows["test"]) == {"paired"} and rows["n_pairs"].to_list() == [8] * 4
    assert report.tables["comparison"].filter(pl.col("metric").is_in(DIAGNOSIS_METRICS)).equals(rows)
    expected = compare(scores, DIAGNOSIS_METRICS, by="task", pair_on="case_id", test="paired", correction="holm")
    assert_frame_equal(rows.drop("p_adjusted", "significant"), expected.drop("p_adjusted", "significant"))
    # The provenance records the columns the families compare that these scores have: built by
    # hand with the diagnosis family's columns only, they have no dqs or decision_confidence.
    recorded = report.provenance["parameters"]["comparison"]["metrics"]
    assert recorded == DIAGNOSIS_METRICS


def test_given_comparisons_are_shown_for_the_diagnostic_scores_only(scores: mas_eval.Scores) -> None:
    given = compare(scores, ["traditional_recall", "traditional_precision"], pair_on="case_id", test="paired")
    section = build(scores, given).section("diagnosis")
    assert section.tables[-1].frame["metric"].to_list() == ["traditional_recall"]
    without = build(scores, given.filter(pl.col("metric") == "traditional_precision")).section("diagnosis")
    assert [t.name for t in without.tables] == TABLES[:2]
    assert "No comparison of the diagnostic scores: the comparison table has no rows for the diagnostic scores." in (
        without.text
    )


def test_one_system_has_the_section_without_a_comparison() -> None:
    section = build(ddx_scores(4, ("mas",))).section("diagnosis")
    assert [t.name for t in section.tables] == TABLES[:2] and section.figures
    assert any(line.startswith("No comparison of the diagnostic scores: the scores have no run of system single")
               for line in section.text)  # fmt: skip


@pytest.mark.slow
def test_without_labels_the_section_is_omitted_with_its_reason(scores: mas_eval.Scores) -> None:
    unlabelled = mas_eval.Scores(tables={k: v for k, v in scores.tables.items() if k != "labels"})
    section = build(unlabelled).section("diagnosis")
    assert section.omitted is not None and section.omitted.startswith("the scores have no labels table")
    assert not section.tables and not section.figures
    html = build(unlabelled).to_html()
    assert "Omitted" not in html and "<li>Differential diagnosis: the scores have no labels table" in html
    empty = mas_eval.Scores(tables={**scores.tables, "labels": scores["labels"].clear()})
    assert build(empty).section("diagnosis").omitted == "the labels table is empty: no diagnosis was labelled"


def test_decision_scores_have_no_diagnosis_section() -> None:
    report = build(mas_eval.score(mas_eval.simulate(60, seed=2)))
    assert [s.key for s in report.sections] == [*DECISION_SECTIONS, "cost", "provenance"]
    assert report.provenance["parameters"]["comparison"]["metrics"] == ["dqs", "decision_confidence"]
    assert "diagnosis" not in report.to_latex()


def test_a_missing_figure_input_is_a_line_not_an_error(scores: mas_eval.Scores) -> None:
    no_rounds = mas_eval.Scores(tables={k: v for k, v in scores.tables.items() if k != "rounds"})
    section = build(no_rounds).section("diagnosis")
    assert not section.figures and [t.name for t in section.tables] == TABLES
    assert any(line.startswith("No collaboration figure: the scores have no rounds table") for line in section.text)


@pytest.mark.slow
def test_names_are_escaped_in_html(scores: mas_eval.Scores) -> None:
    # The payload as a system and as a diagnosis: text everywhere, never markup.
    named = {
        name: frame.with_columns(pl.col("system").replace({"mas": PAYLOAD})) for name, frame in scores.tables.items()
    }
    named["labels"] = named["labels"].with_columns(diagnosis=pl.lit(PAYLOAD), matched_to=pl.lit(PAYLOAD))
    named["consensus_ddx"] = named["consensus_ddx"].with_columns(diagnosis=pl.lit(PAYLOAD))
    report = build(mas_eval.Scores(tables=named), treatment=PAYLOAD)
    assert report.tables["diagnosis_labels"]["system"].to_list() == [PAYLOAD, "single"]
    html = report.to_html()
    assert PAYLOAD not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "script" not in _page(html).tags
    assert r"\textless{}script\textgreater{}" in report.to_latex()


def test_json_round_trips_the_section(report: mas_eval.report.Report, tmp_path: Path) -> None:
    loaded = load_json(report.write(tmp_path / "r.json"))
    (section,) = [s for s in loaded["sections"] if s["key"] == "diagnosis"]
    assert [t["name"] for t in section["tables"]] == TABLES
    assert [f["name"] for f in section["figures"]] == ["collaboration"]
    assert section["text"] == report.section("diagnosis").text
    for name in TABLES:
        assert_frame_equal(loaded["tables"][name], report.tables[name], check_exact=True)


def test_markdown_and_latex_render_the_section(report: mas_eval.report.Report, tmp_path: Path) -> None:
    path = report.write(tmp_path / "r.md")
    text = path.read_text(encoding="utf-8")
    assert "## Differential diagnosis" in text
    assert "| system | runs | TP | FP | FN | CAA | AE | TM-SM |" in text
    assert "| metric | system | n | mean |" in text
    block = text.split("## Differential diagnosis")[1].split("## Provenance")[0]
    assert "| metric | n | treatment | control | difference | 95% CI | p | p (Holm) | d | g | effect |" in block
    assert (path.parent / "r_figures" / "collaboration.png").is_file()
    assert re.search(r"!\[[^]]*TempoScore[^]]*\]\(r_figures/collaboration\.png\)", text)

    latex = report.to_latex()
    for name in ("diagnosis-labels", "diagnosis-scores"):
        assert rf"\label{{tab:mas-eval-{name}}}" in latex
    assert "system & runs & TP & FP & FN & CAA & AE & TM-SM" in latex
    assert r"traditional\_recall & mas & 8 &" in latex
    assert latex.count(r"\begin{tabular}") == latex.count(r"\bottomrule") == 4  # comparison, headline, 2 here
