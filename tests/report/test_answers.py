"""The report's "Answer quality" section: means, item-by-item comparison, combined score, figures, every format."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import mas_eval
from mas_eval.report import DEFAULT_WEIGHTS, build, load_json
from mas_eval.report.answer_quality import OVERALL
from mas_eval.stats import compare
from tests.report.test_report import PAYLOAD, _page

#: The sections of a report of answer runs alone: the headline (each run's mean answer scores), this one, and what
#: the data could not show (no run-level comparison, no decision family's scores: one line each).
SECTIONS = ["dataset", "headline", "answers", "not_in_data", "provenance"]
TABLES = ["answer_means", "answer_comparison", "answer_combined"]
METRICS = ["clinical_accuracy", "reasoning_quality", "diagnostic_accuracy", "clinical_relevance"]
FIGURES = [f"items_{name}" for name in METRICS]


@pytest.fixture(scope="module")
def scores() -> mas_eval.Scores:
    ds = mas_eval.simulate_answers(12, seed=5, items=(4, 6), tasks=("dx", "comm"))
    return mas_eval.score(ds)


def test_the_section_holds_means_comparison_combined_score_and_figures(report: mas_eval.report.Report) -> None:
    assert [s.key for s in report.sections] == SECTIONS
    section = report.section("answers")
    assert section.title == "Answer quality" and section.omitted is None
    assert [t.name for t in section.tables] == TABLES
    assert [f.name for f in section.figures] == FIGURES
    assert all(f.figure.axes for f in section.figures)
    assert report.provenance["parameters"]["answer_comparison"] == {
        "metrics": METRICS, "by": "task", "pair_on": "item_id", "test": "paired", "correction": "holm",
    }  # fmt: skip


def test_means_per_task_and_system_are_the_items_means(scores: mas_eval.Scores, report: mas_eval.report.Report) -> None:
    means = report.tables["answer_means"]
    assert means.columns == ["task", "system", "n", *METRICS]
    items = scores.items
    assert means.select("task", "system").rows() == sorted({(r["task"], r["system"]) for r in items.to_dicts()})
    for row in means.iter_rows(named=True):
        own = items.filter((pl.col("task") == row["task"]) & (pl.col("system") == row["system"]))
        assert row["n"] == own.height > 0
        for metric in METRICS:
            assert row[metric] == pytest.approx(sum(own[metric]) / own.height, rel=1e-12)


def test_the_comparison_pairs_the_systems_item_by_item(scores: mas_eval.Scores, report: mas_eval.report.Report) -> None:
    rows = report.tables["answer_comparison"]
    expected = compare(scores.items, METRICS, by="task", pair_on="item_id", test="paired", correction="holm")
    assert_frame_equal(rows, expected)
    items_per_task = scores.items.filter(pl.col("system") == "mas").group_by("task").len()
    pairs = dict(zip(items_per_task["task"], items_per_task["len"], strict=True))
    assert all(row["n_pairs"] == pairs[row["task"]] for row in rows.iter_rows(named=True))
    # The run-level comparison is untouched: answer metrics are compared on items, here only.
    assert not report.section("comparison").tables


def test_the_combined_score_is_the_weighted_mean_of_the_present_categories(
    scores: mas_eval.Scores, report: mas_eval.report.Report
) -> None:
    combined = report.tables["answer_combined"]
    assert combined.columns == ["system", "task", "combined_score", "diagnostics", "communication", "summarization"]
    items = scores.items
    # By hand: diagnostics = the mean of the task's mean clinical_accuracy and mean diagnostic_accuracy,
    # communication = mean reasoning_quality, summarization = mean clinical_relevance (the simulated notes);
    # safety is absent, so the weights 0.4, 0.2 and 0.1 are renormalised by their sum 0.7.
    for system in ("mas", "single"):
        own = combined.filter(pl.col("system") == system)
        assert own["task"].to_list() == ["comm", "dx", OVERALL]
        per_task = []
        for task in ("comm", "dx"):
            answers = items.filter((pl.col("system") == system) & (pl.col("task") == task))
            accuracy = sum(answers["clinical_accuracy"]) / answers.height
            diagnostic = sum(answers["diagnostic_accuracy"]) / answers.height
            reasoning = sum(answers["reasoning_quality"]) / answers.height
            relevance = sum(answers["clinical_relevance"]) / answers.height
            diagnostics = (accuracy + diagnostic) / 2
            row = own.row(by_predicate=pl.col("task") == task, named=True)
            assert row["diagnostics"] == pytest.approx(diagnostics, rel=1e-12)
            assert row["communication"] == pytest.approx(reasoning, rel=1e-12)
            assert row["summarization"] == pytest.approx(relevance, rel=1e-12)
            expected = (0.4 * diagnostics + 0.2 * reasoning + 0.1 * relevance) / 0.7
            assert row["combined_score"] == pytest.approx(expected, rel=1e-12)
            per_task.append(row["combined_score"])
        overall = own.row(by_predicate=pl.col("task") == OVERALL, named=True)
        assert overall["combined_score"] == pytest.approx(sum(per_task) / 2, rel=1e-12)
    weights = next(line for line in report.section("answers").text if line.startswith("Combined score"))
    assert "diagnostics=0.4,safety=0.3,communication=0.2,summarization=0.1" in weights
    assert "(0.4·diagnostics + 0.2·communication + 0.1·summarization) / 0.7" in weights
    assert dict(DEFAULT_WEIGHTS) == {"diagnostics": 0.4, "safety": 0.3, "communication": 0.2, "summarization": 0.1}


@pytest.mark.slow
def test_without_items_there_is_no_section() -> None:
    report = build(mas_eval.score(mas_eval.simulate(60, seed=2)))
    assert "answers" not in [s.key for s in report.sections]
    assert "answer_comparison" not in report.provenance["parameters"]
    assert "Answer quality" not in report.to_html()


def test_empty_items_give_the_section_omitted_with_its_reason(scores: mas_eval.Scores) -> None:
    empty = mas_eval.Scores(tables={**scores.tables, "items": scores.items.clear()})
    section = build(empty).section("answers")
    assert section.omitted == "the items table is empty: no answer was scored"
    assert not section.tables and not section.figures


def test_one_system_has_the_section_without_a_comparison(scores: mas_eval.Scores) -> None:
    mas_only = mas_eval.Scores(tables={name: f.filter(pl.col("system") == "mas") for name, f in scores.tables.items()})
    section = build(mas_only).section("answers")
    assert [t.name for t in section.tables] == ["answer_means", "answer_combined"]
    assert "No comparison of the answer scores: the items have no answer of system single (they have: mas)." in (
        section.text
    )
    assert [f.name for f in section.figures] == FIGURES


def test_items_without_a_task_have_no_combined_score_but_the_rest(scores: mas_eval.Scores) -> None:
    untasked = scores.items.with_columns(task=pl.lit(None, pl.String))
    section = build(mas_eval.Scores(tables={**scores.tables, "items": untasked})).section("answers")
    assert [t.name for t in section.tables] == ["answer_means", "answer_comparison"]
    assert section.tables[0].frame.columns == ["system", "n", *METRICS]
    assert any(line.startswith("No combined score: some items have no 'task'") for line in section.text)


def test_html_has_the_section_with_its_tables_and_figures(report: mas_eval.report.Report) -> None:
    html = report.to_html()
    page = _page(html)
    assert page.sections == SECTIONS
    assert [f for f in page.figures if f.startswith("items_")] == FIGURES
    block = html.split('id="answers"')[1].split("</section>")[0]
    assert "<h2" in block and "Answer quality" in block
    for header in (*METRICS, "combined_score", "diagnostics", "summarization", "p (Holm)"):
        assert f">{header}<" in block
    assert OVERALL in block


@pytest.mark.slow
def test_names_in_items_are_escaped(scores: mas_eval.Scores) -> None:
    # The payload as a system and as a task of the items: text everywhere, never markup.
    items = scores.items.with_columns(
        system=pl.col("system").replace({"mas": PAYLOAD}), task=pl.col("task").replace({"dx": PAYLOAD})
    )
    runs = scores.runs.with_columns(system=pl.col("system").replace({"mas": PAYLOAD}))
    report = build(mas_eval.Scores(tables={**scores.tables, "runs": runs, "items": items}), treatment=PAYLOAD)
    assert PAYLOAD in report.tables["answer_means"]["system"].to_list()
    assert PAYLOAD in report.tables["answer_comparison"]["task"].to_list()
    assert PAYLOAD in report.tables["answer_combined"]["task"].to_list()
    html = report.to_html()
    assert PAYLOAD not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html.split('id="answers"')[1]
    assert "script" not in _page(html).tags
    latex = report.to_latex()
    assert PAYLOAD not in latex and r"\textless{}script\textgreater{}" in latex


def test_markdown_and_latex_render_the_section(report: mas_eval.report.Report, tmp_path: Path) -> None:
    path = report.write(tmp_path / "r.md")
    text = path.read_text(encoding="utf-8")
    block = text.split("## Answer quality")[1].split("## Provenance")[0]
    assert (
        "| task | system | n | clinical_accuracy | reasoning_quality | diagnostic_accuracy | clinical_relevance |"
        in block
    )
    assert "| system | task | combined_score | diagnostics | communication | summarization |" in block
    assert "| task | metric | n | treatment | control | difference | 95% CI | p | p (Holm) | d | g | effect |" in block
    for name in FIGURES:
        assert (path.parent / "r_figures" / f"{name}.png").is_file()
        assert f"](r_figures/{name}.png)" in block

    latex = report.to_latex()
    for name in ("answer-means", "answer-comparison", "answer-combined"):
        assert rf"\label{{tab:mas-eval-{name}}}" in latex
    assert r"system & task & combined\_score & diagnostics & communication" in latex


def test_json_round_trips_the_section(report: mas_eval.report.Report, tmp_path: Path) -> None:
    loaded = load_json(report.write(tmp_path / "r.json"))
    (section,) = [s for s in loaded["sections"] if s["key"] == "answers"]
    assert [t["name"] for t in section["tables"]] == TABLES
    assert [f["name"] for f in section["figures"]] == FIGURES
    assert section["text"] == report.section("answers").text
    for name in TABLES:
        assert_frame_equal(loaded["tables"][name], report.tables[name], check_exact=True)
