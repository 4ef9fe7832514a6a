"""The report's "Differential diagnosis" section (LDDx v6): labels, diagnostic scores, comparison, collaboration.

:func:`diagnosis_section` is what :func:`mas_eval.report.build` adds when the scores hold a
diagnostic team's outputs (:func:`has_diagnosis`); decision-only scores get no such section.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from mas_eval.errors import DataError
from mas_eval.metrics.diagnosis.scores import COUNTS
from mas_eval.report.document import ReportFigure, ReportTable, Section

__all__ = [
    "DIAGNOSIS_METRICS",
    "DIAGNOSIS_TABLES",
    "LABEL_NAMES",
    "diagnosis_section",
    "has_diagnosis",
    "label_counts_per_system",
]

#: The diagnostic scores a report summarises and compares (``runs`` columns).
DIAGNOSIS_METRICS = ["traditional_recall", "clinical_reasoning_quality", "diagnostic_safety", "system_safety_coverage"]
#: The label each count column of ``runs`` counts, in the order the report shows them.
LABEL_NAMES = {"tp": "TP", "fp": "FP", "fn": "FN", "caa": "CAA", "ae": "AE", "tm_sm": "TM-SM"}
#: The tables only the diagnosis family writes.
DIAGNOSIS_TABLES = ("labels", "rounds", "consensus_ddx")

KEY, TITLE = "diagnosis", "Differential diagnosis"

_ABOUT = (
    "Each diagnosis of a run's final list and each ground-truth diagnosis of its case is labelled: TP "
    "(matched), FP (listed, not in the ground truth), CAA (a clinically appropriate alternative, from the "
    "can't-miss round), FN (missed), AE (appropriately excluded: ruled out in the debate), TM-SM (treated by "
    "symptom management). With G the ground-truth diagnoses and w "
    "the CAA weight of the TP rate: traditional_recall = TP / G; clinical_reasoning_quality = (TP + w·CAA + AE) "
    "/ diagnoses considered; diagnostic_safety = (TP + max(0, w·CAA)) / (TP + CAA + FP); "
    "system_safety_coverage = (TP + TM-SM) / G (the LDDx v6 metrics guide)."
)


def has_diagnosis(scores: Mapping[str, pl.DataFrame]) -> bool:
    """Whether ``scores`` hold a diagnostic team's outputs: a table or a ``runs`` column of the diagnosis family."""
    columns = scores["runs"].columns if "runs" in scores else []
    return any(name in scores for name in DIAGNOSIS_TABLES) or any(
        name in columns for name in (*COUNTS, *DIAGNOSIS_METRICS)
    )


def label_counts_per_system(runs: pl.DataFrame) -> pl.DataFrame | None:
    """Return per system the runs with label counts, and each label's count summed over them (None: no count column).

    >>> runs = pl.DataFrame({"system": ["mas", "mas", "single"], "tp": [2, 1, None], "fp": [0, 1, None]})
    >>> label_counts_per_system(runs).rows()
    [('mas', 2, 3, 1)]
    """
    present = [name for name in LABEL_NAMES if name in runs.columns]
    if not present:
        return None
    return (
        runs.filter(pl.any_horizontal(pl.col(present).is_not_null()))
        .group_by("system")
        .agg(pl.len().alias("runs"), *(pl.col(c).sum().cast(pl.Int64).alias(LABEL_NAMES[c]) for c in present))
        .sort("system")
    )


def _score_summary(runs: pl.DataFrame) -> pl.DataFrame | None:
    """One row per score and system: the runs with a value and their mean (None: no score column)."""
    present = [name for name in DIAGNOSIS_METRICS if name in runs.columns]
    if not present:
        return None
    parts = [
        runs.group_by("system").agg(
            pl.lit(name).alias("metric"),
            pl.col(name).is_not_null().sum().cast(pl.Int64).alias("n"),
            pl.col(name).cast(pl.Float64).mean().alias("mean"),
        )
        for name in present
    ]
    order = {name: i for i, name in enumerate(present)}
    return (
        pl.concat(parts)
        .filter(pl.col("n") > 0)
        .sort(pl.col("metric").replace_strict(order, return_dtype=pl.Int64), "system")
        .select("metric", "system", "n", "mean")
    )


def _comparison_rows(comparisons: pl.DataFrame | None) -> pl.DataFrame | None:
    """Return the rows of ``comparisons`` about the diagnostic scores, in its order (None: no such row)."""
    if comparisons is None or "metric" not in comparisons.columns:
        return None
    rows = comparisons.filter(pl.col("metric").is_in(DIAGNOSIS_METRICS))
    return rows if rows.height else None


def _collaboration(scores: Mapping[str, pl.DataFrame]) -> ReportFigure | str:
    """Draw the collaboration figure over runs, or the one line saying why there is none."""
    from mas_eval import plots  # the function, via the package (importing the module would shadow it there)

    if "rounds" not in scores:
        return "No collaboration figure: the scores have no rounds table (TempoScores come from the messages table)."
    if "agents" not in scores or "credibility" not in scores["agents"].columns:
        return "No collaboration figure: the scores' agents have no credibility column."
    try:
        figure = plots.collaboration(scores)  # type: ignore[arg-type]
    except DataError as exc:
        return f"No collaboration figure: {exc}."
    caption = (
        "TempoScore of each round (Local-DDx's order) and credibility of each agent, per system over runs: "
        "boxes show median, quartiles and whiskers at 1.5 IQR; points are runs (rounds) and agents of runs."
    )
    return ReportFigure("collaboration", caption, figure)


def diagnosis_section(
    scores: Mapping[str, pl.DataFrame],
    comparisons: pl.DataFrame | None,
    why_no_comparison: str,
    treatment: str,
    control: str,
) -> Section:
    """Make the "Differential diagnosis" section: omitted, with why, when the scores have no labelled diagnosis.

    Holds the label counts per system (summed over runs), the mean of each diagnostic score
    per system, the rows of ``comparisons`` about those scores, and the collaboration figure
    (:func:`mas_eval.plots.collaboration` over runs); a part whose input is absent is a line of
    text instead.
    """
    if "labels" not in scores:
        return Section(
            KEY, TITLE, omitted="the scores have no labels table (diagnoses are labelled when a Dataset with ddx "
            "and ground_truth tables is scored)",
        )  # fmt: skip
    if scores["labels"].height == 0:
        return Section(KEY, TITLE, omitted="the labels table is empty: no diagnosis was labelled")
    runs = scores["runs"]
    text, tables, figures = [_ABOUT], [], []
    counts = label_counts_per_system(runs)
    if counts is None:
        text.append(f"No label counts: the runs table has none of the columns {', '.join(LABEL_NAMES)}.")
    else:
        caption = "Diagnosis labels per system, summed over the runs with label counts"
        tables.append(ReportTable("diagnosis_labels", caption, counts))
    summary = _score_summary(runs)
    if summary is None:
        text.append(f"No diagnostic scores: the runs table has none of the columns {', '.join(DIAGNOSIS_METRICS)}.")
    else:
        caption = "Mean diagnostic score per system, over the n runs with a value"
        tables.append(ReportTable("diagnosis_scores", caption, summary))
    rows = _comparison_rows(comparisons)
    if rows is None:
        why = why_no_comparison or "the comparison table has no rows for the diagnostic scores"
        text.append(f"No comparison of the diagnostic scores: {why.removeprefix('no comparison: ')}.")
    else:
        caption = f"{treatment} − {control} on the diagnostic scores: the comparison's rows for them"
        tables.append(ReportTable("diagnosis_comparison", caption, rows))
    figure = _collaboration(scores)
    if isinstance(figure, str):
        text.append(figure)
    else:
        figures.append(figure)
    return Section(KEY, TITLE, text=text, tables=tables, figures=figures)
