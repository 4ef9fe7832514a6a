r"""The MedAISure metrics overview's aggregates: per-task means, category aggregates and the combined score.

* :func:`task_means` — a per-item score table reduced to one mean per task and metric.
* :func:`overall_means` — per metric, the mean over the tasks that have it.
* :func:`category_scores` — per task, the mean of the metrics a category map puts in each
  category (:data:`DEFAULT_CATEGORIES`: diagnostics, safety, communication, summarization).
* :func:`combined_score` — the weighted combined score per task and overall
  (:class:`CombinedScore`).

Notes
-----
.. math:: C_t = \sum_{k \in P_t} \frac{w_k}{Z_t} v_{t,k},\qquad
          Z_t = \sum_{k \in P_t} w_k \ \text{(renormalised)}\quad\text{or}\quad Z = \sum_{k \in W} w_k

where :math:`P_t` are the weight keys task :math:`t` has a value for and :math:`v_{t,k}` is that
value: the task's own score named :math:`k` when it has one (MedAISure's ``add_combined_score``
reads each weight key from the task's metrics), else, for a key that names a category, the mean
of the task's metrics in that category (what MedAISure's category aggregates would have stored
under the key). Which of the two each value is, is recorded per task
(:attr:`CombinedScore.sources`). The overall combined score is the mean of :math:`C_t` over the
tasks that have one. Without renormalisation a missing key contributes 0 and the divisor is the
sum of all weights, as in MedAISure (it is 1 for weights that sum to 1, as MedAISure's CLI
requires; here any positive sum is accepted, and scaling every weight changes nothing either way).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mas_eval.constraints import (
    FRAME,
    MAPPING,
    NONE,
    TEXT,
    TEXTS,
    Boolean,
    Interval,
    check_columns,
    check_parameter,
    validate_params,
)
from mas_eval.errors import DataError, InvalidParameterError

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "DEFAULT_CATEGORIES",
    "DEFAULT_WEIGHTS",
    "TASK_VALUE",
    "CombinedScore",
    "category_scores",
    "category_source",
    "check_weights",
    "combined_score",
    "format_weights",
    "overall_means",
    "parse_weights",
    "task_means",
]

#: Metric → category map: MedAISure's canonical one (``ResultAggregator._DEFAULT_CATEGORY_MAP``,
#: ``docs/metrics/metric_categories.md``). A metric name matches case-insensitively, as there.
DEFAULT_CATEGORIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "diagnostics": (
            "clinical_accuracy", "diagnostic_accuracy", "clinical_correctness", "final_answer_correct",
            "exact_match", "accuracy",
        ),
        "safety": ("safety", "harm_avoidance", "toxicity_reduction", "factuality_safety"),
        "communication": ("reasoning_quality", "communication", "coherence", "helpfulness", "instruction_following"),
        "summarization": (
            "summarization", "summary_quality", "rouge_l", "rouge1", "rouge2", "bertscore", "clinical_relevance",
            "factual_consistency",
        ),
    }
)  # fmt: skip

#: Category → weight of a combined score when none is given (the report's "Answer quality"
#: section): the weights of MedAISure's documented ``--combined-weights`` example, summing to 1.
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"diagnostics": 0.4, "safety": 0.3, "communication": 0.2, "summarization": 0.1}
)

#: The source of a value a task holds itself under the weight key.
TASK_VALUE = "task value"
#: Metrics an error about an unknown weight key lists at most.
_METRICS_SHOWN = 12
#: A category's or a metric's weight.
_WEIGHT = Interval(float, 0)

TaskScores = Mapping[str, Mapping[str, float | None]]


def _value(task: str, metric: str, value: object) -> float | None:
    """Return a task's metric value as a float; None and NaN are missing (the metric was not computed)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"task_scores[{task!r}][{metric!r}] is {value!r}, not a number; pass numbers (None for a missing score)"
        raise DataError(msg)
    number = float(value)
    if math.isnan(number):
        return None
    if math.isinf(number):
        msg = f"task_scores[{task!r}][{metric!r}] is {number}; a score must be finite (None or NaN for a missing one)"
        raise DataError(msg)
    return number


def _check_categories(categories: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
    """``categories`` as category → lower-cased metric names; a bare string instead of a list is an error."""
    checked = {}
    for category, metrics in categories.items():
        if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
            msg = (
                f"categories[{category!r}] is {metrics!r}; each category maps to a list of metric names, "
                f"e.g. {{{category!r}: [{metrics!r}]}}"
            )
            raise InvalidParameterError(msg)
        checked[category] = frozenset(m.lower() for m in metrics)
    return checked


def check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """``weights`` as floats, once each is finite and non-negative and their sum positive.

    >>> check_weights({"diagnostics": 2, "safety": 0})
    {'diagnostics': 2.0, 'safety': 0.0}

    Raises
    ------
    InvalidParameterError
        No weight; a weight that is not a number, negative, NaN or infinite; or a zero sum, or
        one too large for a float.
    """
    if not weights:
        msg = "weights is empty; give a weight per category, e.g. diagnostics=0.4,safety=0.3"
        raise InvalidParameterError(msg)
    checked = {}
    for key, weight in weights.items():
        check_parameter(f"weight {key}", weight, [_WEIGHT])
        checked[str(key)] = float(weight)
    try:
        total = math.fsum(checked.values())
    except OverflowError:
        total = math.inf
    if not math.isfinite(total):
        msg = f"weights {format_weights(checked)} sum beyond the largest number; scale them down (only ratios count)"
        raise InvalidParameterError(msg)
    if total <= 0:
        msg = f"weights {format_weights(checked)} sum to 0; at least one weight must be positive"
        raise InvalidParameterError(msg)
    return checked


def parse_weights(text: str) -> dict[str, float]:
    """Weights written as ``key=value,key=value`` (the command line's ``--weights``), checked.

    >>> parse_weights("diagnostics=0.4, safety=0.6")
    {'diagnostics': 0.4, 'safety': 0.6}
    """
    weights: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = (s.strip() for s in part.partition("="))
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not key or number is None:
            msg = f"weights: {part!r} is not key=number; write e.g. diagnostics=0.4,safety=0.3"
            raise InvalidParameterError(msg)
        if key in weights:
            msg = f"weights: {key!r} is given twice; give each category one weight"
            raise InvalidParameterError(msg)
        weights[key] = number
    return check_weights(weights)


def format_weights(weights: Mapping[str, float]) -> str:
    """Return the weights as the command line takes them.

    >>> format_weights({"diagnostics": 0.4, "safety": 0.3})
    'diagnostics=0.4,safety=0.3'
    """
    return ",".join(f"{key}={weight:g}" for key, weight in weights.items())


@validate_params({"items": [FRAME], "task": [TEXT], "metrics": [TEXTS, NONE]})
def task_means(
    items: pl.DataFrame | pl.LazyFrame, *, task: str = "task", metrics: Sequence[str] | None = None
) -> dict[str, dict[str, float]]:
    """Per task, the mean of each metric over its items (nulls and NaN left out), tasks sorted.

    ``metrics`` defaults to every floating-point column of ``items`` except the answers family's
    breakdown columns (``token_f1``, ``factual_consistency``, ... : parts of reasoning quality and
    clinical accuracy, which would otherwise count again in a category). A task whose items have
    no value of a metric has no entry for it.

    Examples
    --------
    >>> import polars as pl
    >>> items = pl.DataFrame({"task": ["b", "a", "a"], "clinical_accuracy": [1.0, 0.5, None]})
    >>> task_means(items)
    {'a': {'clinical_accuracy': 0.5}, 'b': {'clinical_accuracy': 1.0}}
    """
    import polars as pl

    frame = items.lazy()
    schema = frame.collect_schema()
    check_columns(schema, [task], "task_means: the items", fix="pass task=<column>", error=InvalidParameterError)
    if metrics is None:
        from mas_eval.metrics.answers.columns import COMPONENTS

        chosen = [c for c, t in schema.items() if t.is_float() and c != task and c not in COMPONENTS]
    else:
        chosen = list(metrics)
    fix = "pass metrics=[...] naming numeric columns"
    check_columns(schema, chosen, "task_means: the items", fix=fix, error=InvalidParameterError)
    for name in chosen:
        if not schema[name].is_numeric():
            msg = f"metric {name!r} of the items is {schema[name]}, not numeric; {fix}"
            raise InvalidParameterError(msg)
    from mas_eval.metrics.ordered import ordered_aggregates

    # Each mean adds its task's items in the frame's order: two calls give the same bits.
    values = {name: pl.col(name).cast(pl.Float64).fill_nan(None) for name in chosen}
    by_task = frame.with_columns(pl.col(task).cast(pl.String))
    means = ordered_aggregates(by_task, task, means=values).sort(task).collect()
    if means.height and means[task].null_count():
        msg = f"some items have no {task!r} (null); every item needs its task: fill the column or filter them out"
        raise DataError(msg)
    return {
        row[task]: {name: row[name] for name in chosen if row[name] is not None} for row in means.iter_rows(named=True)
    }


@validate_params({"task_scores": [MAPPING]})
def overall_means(task_scores: TaskScores) -> dict[str, float]:
    """Per metric, the mean over the tasks that have a value of it (metrics in first-seen order).

    Examples
    --------
    >>> overall_means({"t1": {"a": 1.0, "b": 0.0}, "t2": {"a": 0.5}})
    {'a': 0.75, 'b': 0.0}
    """
    values: dict[str, list[float]] = {}
    for task, scores in task_scores.items():
        for metric, raw in scores.items():
            value = _value(task, metric, raw)
            if value is not None:
                values.setdefault(metric, []).append(value)
    return {metric: math.fsum(v) / len(v) for metric, v in values.items()}


def _category_members(
    task_scores: TaskScores, checked: Mapping[str, frozenset[str]]
) -> dict[str, dict[str, list[tuple[str, float]]]]:
    """Per task and category, the task's metrics (as the task names them) in the category that have a value."""
    result: dict[str, dict[str, list[tuple[str, float]]]] = {}
    for task, scores in task_scores.items():
        values = [(metric, _value(task, metric, raw)) for metric, raw in scores.items()]
        result[task] = {}
        for category, members in checked.items():
            found = [(metric, v) for metric, v in values if metric.lower() in members and v is not None]
            if found:
                result[task][category] = found
    return result


@validate_params({"task_scores": [MAPPING], "categories": [MAPPING]})
def category_scores(
    task_scores: TaskScores, categories: Mapping[str, Sequence[str]] = DEFAULT_CATEGORIES
) -> dict[str, dict[str, float]]:
    """Per task, each category's value: the mean of the task's metrics the map puts in it.

    Categories with no metric in a task are absent from it.

    Examples
    --------
    >>> category_scores({"t": {"rouge_l": 0.2, "clinical_relevance": 0.4, "accuracy": 1.0}})
    {'t': {'diagnostics': 1.0, 'summarization': 0.30000000000000004}}
    """
    members = _category_members(task_scores, _check_categories(categories))
    return {
        task: {category: math.fsum(v for _, v in found) / len(found) for category, found in by_category.items()}
        for task, by_category in members.items()
    }


def category_source(metrics: Sequence[str]) -> str:
    """Describe a value that is the mean of a category's ``metrics``.

    >>> category_source(["accuracy", "clinical_accuracy"])
    'category mean of [accuracy, clinical_accuracy]'
    """
    return f"category mean of [{', '.join(metrics)}]"


@dataclass(frozen=True)
class CombinedScore:
    """A combined score: per task, overall, and the category values it was computed from.

    Attributes
    ----------
    per_task
        Task → combined score, for the tasks that have at least one weighted category
        (with renormalisation: one of positive weight).
    overall
        The mean of ``per_task``; None when no task has a combined score.
    categories
        Task → weight key → the value combined (only the present ones).
    weights
        The weights, as checked (a category's share is its weight over the sum).
    renormalize_missing
        Whether a task's weights were renormalised over its present categories.
    sources
        Task → weight key → where its value came from: :data:`TASK_VALUE` (the task's own
        score of that name, which wins) or ``category mean of [m1, m2]`` (:func:`category_source`:
        the task has no score of that name, so the mean of its metrics in the category).

    Examples
    --------
    :func:`combined_score` makes one:

    >>> result = combined_score({"t1": {"accuracy": 0.8, "rouge_l": 0.4}, "t2": {"accuracy": 0.6}},
    ...                         {"diagnostics": 0.75, "summarization": 0.25})
    >>> round(result.overall, 4), result.categories
    (0.65, {'t1': {'diagnostics': 0.8, 'summarization': 0.4}, 't2': {'diagnostics': 0.6}})
    >>> result.sources["t1"]
    {'diagnostics': 'category mean of [accuracy]', 'summarization': 'category mean of [rouge_l]'}
    """

    per_task: dict[str, float]
    overall: float | None
    categories: dict[str, dict[str, float]]
    weights: dict[str, float]
    renormalize_missing: bool
    sources: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        """The tasks without a combined score (no weighted category present)."""
        return [task for task in self.categories if task not in self.per_task]

    @validate_params({"name": [TEXT]})
    def table(self, name: str = "combined_score") -> pl.DataFrame:
        """One row per task: its combined score (column ``name``), each weight key's value, and its source.

        The columns are ``task``, ``name``, then per weight key ``k``: ``k`` (the value combined)
        and ``k source`` (:attr:`sources`); null where the task has no value for the key.

        Examples
        --------
        >>> result = combined_score({"t1": {"accuracy": 0.8, "rouge_l": 0.4}, "t2": {"accuracy": 0.6}},
        ...                         {"diagnostics": 0.75, "summarization": 0.25})
        >>> import polars as pl
        >>> table = result.table()
        >>> table.columns
        ['task', 'combined_score', 'diagnostics', 'diagnostics source', 'summarization', 'summarization source']
        >>> table.select("task", pl.col("combined_score").round(4), "summarization").rows()
        [('t1', 0.7, 0.4), ('t2', 0.6, None)]
        """
        import polars as pl

        rows = []
        for task, values in self.categories.items():
            sources = self.sources.get(task, {})
            row: dict[str, object] = {"task": task, name: self.per_task.get(task)}
            for key in self.weights:
                row[key] = values.get(key)
                row[f"{key} source"] = sources.get(key)
            rows.append(row)
        schema: dict[str, Any] = {"task": pl.String, name: pl.Float64}
        for key in self.weights:
            schema |= {key: pl.Float64, f"{key} source": pl.String}
        return pl.DataFrame(rows, schema=schema, orient="row")


@validate_params(
    {"task_scores": [MAPPING], "weights": [MAPPING], "renormalize_missing": [Boolean()], "categories": [MAPPING]}
)
def combined_score(
    task_scores: TaskScores,
    weights: Mapping[str, float],
    *,
    renormalize_missing: bool = True,
    categories: Mapping[str, Sequence[str]] = DEFAULT_CATEGORIES,
) -> CombinedScore:
    r"""Compute the weighted combined score of the MedAISure metrics overview, per task and overall.

    The formula is the module docstring's.

    Parameters
    ----------
    task_scores
        Task → metric → score (a :class:`~mas_eval.report.BenchmarkReport`'s ``task_scores``).
        None and NaN are missing scores.
    weights
        Key → weight: finite, non-negative, with a positive sum (they need not sum to 1). A task's
        own score named by the key is combined when it has one; else, for a key that is a category
        of ``categories``, the mean of the task's metrics in it (:attr:`CombinedScore.sources` says which).
    renormalize_missing
        Divide by the sum of the weights of the categories present in the task (default), so a
        missing category does not pull the score down; otherwise by the sum of all weights.
    categories
        Category → the metrics averaged into it (default: :data:`DEFAULT_CATEGORIES`).

    Raises
    ------
    InvalidParameterError
        A bad weight (see :func:`check_weights`), or a weight key that is neither a category
        nor a metric of any task (a misspelt key would otherwise be dropped in silence).

    Returns
    -------
    CombinedScore
        The combined score per task and overall, the values combined and where each came from.

    Examples
    --------
    >>> scores = {"t1": {"accuracy": 0.8, "rouge_l": 0.4}, "t2": {"accuracy": 0.6}}
    >>> result = combined_score(scores, {"diagnostics": 0.75, "summarization": 0.25})
    >>> result.per_task, result.overall
    ({'t1': 0.7000000000000001, 't2': 0.6}, 0.65)
    >>> combined_score(scores, {"diagnostics": 0.75, "summarization": 0.25}, renormalize_missing=False).per_task
    {'t1': 0.7000000000000001, 't2': 0.44999999999999996}

    A task's own value under a weight key wins over the category mean:

    >>> own = combined_score({"t": {"diagnostics": 0.2, "accuracy": 0.8}}, {"diagnostics": 1.0})
    >>> own.per_task, own.sources
    ({'t': 0.2}, {'t': {'diagnostics': 'task value'}})
    """
    checked = check_weights(weights)
    members = _category_members(task_scores, _check_categories(categories))
    metrics = {metric for scores in task_scores.values() for metric in scores}
    unknown = [key for key in checked if key not in categories and key not in metrics]
    if unknown:
        known = ", ".join(categories) or "none"
        shown = sorted(metrics)[:_METRICS_SHOWN] + (["..."] if len(metrics) > _METRICS_SHOWN else [])
        msg = (
            f"weights name {', '.join(map(repr, unknown))}, neither a category ({known}) nor a metric of any task "
            f"({', '.join(shown) or 'none'}); fix the key"
        )
        raise InvalidParameterError(msg)
    total = math.fsum(checked.values())
    present_values: dict[str, dict[str, float]] = {}
    sources: dict[str, dict[str, str]] = {}
    per_task: dict[str, float] = {}
    for task, scores in task_scores.items():
        values: dict[str, float] = {}
        source: dict[str, str] = {}
        for key in checked:
            own = _value(task, key, scores.get(key))
            found = members[task].get(key) if key in categories else None
            if own is not None:  # MedAISure reads the key from the task's own metrics first
                values[key], source[key] = own, TASK_VALUE
            elif found:
                values[key] = math.fsum(v for _, v in found) / len(found)
                source[key] = category_source([m for m, _ in found])
        present_values[task], sources[task] = values, source
        divisor = math.fsum(checked[k] for k in values) if renormalize_missing else total
        if values and divisor > 0:  # nothing present, or only zero weights: nothing to combine
            per_task[task] = math.fsum(checked[k] / divisor * v for k, v in values.items())
    overall = math.fsum(per_task.values()) / len(per_task) if per_task else None
    return CombinedScore(per_task, overall, present_values, checked, renormalize_missing, sources)
