"""The MAS-vs-baseline report's content: which sections, tables and figures, from which inputs.

:func:`build` is the one place that decides what a report holds; the renderers only lay it out.
A section whose inputs are absent (no ground truth, no cost, a single system) is kept as a
one-line reason, never an empty table or figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.report.answer_quality import ANSWER_COMPARISON, ANSWER_METRICS, answers_section, has_items
from mas_eval.report.diagnosis import DIAGNOSIS_METRICS, diagnosis_section, has_diagnosis
from mas_eval.report.document import Report, ReportFigure, ReportTable, Section
from mas_eval.report.findings import after_correction, correction_of, findings
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.provenance import provenance

__all__ = [
    "COMPARISON_DESIGN",
    "COMPARISON_METRICS",
    "HEADLINE",
    "build",
    "default_comparisons",
    "findings",
    "system_means",
]

#: The comparison a report runs when it is given none (the demo's): these metrics, this design;
#: and the diagnostic scores when the runs have them (:data:`~mas_eval.report.diagnosis.DIAGNOSIS_METRICS`).
COMPARISON_METRICS = ["dqs", "decision_confidence"]
COMPARISON_DESIGN: dict[str, Any] = {
    "by": "task",
    "pair_on": "case_id",
    "test": "paired",
    "correction": "holm",
}

#: The per-system means a report leads with (those present in the scores).
HEADLINE = [
    "dqs", "gt_match", "decision_confidence", "consensus_level", "agreement_percentage", "balance_score",
    "efficiency_score", "er_unassigned", "cost_usd",
]  # fmt: skip

#: What a cost-quality plot can put on its x axis, in order of preference.
_COSTS = ("cost_usd", "tokens_used", "processing_time_seconds")


def system_means(run_metrics: pl.DataFrame, metrics: Sequence[str] = HEADLINE) -> pl.DataFrame:
    """Mean of each metric (those present) per system, with the number of runs; one row per system.

    >>> runs = pl.DataFrame({"system": ["mas", "single", "mas"], "dqs": [0.5, 0.25, 1.0]})
    >>> system_means(runs).rows()
    [('mas', 2, 0.75), ('single', 1, 0.25)]
    """
    present = [name for name in metrics if name in run_metrics.columns]
    return (
        run_metrics.group_by("system")
        .agg(pl.len().alias("runs"), *(pl.col(name).cast(pl.Float64).mean() for name in present))
        .sort("system")
    )


def _has_values(frame: pl.DataFrame, column: str) -> bool:
    return column in frame.columns and frame[column].drop_nulls().len() > 0


def _cases_run_by_both(runs: pl.DataFrame, treatment: str, control: str) -> int:
    """How many cases have runs of both systems: the pairs a paired design can use."""
    return (
        runs.filter(pl.col("system").is_in([treatment, control]))
        .group_by("case_id")
        .agg(pl.col("system").n_unique().alias("systems"))
        .filter(pl.col("systems") == 2)
        .height
    )


def _open_scores(scores: Scores | str | Path) -> Scores:
    if isinstance(scores, Scores):
        return scores
    if isinstance(scores, str | Path):
        return Scores.open(scores)
    msg = f"report: scores must be a Scores object or a Scores folder, not {type(scores).__name__}"
    raise InvalidParameterError(msg)


def _open_dataset(dataset: Dataset | str | Path | None) -> Dataset | None:
    if dataset is None or isinstance(dataset, Dataset):
        return dataset
    return Dataset.open(dataset)


def _default_metrics(runs: pl.DataFrame) -> list[str]:
    """The default comparison's metrics: :data:`COMPARISON_METRICS`, then the diagnostic scores the runs have."""
    return [*COMPARISON_METRICS, *(name for name in DIAGNOSIS_METRICS if _has_values(runs, name))]


def default_comparisons(
    runs: pl.DataFrame, treatment: str = "mas", control: str = "single"
) -> tuple[pl.DataFrame | None, str]:
    """The comparison a report runs when given none (the demo's), or ``None`` and why not.

    :data:`COMPARISON_DESIGN` (by task, paired on case, Holm) over :data:`COMPARISON_METRICS`
    and the diagnostic scores the runs have; an unpaired Welch test when fewer than two cases
    were run by both systems.
    """
    from mas_eval.stats import compare

    paired_cases = _cases_run_by_both(runs, treatment, control)

    systems = set(runs["system"].unique().to_list())
    missing = [name for name in (treatment, control) if name not in systems]
    if missing:
        have = ", ".join(sorted(map(str, systems)))
        return None, f"no comparison: the scores have no run of system {', '.join(missing)} (they have: {have})"
    metrics = [name for name in _default_metrics(runs) if _has_values(runs, name)]
    if not metrics:
        return None, "no comparison: the scores have no dqs or decision_confidence values"
    design = dict(COMPARISON_DESIGN)
    if paired_cases < 2:
        design.update(pair_on=None, test="welch")
    by = design.pop("by")
    if not _has_values(runs, by):
        by = None
    table = compare(runs, metrics, by=by, treatment=treatment, control=control, **design)
    return table, ""


def _comparison_description(comparisons: pl.DataFrame) -> str:
    tests = ", ".join(sorted(set(comparisons["test"].drop_nulls().to_list()))) or "none"
    correction = correction_of(comparisons)
    return (
        f"{comparisons.height} comparisons (test: {tests}); p-values adjusted across the table "
        f"({correction}). The difference is treatment − control, with its 95% CI; d is Cohen's d "
        "(d_z for paired designs)."
    )


def build(
    scores: Scores | str | Path,
    comparisons: pl.DataFrame | None = None,
    *,
    title: str = "MAS vs single-agent baseline",
    dataset: Dataset | str | Path | None = None,
    treatment: str = "mas",
    control: str = "single",
    command: str | None = None,
) -> Report:
    """Build the MAS-vs-baseline report of ``scores``.

    Parameters
    ----------
    scores
        What :func:`mas_eval.score` returned, or the folder :meth:`Scores.write` wrote.
    comparisons
        A :func:`mas_eval.stats.compare` table; ``None`` runs :data:`COMPARISON_DESIGN` (by
        task, paired on case, Holm) on :data:`COMPARISON_METRICS` and the diagnostic scores
        the runs have, or an unpaired Welch test when no case was run by both systems.
    title
        The report's title.
    dataset
        The scored Dataset (or its folder), for the dataset summary and its files' hashes.
    treatment, control
        The two systems compared, as in ``compare``.
    command
        The command or call that built the report, recorded in the provenance (the CLI passes
        its command line); by default the Python call.

    Returns
    -------
    Report
        Sections: ``dataset``, ``headline``, ``comparison``, ``forest``, ``distributions``,
        ``paired``, ``calibration``, ``efficiency``, then ``diagnosis`` when the scores hold a
        diagnostic team's outputs (:mod:`mas_eval.report.diagnosis`), ``answers`` when they have
        an ``items`` table (:mod:`mas_eval.report.answer_quality`: answer scores per task and
        system, compared item by item, and the combined score), and ``provenance``. Write it with
        :meth:`Report.write` (``.html``, ``.md``, ``.json``, ``.tex``).

    Notes
    -----
    Figures are drawn by :mod:`mas_eval.plots` in its double-column paper style. The
    calibration section uses :func:`mas_eval.stats.calibration` (ECE, MCE, Brier) on
    ``decision_confidence`` against ``gt_match``.

    Examples
    --------
    >>> import mas_eval
    >>> from mas_eval.report import build
    >>> scores = mas_eval.score(mas_eval.simulate(runs=200, seed=1))
    >>> report = build(scores, title="Pilot")
    >>> [s.key for s in report.sections][:3]
    ['dataset', 'headline', 'comparison']
    """
    from mas_eval import plots

    scores = _open_scores(scores)
    ds = _open_dataset(dataset)
    if "runs" not in scores:
        msg = f"report: the scores have no 'runs' table (they have: {', '.join(scores.names)}); score a Dataset first"
        raise SchemaError(msg)
    runs = scores.runs
    if runs.height == 0:
        msg = "report: the scores' 'runs' table is empty; there is nothing to report"
        raise SchemaError(msg)
    given = comparisons is not None
    why_no_comparison = ""
    paired_cases = _cases_run_by_both(runs, treatment, control)
    if comparisons is None:
        comparisons, why_no_comparison = default_comparisons(runs, treatment, control)

    with plots.paper_style(columns=2):
        sections = [
            _dataset_section(runs, ds),
            _headline_section(runs),
            _comparison_section(comparisons, why_no_comparison, treatment, control),
            _forest_section(comparisons, why_no_comparison),
            _distributions_section(runs),
            _paired_section(runs, treatment, control, paired_cases),
            _calibration_section(runs),
            _efficiency_section(runs),
        ]
        if has_diagnosis(scores):
            sections.append(diagnosis_section(scores, comparisons, why_no_comparison, treatment, control))
        if has_items(scores):
            sections.append(answers_section(scores["items"], treatment, control))
    inputs: dict[str, str | Path] = {}
    if scores.source is not None:
        inputs["scores"] = scores.source
    if ds is not None and ds.source is not None:
        inputs["dataset"] = ds.source
    call = command or (
        f"mas_eval.report.build(scores, comparisons={'<given>' if given else None}, title={title!r}, "
        f"dataset={'<given>' if ds is not None else None}, treatment={treatment!r}, control={control!r})"
    )
    record = provenance(
        inputs=inputs,
        parameters={
            "preset": scores.preset,
            "params": scores.params,
            "families": {"ran": scores.ran, "skipped": scores.skipped},
            "comparison": "given" if given else {"metrics": _default_metrics(runs), **COMPARISON_DESIGN},
            **({"answer_comparison": {"metrics": ANSWER_METRICS, **ANSWER_COMPARISON}} if has_items(scores) else {}),
            "treatment": treatment,
            "control": control,
            "title": title,
        },
    )
    record["call"] = call
    sections.append(_provenance_section(record, scores))
    return Report(title=title, sections=sections, provenance=record)


# -- sections ---------------------------------------------------------------------------------


def _dataset_section(runs: pl.DataFrame, ds: Dataset | None) -> Section:
    keys = [name for name in ("system", "task", "variant") if _has_values(runs, name)]
    per_group = runs.group_by(keys).agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort(keys)
    text = [f"{runs.height:,} runs of {runs['system'].n_unique()} system(s) on {runs['case_id'].n_unique():,} cases."]
    tables = [ReportTable("runs_per_group", f"Runs and cases per {', '.join(keys)}", per_group)]
    if ds is not None:
        tables.append(ReportTable("dataset_tables", "Rows per table of the scored Dataset", ds.summary()))
    return Section("dataset", "Dataset", text=text, tables=tables)


def _headline_section(runs: pl.DataFrame) -> Section:
    means = system_means(runs)
    text = [
        "Means over runs. dqs is decision quality, gt_match the share of runs recommending the correct "
        "alternative, decision_confidence 0.6 × consensus + 0.4 × mean agent confidence for teams."
    ]
    return Section(
        "headline", "Headline per system", text=text, tables=[ReportTable("headline", "Mean per system", means)]
    )


def _comparison_section(comparisons: pl.DataFrame | None, why: str, treatment: str, control: str) -> Section:
    title = f"{treatment} vs {control}"
    if comparisons is None or comparisons.height == 0:
        return Section("comparison", title, omitted=why or "no comparison: the comparison table is empty")
    text = [_comparison_description(comparisons), *findings(comparisons, treatment)]
    return Section(
        "comparison",
        title,
        text=text,
        tables=[ReportTable("comparison", f"{treatment} − {control}: one row per group and metric", comparisons)],
    )


def _forest_section(comparisons: pl.DataFrame | None, why: str) -> Section:
    from mas_eval import plots

    title = "Effects at a glance"
    if comparisons is None or comparisons.height == 0:
        return Section("forest", title, omitted=why or "no comparison rows to plot")
    if comparisons["ci_low"].drop_nulls().len() == 0:
        return Section("forest", title, omitted="no comparison row has a confidence interval to plot")
    figures = [
        ReportFigure(
            "forest_difference",
            f"Differences with 95% CIs; filled markers stay significant {after_correction(comparisons)}.",
            plots.forest(comparisons, effect="difference"),
        ),
        ReportFigure("forest_cohens_d", "Cohen's d with its 95% CI.", plots.forest(comparisons, effect="cohens_d")),
    ]
    return Section("forest", title, figures=figures)


def _distributions_section(runs: pl.DataFrame) -> Section:
    from mas_eval import plots

    title = "Distributions"
    metrics = [name for name in ("dqs", "decision_confidence") if _has_values(runs, name)]
    if not metrics:
        return Section("distributions", title, omitted="the scores have no dqs or decision_confidence values")
    by = "task" if _has_values(runs, "task") else None
    figures = [
        ReportFigure(
            f"distribution_{name}",
            f"{name} per system{' and task' if by else ''}: boxes, jittered runs, means with 95% CIs.",
            plots.distributions(runs, name, by=by),
        )
        for name in metrics
    ]
    return Section("distributions", title, figures=figures)


def _paired_section(runs: pl.DataFrame, treatment: str, control: str, both: int) -> Section:
    from mas_eval import plots

    title = "Paired differences"
    if not _has_values(runs, "dqs"):
        return Section("paired", title, omitted="the scores have no dqs values")
    if both < 2:
        return Section("paired", title, omitted=f"fewer than 2 cases were run by both {treatment} and {control}")
    figure = plots.paired(runs, "dqs", pair_on="case_id", treatment=treatment, control=control)
    caption = f"Per-case dqs differences {treatment} − {control} over {both:,} cases; mean and its 95% CI marked."
    return Section("paired", title, figures=[ReportFigure("paired_dqs", caption, figure)])


def _calibration_section(runs: pl.DataFrame) -> Section:
    from mas_eval import plots
    from mas_eval.stats import calibration

    title = "Calibration"
    if not _has_values(runs, "gt_match"):
        return Section(
            "calibration", title, omitted="no ground truth: gt_match is null in every run, so calibration is undefined"
        )
    if not _has_values(runs, "decision_confidence"):
        return Section("calibration", title, omitted="no decision_confidence values to calibrate")
    summary = calibration(runs)
    text = [
        "Is the stated confidence (decision_confidence) the probability of matching the ground truth? "
        "ECE is the run-weighted mean gap between confidence and accuracy over 10 equal-width bins; "
        "Brier the mean squared error of the confidence as a forecast."
    ]
    figure = plots.reliability(runs)
    return Section(
        "calibration",
        title,
        text=text,
        tables=[ReportTable("calibration", "Calibration per system", summary)],
        figures=[ReportFigure("reliability", "Reliability diagram: accuracy per confidence bin.", figure)],
    )


def _efficiency_section(runs: pl.DataFrame) -> Section:
    from mas_eval import plots

    title = "Efficiency and cost"
    cost = next((name for name in _COSTS if _has_values(runs, name)), None)
    if cost is None:
        return Section("efficiency", title, omitted="the runs record no cost, tokens or seconds")
    if not _has_values(runs, "dqs"):
        return Section("efficiency", title, omitted="the scores have no dqs values to set against cost")
    usage = [name for name in (*_COSTS, "efficiency_score") if name in runs.columns]
    means = system_means(runs, usage)
    by = "variant" if _has_values(runs, "variant") else None
    figure = plots.cost_quality(runs, quality="dqs", cost=cost, by=by)
    caption = f"Mean dqs against mean {cost} per system{' and variant' if by else ''}, 95% CIs, Pareto front."
    return Section(
        "efficiency",
        title,
        tables=[ReportTable("usage", "Mean usage per system", means)],
        figures=[ReportFigure("cost_quality", caption, figure)],
    )


def _provenance_section(record: dict[str, Any], scores: Scores) -> Section:
    rows = [
        ("mas_eval version", str(record["mas_eval_version"])),
        ("created (UTC)", str(record["created_utc"])),
        ("Python", str(record["python"])),
        ("preset", scores.preset),
        ("call", str(record["call"])),
    ]
    for name, value in _flatten(record["parameters"].get("params", {}), "params"):
        rows.append((name, value))
    for name, entry in record["inputs"].items():
        for file, digest in entry["sha256"].items():
            rows.append((f"sha256 {name}/{file}", digest))
    if not record["inputs"]:
        rows.append(("inputs", "scores computed in memory: no input files to hash"))
    frame = pl.DataFrame(rows, schema=["item", "value"], orient="row")
    return Section("provenance", "Provenance", tables=[ReportTable("provenance", "How this report was made", frame)])


def _flatten(value: object, prefix: str) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for key, inner in value.items() for pair in _flatten(inner, f"{prefix}.{key}")]
    if isinstance(value, float) and math.isnan(value):
        return [(prefix, "NaN")]
    return [(prefix, str(value))]
