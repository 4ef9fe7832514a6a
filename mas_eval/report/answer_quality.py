r"""The report's "Answer quality" section (MedAISure): item scores per task and system, comparison, combined score.

:func:`answers_section` is what :func:`mas_eval.report.build` adds when the scores have an
``items`` table (a Dataset with an ``answers`` table was scored); other scores get no such
section. Its comparison is its own: MAS and single agent compared item by item
(:data:`ANSWER_COMPARISON`), not on the per-run means in ``runs``.

Notes
-----
The combined score is :func:`~mas_eval.report.combined_score` of each system's per-task means
of :data:`ANSWER_METRICS`, with :data:`~mas_eval.report.DEFAULT_CATEGORIES` and
:data:`~mas_eval.report.DEFAULT_WEIGHTS`, renormalised over the categories present:

.. math:: C_t = \frac{\sum_{k \in P_t} w_k v_{t,k}}{\sum_{k \in P_t} w_k}

Only the four scores enter it (clinical accuracy and diagnostic accuracy are diagnostics,
reasoning quality communication, clinical relevance summarization): ``factual_consistency`` and
the other columns of ``items`` are their components, which would otherwise count twice. Every
value is a category mean here (an item has no score named after a category); diagnostic
accuracy's per-task mean is the plain mean of its items' matches (under preset ``"medaisure"``
the run column weights critical diagnoses, the task mean here does not).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from mas_eval.errors import MasEvalError
from mas_eval.metrics.answers.columns import SCORES
from mas_eval.report.combined import (
    DEFAULT_CATEGORIES,
    DEFAULT_WEIGHTS,
    CombinedScore,
    combined_score,
    format_weights,
    overall_means,
    task_means,
)
from mas_eval.report.document import ReportFigure, ReportTable, Section
from mas_eval.report.findings import findings
from mas_eval.report.tables import has_values

__all__ = [
    "ANSWER_COMPARISON",
    "ANSWER_METRICS",
    "OVERALL",
    "answer_comparisons",
    "answer_means",
    "answers_section",
    "combined_scores",
    "has_items",
]

#: The per-item scores the section summarises, compares and combines (``items`` columns).
ANSWER_METRICS = list(SCORES)
#: How the section compares the systems: per task, paired on the item both answered, Holm.
ANSWER_COMPARISON: dict[str, Any] = {"by": "task", "pair_on": "item_id", "test": "paired", "correction": "holm"}
#: The ``task`` of a combined-score row that holds the mean over the tasks.
OVERALL = "overall (mean of tasks)"

KEY, TITLE = "answers", "Answer quality"

_ABOUT = (
    "Each answer is scored against its item's reference (MedAISure): clinical_accuracy is the weighted "
    "Jaccard similarity of the clinical entities (diagnoses, treatments, medications, symptoms, labs) named "
    "in the prediction and in the reference answer; reasoning_quality = 0.4·token F1 + 0.15·structure + "
    "0.2·evidence + 0.25·factual consistency − fallacy penalty, clamped to [0, 1], from the rationale and "
    "the reference rationale; diagnostic_accuracy is 1 where the normalised prediction is the reference "
    "diagnosis (synonyms mapped), else 0; clinical_relevance is the Jaccard similarity of the words of the "
    "prediction and of the item's note (items without a reference diagnosis or note have none of it). "
    "The items table keeps every component per answer."
)


def has_items(scores: Mapping[str, pl.DataFrame]) -> bool:
    """Whether ``scores`` have an ``items`` table: answers were scored."""
    return "items" in scores


def _present(items: pl.DataFrame) -> list[str]:
    return [name for name in ANSWER_METRICS if has_values(items, name)]


def _task_key(items: pl.DataFrame) -> list[str]:
    return ["task"] if has_values(items, "task") else []


def answer_means(items: pl.DataFrame) -> pl.DataFrame:
    """Per task and system: the answers (``n``) and the mean of each of :data:`ANSWER_METRICS` present.

    A mean leaves out null values; ``n`` counts every answer of the group.

    >>> items = pl.DataFrame({"task": ["qa"] * 3, "system": ["mas", "single", "mas"],
    ...                       "clinical_accuracy": [1.0, 0.5, 0.5], "reasoning_quality": [0.25, 0.5, 0.75]})
    >>> answer_means(items).rows()
    [('qa', 'mas', 2, 0.75, 0.5), ('qa', 'single', 1, 0.5, 0.5)]
    """
    keys = [*_task_key(items), "system"]
    return (
        items.group_by(keys)
        .agg(pl.len().cast(pl.Int64).alias("n"), *(pl.col(m).cast(pl.Float64).mean() for m in _present(items)))
        .sort(keys)
    )


def _items_answered_by_both(items: pl.DataFrame, treatment: str, control: str) -> int:
    return (
        items.filter(pl.col("system").is_in([treatment, control]))
        .group_by("item_id")
        .agg(pl.col("system").n_unique().alias("systems"))
        .filter(pl.col("systems") == 2)
        .height
    )


def answer_comparisons(
    items: pl.DataFrame, treatment: str = "mas", control: str = "single"
) -> tuple[pl.DataFrame | None, str]:
    """``treatment`` against ``control`` on :data:`ANSWER_METRICS`, item by item, or ``None`` and why not.

    :data:`ANSWER_COMPARISON`: per task, paired on ``item_id``, Holm-adjusted across the table;
    an unpaired Welch test when fewer than two items were answered by both systems.
    """
    from mas_eval.stats import compare

    systems = set(items["system"].unique().to_list())
    missing = [name for name in (treatment, control) if name not in systems]
    if missing:
        have = ", ".join(sorted(map(str, systems)))
        return None, f"the items have no answer of system {', '.join(missing)} (they have: {have})"
    metrics = _present(items)
    if not metrics:
        return None, f"the items have no {' or '.join(ANSWER_METRICS)} values"
    design = dict(ANSWER_COMPARISON)
    if "item_id" not in items.columns or _items_answered_by_both(items, treatment, control) < 2:
        design.update(pair_on=None, test="welch")
    by = design.pop("by")
    table = compare(items, metrics, by=by if _task_key(items) else None, treatment=treatment, control=control, **design)
    return table, ""


def combined_scores(
    items: pl.DataFrame,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    categories: Mapping[str, Any] = DEFAULT_CATEGORIES,
) -> pl.DataFrame:
    """Per system, the combined score of each task and overall, with the categories it combines.

    Rows ``system, task, combined_score`` and one column per weighted category any row has
    (its value in the task); a system's last row is the mean over its tasks (``task`` is
    :data:`OVERALL`, the categories their means over the tasks). Uses the per-task means of
    :data:`ANSWER_METRICS` and :func:`~mas_eval.report.combined_score` with renormalisation.

    Raises
    ------
    DataError
        An item without a task (:func:`~mas_eval.report.task_means`).
    """
    present = _present(items)
    rows: list[dict[str, Any]] = []
    for (system,), own in items.group_by("system", maintain_order=True):
        result: CombinedScore = combined_score(
            task_means(own, metrics=present), weights, renormalize_missing=True, categories=categories
        )
        for task, values in result.categories.items():
            rows.append({"system": system, "task": task, "combined_score": result.per_task.get(task), **values})
        rows.append(
            {"system": system, "task": OVERALL, "combined_score": result.overall, **overall_means(result.categories)}
        )
    used = [key for key in weights if any(row.get(key) is not None for row in rows)]
    schema = {"system": pl.String, "task": pl.String, "combined_score": pl.Float64, **dict.fromkeys(used, pl.Float64)}
    frame = pl.DataFrame([{name: row.get(name) for name in schema} for row in rows], schema=schema, orient="row")
    order = pl.when(pl.col("task") == OVERALL).then(1).otherwise(0)
    return frame.sort("system", order, "task")


def _weights_text(items: pl.DataFrame, weights: Mapping[str, float], categories: Mapping[str, Any]) -> str:
    present = {m.lower() for m in _present(items)}
    members = {k: [m for m in ANSWER_METRICS if m.lower() in present and m in categories.get(k, ())] for k in weights}
    used = [k for k in weights if members[k]]
    unused = [k for k in weights if not members[k]]
    total = sum(weights[k] for k in used)
    mapped = "; ".join(f"{k} is {' and '.join(members[k])}" for k in used)
    absent = (
        f"; {' and '.join(unused)} {'has' if len(unused) == 1 else 'have'} no metric in the items" if unused else ""
    )
    formula = " + ".join(f"{weights[k]:g}·{k}" for k in used)
    return (
        f"Combined score (MedAISure), weights {format_weights(weights)}: {mapped}{absent}. The weights are "
        "renormalised over the categories a task has, so each task's combined score is "
        f"({formula}) / {total:g}, a category being the mean of its metrics' task means; overall is the mean "
        "over the tasks."
    )


def _figures(items: pl.DataFrame) -> list[ReportFigure]:
    from mas_eval import plots  # the function, via the package

    by = "task" if _task_key(items) else None
    return [
        ReportFigure(
            f"items_{name}",
            f"{name} per {'task and ' if by else ''}system over answers: boxes, jittered answers, means with 95% CIs.",
            plots.item_scores(items, name, by=by),
        )
        for name in _present(items)
    ]


def answers_section(items: pl.DataFrame, treatment: str, control: str) -> Section:
    """Make the "Answer quality" section: omitted, with why, when no answer has a score.

    Holds the mean of each answer metric per task and system, the item-by-item comparison
    (:func:`answer_comparisons`), the combined score per task and overall per system
    (:func:`combined_scores`) with its weights, and the :func:`~mas_eval.plots.item_scores`
    figure of each metric; a part whose input is absent is a line of text instead.
    """
    if items.height == 0:
        return Section(KEY, TITLE, omitted="the items table is empty: no answer was scored")
    if not _present(items):
        return Section(KEY, TITLE, omitted=f"the items have no {' or '.join(ANSWER_METRICS)} values")
    text, tables = [_ABOUT], []
    caption = f"Mean answer score per {'task and ' if _task_key(items) else ''}system, over its n answers"
    tables.append(ReportTable("answer_means", caption, answer_means(items)))
    comparison, why = answer_comparisons(items, treatment, control)
    if comparison is None:
        text.append(f"No comparison of the answer scores: {why}.")
    else:
        text += findings(comparison, treatment)
        paired = "paired on the item both answered" if comparison["test"].eq("paired").any() else "unpaired"
        per_task = " per task" if _task_key(items) else ""
        caption = f"{treatment} − {control} on the answer scores{per_task}, {paired}, Holm-adjusted across these rows"
        tables.append(ReportTable("answer_comparison", caption, comparison))
    try:
        combined = combined_scores(items)
    except MasEvalError as exc:
        text.append(f"No combined score: {exc}.")
    else:
        text.append(_weights_text(items, DEFAULT_WEIGHTS, DEFAULT_CATEGORIES))
        caption = "Combined score per system and task, and overall, with the category values it combines"
        tables.append(ReportTable("answer_combined", caption, combined))
    return Section(KEY, TITLE, text=text, tables=tables, figures=_figures(items))
