"""Every notebook in notebooks/ runs top to bottom in a real Jupyter kernel and shows what it should.

The notebooks run once per test session, when the documentation site is built
(``tests/docs/docs_site.py``; ``tests/docs/test_doc_pages.py::test_the_site`` calls :func:`check_notebook`
for each: MyST-NB executes each in a kernel of the interpreter running the tests,
from its own folder, and a cell that raises fails the build); the executed copies, with every
output, are read back here. The stored notebooks keep no outputs.

After the notebook's own cells, a probe cell (added by the build, hidden from the page) prints
values from the kernel's namespace as JSON; each notebook's check reads those and the cells'
outputs. A first hidden cell points the notebook's figures at a folder of its own. A notebook
that reads files from outside the repository (``Check.needs``, e.g. Local-DDx's result files
beside the clone) is skipped, saying why, in a clone without them (the site shows it unexecuted).
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.conftest import CHECKOUT, LDDX
from tests.docs.docs_site import Site

pytestmark = pytest.mark.docs

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
PROBE_ID = "test-probe"
PDF_MAGIC, PNG_MAGIC = b"%PDF-", b"\x89PNG\r\n\x1a\n"


def cell(nb: nbformat.NotebookNode, cell_id: str) -> nbformat.NotebookNode:
    found = [c for c in nb.cells if c.get("id") == cell_id]
    assert len(found) == 1, f"no cell {cell_id!r}"
    return found[0]


def mime_types(nb: nbformat.NotebookNode, cell_id: str) -> set[str]:
    """The MIME types a cell displayed (results and ``display`` calls)."""
    return {kind for output in cell(nb, cell_id).outputs for kind in output.get("data", {})}


def printed(nb: nbformat.NotebookNode, cell_id: str) -> str:
    """What a cell printed to stdout."""
    return "".join(o.text for o in cell(nb, cell_id).outputs if o.output_type == "stream" and o.name == "stdout")


def plain(nb: nbformat.NotebookNode, cell_id: str) -> str:
    """The text/plain form of what a cell displayed."""
    return "".join(o.data.get("text/plain", "") for o in cell(nb, cell_id).outputs if "data" in o)


def probed(nb: nbformat.NotebookNode) -> dict[str, Any]:
    facts = json.loads(printed(nb, PROBE_ID))
    # The kernel ran this interpreter, in this environment, on this checkout's mas_eval.
    assert (facts["python"], facts["prefix"]) == (sys.executable, sys.prefix)
    assert Path(facts["mas_eval"]).is_relative_to(CHECKOUT), facts["mas_eval"]
    return facts


PROBE_HEADER = """\
import json as _json
import sys as _sys

import mas_eval as _mas_eval

_facts = {"python": _sys.executable, "prefix": _sys.prefix, "mas_eval": _mas_eval.__file__}
"""


# --- 01_quickstart ------------------------------------------------------------------------------

QUICKSTART_PROBE = """
_facts.update(
    ran=scores.ran,
    runs=scores.runs.height,
    summary_runs=ds.summary().filter(pl.col("table") == "runs")["rows"].item(),
    systems=headline["system"].to_list(),
    crisis=[crisis.preset, crisis.params["gt_boost"], crisis.params["er"]],
    comparisons=comparisons.select("task", "metric", "test", "correction").rows(),
    tasks=scores.runs.filter(pl.col("dqs").is_not_null())["task"].unique().sort().to_list(),
    compact=compact.columns,
)
print(_json.dumps(_facts))
"""


def check_quickstart(nb: nbformat.NotebookNode, figures: Path) -> None:
    facts = probed(nb)
    # The sample holds all three kinds of run; its transcripts are a trace the process family reads.
    assert facts["ran"] == ["decision", "diagnosis", "answers", "process"]
    assert facts["runs"] == facts["summary_runs"] > 0
    assert facts["systems"] == ["mas", "single"]
    assert facts["crisis"] == ["crisis-mas-poc", None, "weighted_average"]
    rows = facts["comparisons"]
    assert len(rows) == 2 * len(facts["tasks"])
    assert {(task, metric) for task, metric, _, _ in rows} == {
        (task, metric) for task in facts["tasks"] for metric in ("dqs", "decision_confidence")
    }
    assert {(test, correction) for _, _, test, correction in rows} == {("paired", "holm")}
    assert {"task", "metric", "difference", "ci_low", "ci_high", "p_adjusted"} <= set(facts["compact"])
    # What the reader sees: the summary, the frames, one sentence per comparison row, the forest plot.
    assert "beliefs" in plain(nb, "open")
    for frame in ("open", "score", "runs", "headline", "compact", "crisis", "presets", "namespace"):
        assert "text/html" in mime_types(nb, frame), frame
    sentences = printed(nb, "reading").splitlines()
    assert len(sentences) == len(rows) and all("MAS − single" in line for line in sentences)
    assert "image/png" in mime_types(nb, "forest")


# --- 02_paper_figures ---------------------------------------------------------------------------

#: Every figure the notebook saves, and the paper_style columns it is drawn at.
FIGURE_COLUMNS = {
    "forest": 1,
    "forest_cohens_d": 1,
    "distributions_dqs": 2,
    "distributions_confidence": 1,
    "paired_dqs": 1,
    "reliability": 1,
    "cost_quality": 1,
    "consensus_quality": 2,
    "beliefs": 1,
    "dqs_panels": 2,
}
#: Width in pixels of a saved PNG: 3.5 in (one column) or 7 in (two) at paper_style's 300 dpi.
PNG_WIDTH = {1: 1050, 2: 2100}

FIGURES_PROBE = """
_facts.update(figures=str(FIGURES), written=[path.name for path in written])
print(_json.dumps(_facts))
"""


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    return struct.unpack(">II", data[16:24])


def check_paper_figures(nb: nbformat.NotebookNode, figures: Path) -> None:
    facts = probed(nb)
    assert Path(facts["figures"]) == figures  # MAS_EVAL_FIGURES, not reports/figures
    expected = {f"{stem}{suffix}" for stem in FIGURE_COLUMNS for suffix in (".pdf", ".png")}
    assert sorted(facts["written"]) == sorted(expected)
    assert {path.name for path in figures.iterdir()} == expected  # and nothing else, no staging files
    for stem, columns in FIGURE_COLUMNS.items():
        pdf, png = (figures / f"{stem}.pdf").read_bytes(), (figures / f"{stem}.png").read_bytes()
        assert pdf.startswith(PDF_MAGIC) and b"%%EOF" in pdf[-1024:], stem
        assert png.startswith(PNG_MAGIC), stem
        assert png_size(png)[0] == PNG_WIDTH[columns], stem
    figure_cells = ("forest", "forest-d", "distributions", "violin", "paired", "reliability", "cost", "consensus")
    for figure_cell in (*figure_cells, "beliefs", "panels"):
        assert "image/png" in mime_types(nb, figure_cell), figure_cell
    assert "text/html" in mime_types(nb, "files")


# --- 03_statistics ------------------------------------------------------------------------------

STATISTICS_PROBE = """
_facts.update(
    tests={name: table["test"].to_list() for name, table in designs.items()},
    differences={name: table["difference"].to_list() for name, table in designs.items()},
    widths=side_by_side.select("correlation", "width_paired", "width_welch", "width_clustered").rows(),
    ratios=narrowing.select("predicted_width_ratio", "observed_width_ratio").rows(),
    design_effect=design_effect["design_effect"].to_list(),
    repeat_tests=[table["test"].item() for table in repeat_designs.values()],
    repeat_clusters=repeat_designs["clustered"]["n_clusters"].item(),
    repeat_cases=repeated.runs["case_id"].n_unique(),
    needed=needed.select("design", "n_required").rows(),
    planning=planning.select("n_cases", "observed_d_z", "mde_d_z", "power_at_observed").rows(),
    calibrated=calibrated.select("system", "n", "ece", "brier").rows(),
)
print(_json.dumps(_facts))
"""


def check_statistics(nb: nbformat.NotebookNode, figures: Path) -> None:
    facts = probed(nb)
    tests = facts["tests"]
    tasks = len(tests["paired"])
    assert tests == {"paired": ["paired"] * tasks, "welch": ["welch"] * tasks, "clustered": ["ols_cluster"] * tasks}
    # One estimate, three uncertainties: pairing narrows the CI when the per-case scores correlate,
    # as much as r predicts, and clustering on the case reproduces the paired CI here.
    differences = facts["differences"]
    assert differences["welch"] == pytest.approx(differences["paired"], abs=1e-12)
    assert differences["clustered"] == pytest.approx(differences["paired"], abs=1e-12)
    for r, paired, welch, clustered in facts["widths"]:
        assert (paired < welch) == (r > 0)
        assert clustered == pytest.approx(paired, rel=0.01)
    for predicted, observed in facts["ratios"]:
        assert observed == pytest.approx(predicted, abs=0.01)
    assert all(effect > 1 for effect in facts["design_effect"])
    assert facts["repeat_tests"] == ["paired", "welch", "ols_cluster"]
    assert facts["repeat_clusters"] == facts["repeat_cases"]
    needed = dict(facts["needed"])
    assert needed["paired"] < needed["independent"]
    for n_cases, observed, mde, power in facts["planning"]:
        assert n_cases > 0 and 0 < mde < 1 and 0 < power <= 1
        assert (power > 0.8) == (observed > mde)
    assert [row[0] for row in facts["calibrated"]] == ["mas", "single"]
    assert all(n > 0 and 0 <= ece <= 1 and 0 <= brier <= 1 for _, n, ece, brier in facts["calibrated"])
    # What the reader sees.
    assert "text/html" in mime_types(nb, "designs")
    assert len(printed(nb, "why").splitlines()) == tasks
    assert len(printed(nb, "mde-reading").splitlines()) == tasks
    assert "ECE" in printed(nb, "calibration-reading")
    assert "image/png" in mime_types(nb, "reliability")


# --- 04_reproduce_lddx --------------------------------------------------------------------------

REPRODUCE_LDDX_PROBE = """
_facts.update(
    runs=result.runs,
    files=len(result.files),
    warnings=len(result.warnings),
    skipped=len(result.skipped),
    presets=[scores_spec.preset, scores_v6.preset],
    label_rules=[scores_spec.params["label_rules"], scores_v6.params["label_rules"]],
    presets_differ=differ.height,
    archive_case_1_tp=both.filter(pl.col("run_id").str.contains("Case_1_20250709")).sort("preset")["tp"].to_list(),
    summary={f"{row['metric']}/{row['basis']}": [row["reproduced"], row["items"]] for row in rep.summary.to_dicts()},
    credibility=credibility_by_group.rows(),
    variants=messages_by_variant.rows(),
    recall=recall_check.rows(),
    label_count_runs=[differing.len(), file_and_ours.height],
    v8_5_caa=recorded.filter(pl.col("file_group") == "v8_5")["caa_count"].sum(),
    total_is_sum=total_is_sum,
    ground_truth=[ground_truth.filter(same_kind).height, ground_truth.height],
    differences=differences.rows(),
)
print(_json.dumps(_facts))
"""

#: The kinds of ground-truth label differences the notebook explains: (the file's label, ours).
LDDX_DIFFERENCES = {("AE or CAA", "FN"), ("AE or CAA", "TM-SM"), ("AE or CAA", "TP"), ("TP", "FN"), ("TP", "AE")}


def check_reproduce_lddx(nb: nbformat.NotebookNode, figures: Path) -> None:
    facts = probed(nb)
    assert (facts["runs"], facts["files"], facts["skipped"]) == (16, 16, 0)
    assert facts["presets"] == facts["label_rules"] == ["spec", "lddx-v6"]
    assert 0 < facts["presets_differ"] <= facts["runs"]
    assert facts["archive_case_1_tp"] == [2, 1]  # lddx-v6 promotes a frequent can't-miss diagnosis to TP, spec does not
    # What the text states from the formulas and the messages, as the summary has it: [reproduced, items].
    summary = facts["summary"]
    assert summary["tempo_score/messages"] == [112, 112]
    assert summary["credibility/messages"] == [43, 136]
    for metric in ("tp_rate", "caa_weight", "traditional_precision", "clinical_reasoning_quality", "diagnostic_safety"):
        assert summary[f"{metric}/recorded counts"] == [16, 16], metric
    assert summary["traditional_recall/recorded counts"] == [7, 16]
    # Credibility: every agent of the 5 archive (v6) files, none of the 11 v8_5 files, each scored higher here.
    archive, v8_5 = facts["credibility"]  # file_group, files, agents, reproduced, least and largest difference
    assert archive[:4] == ["v6 archive", 5, 43, 43] and max(abs(gap) for gap in archive[4:]) <= 1e-6
    assert v8_5[:4] == ["v8_5", 11, 93, 0] and [round(gap, 1) for gap in v8_5[4:]] == [0.3, 15.5]
    variants = {(name, metric): (items, reproduced) for name, metric, items, reproduced in facts["variants"]}
    assert variants[("lddx-v6", "credibility")] == (136, 43)
    assert variants[("keyword_counting='occurrences'", "credibility")] == (136, 0)
    assert variants[("tempo_count_mentions=False", "tempo_score")] == (112, 96)
    assert facts["recall"] == [["v6 archive", 5, 5, 1], ["v8_5", 11, 2, 11]]
    # The labels depend on the synonym table, so the text names no counts there, only kinds and examples.
    assert summary["total_gt/labels"] == [16, 16]
    assert all(summary[f"{label}/labels"][1] == 16 for label in ("tp", "fp", "fn", "caa", "ae"))
    differing, shown = facts["label_count_runs"]
    assert 0 < differing == shown
    assert facts["total_is_sum"] is True and facts["v8_5_caa"] == 0
    same, ground_truths = facts["ground_truth"]
    differences = {(recorded, ours): (n, diagnoses) for recorded, ours, n, diagnoses in facts["differences"]}
    assert same + sum(n for n, _ in differences.values()) == ground_truths == 80
    assert set(differences) <= LDDX_DIFFERENCES, "explain the new kind of difference in the notebook"
    excluded = differences[("AE or CAA", "FN")][1].split("; ")
    assert excluded and all(item.endswith(", v8_5)") for item in excluded)
    assert differences[("AE or CAA", "TM-SM")][1] == "dehydration (Case 9, v8_5)"
    matched_here = differences[("AE or CAA", "TP")][1]
    for example in ("gout (Case 11, v8_5)", "gout (Case 3, v6 archive)", "intestinal atresia (Case 4, v6 archive)"):
        assert example in matched_here, example
    assert "pseudogout (Case 11, v8_5)" in differences[("TP", "FN")][1]
    assert "contrast-induced nephropathy (Case 1, v8_5)" in differences[("TP", "AE")][1]
    assert (summary["tp_pairs_matched/equivalence"][1], summary["fp_fn_left_unmatched/equivalence"][1]) == (32, 48)
    # What the reader sees: the summary, the frames, the sentences, both figures.
    assert "16 runs from 16 files" in printed(nb, "ingest")
    assert len(printed(nb, "warnings").splitlines()) == facts["warnings"] > 0
    for frame in (
        "ingest", "recorded", "score", "side-by-side", "reproduce", "credibility", "choices",
        "recall", "label-counts", "equivalence",
    ):  # fmt: skip
        assert "text/html" in mime_types(nb, frame), frame
    assert len(printed(nb, "ground-truth").splitlines()) == 2 + len(differences)
    assert len(printed(nb, "equivalence").splitlines()) == 2
    assert "image/png" in mime_types(nb, "collaboration")
    assert "image/png" in mime_types(nb, "credibility-figure")


# --- 05_answer_metrics --------------------------------------------------------------------------

ANSWER_METRICS_PROBE = """
_facts.update(
    row=row,
    hand=hand,
    entities=entities.select("side", "category", "entity").rows(),
    answers=answers.height,
    items=scores.items.height,
    item_columns=scores.items.columns,
    ran=scores.ran,
    comparisons=comparisons.select("task", "metric", "test", "n_pairs", "difference").rows(),
    task_scores=task_scores,
    weights=WEIGHTS,
    renormalised=[renormalised.per_task, renormalised.overall],
    plain=[plain.per_task, plain.overall],
    per_system={system: result.overall for system, result in per_system.items()},
    report=[report.model_id, report.overall_scores, report.task_scores, report.metadata["combined_weights"]],
    markdown=markdown,
)
print(_json.dumps(_facts))
"""


def check_answer_metrics(nb: nbformat.NotebookNode, figures: Path) -> None:
    facts = probed(nb)
    # The notebook's worked example: "Sepsis; give IV fluids and insulin" against "sepsis, insulin".
    row = facts["row"]
    assert row["clinical_accuracy"] == pytest.approx(7 / 9)  # (3·1 + 2·1 + 2·1) / (3·1 + 2·2 + 2·1)
    jaccards = {c: row[f"entity_jaccard_{c}"] for c in ("diagnoses", "treatments", "medications", "symptoms", "labs")}
    assert jaccards == {"diagnoses": 1.0, "treatments": 0.5, "medications": 1.0, "symptoms": None, "labs": None}
    assert row["accuracy_fallback_used"] is False
    assert facts["entities"] == [
        ["prediction", "diagnoses", "sepsis"],
        ["prediction", "medications", "insulin"],
        ["prediction", "treatments", "insulin"],
        ["prediction", "treatments", "iv fluids"],
        ["reference", "diagnoses", "sepsis"],
        ["reference", "medications", "insulin"],
        ["reference", "treatments", "insulin"],
    ]
    # The rationale the notebook chose: 6 of 17 + 12 words shared; 2 structure and 2 evidence
    # markers, 2 of sepsis's 3 facts, one fallacy.
    expected = {"token_f1": 12 / 29, "structure": 2 / 3, "evidence": 2 / 3, "factual_consistency": 2 / 3}
    expected |= {"fallacy_penalty": 0.15}
    expected["reasoning_quality"] = 0.4 * 12 / 29 + (0.15 + 0.2 + 0.25) * 2 / 3 - 0.15
    for name, value in expected.items():
        assert row[name] == pytest.approx(value), name
        assert facts["hand"][name] == pytest.approx(value), name
    # Many answers: one items row per answer, compared item by item per task.
    assert "answers" in facts["ran"]
    assert facts["items"] == facts["answers"] > 0
    assert {"system", "task", "item_id", "clinical_accuracy", "reasoning_quality"} <= set(facts["item_columns"])
    tasks = sorted(facts["task_scores"])
    rows = facts["comparisons"]
    assert {(task, metric) for task, metric, *_ in rows} == {
        (task, metric) for task in tasks for metric in ("clinical_accuracy", "reasoning_quality")
    }
    assert len(rows) == 2 * len(tasks) == 6
    assert all(test == "paired" for _, _, test, _, _ in rows)
    assert 2 * sum(n for task, metric, _, n, _ in rows if metric == "clinical_accuracy") == facts["items"]
    # The combined score, by hand: diagnostics and communication present, safety and summarization not.
    weights = facts["weights"]
    assert weights == {"diagnostics": 0.4, "safety": 0.3, "communication": 0.2, "summarization": 0.1}
    (renormalised, renormalised_overall), (plain, plain_overall) = facts["renormalised"], facts["plain"]
    assert sorted(renormalised) == sorted(plain) == tasks
    for task, scores in facts["task_scores"].items():
        weighted = 0.4 * scores["clinical_accuracy"] + 0.2 * scores["reasoning_quality"]
        assert renormalised[task] == pytest.approx(weighted / 0.6)
        assert plain[task] == pytest.approx(weighted / 1.0)
    assert renormalised_overall == pytest.approx(sum(renormalised.values()) / len(tasks))
    assert plain_overall == pytest.approx(sum(plain.values()) / len(tasks))
    assert facts["per_system"]["mas"] == pytest.approx(renormalised_overall)
    assert facts["per_system"]["mas"] > facts["per_system"]["single"]  # the planted effect
    # The report: the same combined score, its weights recorded, shown first in the Markdown.
    model, overall_scores, report_tasks, report_weights = facts["report"]
    assert model == "mas" and report_weights == weights
    assert overall_scores["combined_score"] == pytest.approx(renormalised_overall)
    assert {task: s["combined_score"] for task, s in report_tasks.items()} == pytest.approx(renormalised)
    markdown = facts["markdown"]
    assert markdown.startswith("# Benchmark report: mas")
    assert markdown.index("**combined_score: ") < markdown.index("## Overall Scores")
    for title in ("## Overall Scores", "## Task Scores", "## Detailed Results", "## Metadata"):
        assert title in markdown, title
    # What the reader sees: the frames, the arithmetic, one sentence per comparison row, the figure, the report.
    for frame in ("item", "entities", "jaccard", "simulate", "score", "compare", "combined", "per-system"):
        assert "text/html" in mime_types(nb, frame), frame
    assert "= 7/9 = 0.7778" in printed(nb, "jaccard")
    assert "RQ = 0.4·0.4138 + 0.15·0.6667 + 0.2·0.6667 + 0.25·0.6667 − 0.15 = 0.4155" in printed(nb, "reasoning")
    sentences = printed(nb, "reading").splitlines()
    assert len(sentences) == len(rows) and all("MAS − single" in line for line in sentences)
    assert len(printed(nb, "categories").splitlines()) == 4
    assert "renormalised:" in printed(nb, "arithmetic") and "not renormalised:" in printed(nb, "arithmetic")
    assert "image/png" in mime_types(nb, "figure")
    assert "text/markdown" in mime_types(nb, "report")


# --- 06_inspect_logs ----------------------------------------------------------------------------

INSPECT_LOGS_PROBE = """
_facts.update(
    runs=ds.collect("runs").height,
    named=scores.named,
    paired=paired.select("test", "n_pairs", "difference").row(0),
    once=once.select("test", "ci_method").row(0),
    matched=matched.select("comparison", "cases", "mean_k", "unmatched").rows(),
    beside=ours.join(theirs, on="system").select("accuracy", "match/accuracy", "stderr", "match/stderr").rows(),
)
print(_json.dumps(_facts))
"""


def check_inspect_logs(nb: nbformat.NotebookNode, figures: Path) -> None:
    facts = probed(nb)
    assert facts["runs"] == 10 + 10 * 12  # the debate once, the single agent twelve times, on ten questions
    assert "match" in facts["named"]["outcomes"]
    test, pairs, difference = facts["paired"]
    assert (test, pairs) == ("paired", 10) and difference > 0
    assert facts["once"] == ["mcnemar", "newcombe"]  # one run each: McNemar's exact test
    (one, one_cases, one_k, _), (matched, cases, k, unmatched) = facts["matched"]
    assert one_cases == cases  # both rows over the matched questions
    assert (one, matched) == ("k=1", "compute-matched") and one_k == 1.0
    assert cases + unmatched == 10 and 1 < k <= 12
    for accuracy, theirs, stderr, their_stderr in facts["beside"]:  # our numbers beside inspect's own
        assert accuracy == pytest.approx(theirs, rel=1e-12) and stderr == pytest.approx(their_stderr, rel=1e-12)
    for frame in ("ingest", "rates", "paired", "cost", "shares", "matched", "pass-at-k"):
        assert "text/html" in mime_types(nb, frame), frame
    assert "image/png" in mime_types(nb, "figure")
    assert (figures / "inspect_frontier.pdf").read_bytes().startswith(PDF_MAGIC)


# --- 07_agent_logs ------------------------------------------------------------------------------

AGENT_LOGS_PROBE = """
_facts.update(
    chosen=chosen.columns,
    silent=sorted(chosen.silent),
    tests=sorted(set(comparison["test"].to_list())),
    agents=profile.filter(metric="agents_active").sort("system").select("system", "mean").rows(),
    overhead=profile.filter(metric="token_overhead", system=DEBATE)["mean"].item(),
    shares=shares.filter(system=DEBATE)["token_share"].sum(),
    first_case=differ.row(0, named=True)["discordance"],
    noninferior=noninferior.select("hypothesis", "margin", "verdict").row(0),
    worth=worth.select("quadrant", "icer").row(0),
    sections=[section.key for section in report.sections],
    not_in_data=report.not_in_data,
)
print(_json.dumps(_facts, default=str))
"""


def check_agent_logs(nb: nbformat.NotebookNode, figures: Path) -> None:
    facts = probed(nb)
    # The logs' scores are compared, not the decision family's empty DQS, and the notebook says so.
    assert facts["chosen"] == ["graded", "match", "shape/messages", "shape/short"] and facts["silent"] == ["decision"]
    assert "Compared by default: graded, match" in printed(nb, "chosen")
    assert facts["tests"] == ["paired"]  # the single agent repeated each question: the paired t on case means
    (debate, debate_agents), (single, single_agents) = facts["agents"]
    assert (debate, single) == ("mockllm/model debate", "mockllm/single generate")
    assert debate_agents > 1 and single_agents == 1
    assert facts["overhead"] > 1 and facts["shares"] == pytest.approx(1.0)
    assert facts["first_case"] == "treatment higher"
    assert facts["noninferior"][:2] == ["noninferior", 0.1] and facts["noninferior"][2].startswith("non-inferior")
    assert facts["worth"][0] == "dearer and better" and facts["worth"][1] > 0
    assert facts["sections"][-2:] == ["not_in_data", "provenance"] and "outcomes" in facts["sections"]
    assert facts["not_in_data"][0].startswith("Decision quality: no run has a DQS")
    for shown in ("pass-rates", "forest", "pass-at-k", "frontier", "per-correct", "process", "shares", "noninferior",
                  "worth"):  # fmt: skip
        assert "image/png" in mime_types(nb, shown), shown
    for name in ("logs_pass_rates.pdf", "logs_process.pdf", "logs_cost_plane.pdf"):
        assert (figures / name).read_bytes().startswith(PDF_MAGIC), name
    assert (figures / "logs_report.html").read_text(encoding="utf-8").count("<svg") >= 10


@dataclass(frozen=True)
class Check:
    """What a notebook's probe cell reports, and how the executed notebook is checked."""

    probe: str
    verify: Callable[[nbformat.NotebookNode, Path], None]
    #: A folder outside the repository that the notebook reads; without it the run is skipped, saying why.
    needs: Path | None = None


CHECKS = {
    "01_quickstart.ipynb": Check(QUICKSTART_PROBE, check_quickstart),
    "02_paper_figures.ipynb": Check(FIGURES_PROBE, check_paper_figures),
    "03_statistics.ipynb": Check(STATISTICS_PROBE, check_statistics),
    "04_reproduce_lddx.ipynb": Check(REPRODUCE_LDDX_PROBE, check_reproduce_lddx, needs=LDDX),
    "05_answer_metrics.ipynb": Check(ANSWER_METRICS_PROBE, check_answer_metrics),
    "06_inspect_logs.ipynb": Check(INSPECT_LOGS_PROBE, check_inspect_logs),
    "07_agent_logs.ipynb": Check(AGENT_LOGS_PROBE, check_agent_logs),
}


def test_there_are_notebooks_and_each_is_checked() -> None:
    assert NOTEBOOKS
    assert {path.name for path in NOTEBOOKS} == set(CHECKS)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_clean(notebook: Path) -> None:
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) >= (4, 5)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    ids = [c.get("id") for c in nb.cells]
    assert all(ids) and len(set(ids)) == len(ids), "every cell needs its own id"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert all(c.outputs == [] and c.execution_count is None for c in code), "store the notebook without outputs"
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    assert "repository root" in first.source and "notebooks/" in first.source


#: The probe each notebook's build appends, by file name (``tests/docs/docs_site.py``).
PROBES = {name: PROBE_HEADER + check.probe for name, check in CHECKS.items()}


def check_notebook(notebook: Path, docs_site: Site) -> None:
    """Check ``notebook``'s executed copy from the documentation build (``tests/docs/test_doc_pages.py``
    runs this for every notebook, in the one test that uses the site)."""
    check = CHECKS[notebook.name]
    if check.needs is not None and not check.needs.is_dir():
        pytest.skip(f"{check.needs} is not beside this clone (CI has it)")
    assert docs_site.returncode == 0, f"the documentation build failed:\n{docs_site.log}"
    nb = nbformat.read(docs_site.executed / notebook.name, as_version=4)
    assert nb.cells[0].get("id") == "docs-before" and nb.cells[-1].get("id") == PROBE_ID
    check.verify(nb, docs_site.figures(notebook.name))
