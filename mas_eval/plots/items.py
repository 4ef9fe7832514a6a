"""Answer-level figures (the MedAISure metrics overview): an item metric per task and system."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mas_eval.constraints import AXES, COLUMN_NAME, NONE, RUN_METRICS, Interval, Options, validate_params
from mas_eval.errors import InvalidParameterError, SchemaError
from mas_eval.plots.runs import Kind, draw_distributions

__all__ = ["item_scores"]

_WHERE = "item_scores"


def _items_frame(items: Any) -> pl.DataFrame:
    """``items`` (a frame, or Scores whose ``items`` table is used) as a DataFrame."""
    if isinstance(items, pl.LazyFrame):
        return items.collect()
    if isinstance(items, pl.DataFrame):
        return items
    if isinstance(items, Mapping):
        if "items" not in items:
            msg = (
                f"{_WHERE}: these Scores have no 'items' table (they have: {', '.join(items)}); score a "
                "Dataset with an 'answers' table"
            )
            raise SchemaError(msg)
        return items["items"]
    msg = f"{_WHERE}: items must be a Polars DataFrame or LazyFrame (or Scores), not {type(items).__name__}"
    raise InvalidParameterError(msg)


@validate_params(
    {
        "items": [RUN_METRICS],
        "ax": [AXES, NONE],
        "metric": [COLUMN_NAME],
        "by": [COLUMN_NAME, NONE],
        "kind": [Options.of(Kind)],
        "max_points": [Interval(int, 0)],
        "seed": [Interval(int, 0)],
    }
)
def item_scores(
    items: Any,
    metric: str = "clinical_accuracy",
    by: str | None = "task",
    *,
    kind: Kind = "box",
    max_points: int = 2000,
    seed: int = 0,
    ax: Axes | None = None,
) -> Figure:
    """Draw an answer-level metric per task (``by``), one box per system: how the systems' answers score.

    Parameters
    ----------
    items : polars.DataFrame, polars.LazyFrame or Scores
        One row per answer (``scores.items``, or Scores whose ``items`` is used) with ``system``,
        ``metric`` and ``by``.
    metric : str
        The column drawn, e.g. ``"clinical_accuracy"``, ``"reasoning_quality"``, ``"token_f1"``.
    by : str or None
        Grouping along the x axis (the item's task by default); ``None`` for one group.
    kind, max_points, seed, ax
        As :func:`~mas_eval.plots.distributions`: boxes or violins, at most ``max_points``
        answers as jittered points (a seeded subsample above it), a target Axes.

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    The figure is :func:`~mas_eval.plots.distributions` over answers instead of runs: per
    (task, system) a box of the item scores, the answers as points and the mean with its 95%
    t CI. Answers with a null ``metric`` are left out.

    Examples
    --------
    >>> items = pl.DataFrame({"system": ["mas", "single"] * 3, "task": ["dx"] * 4 + ["sum"] * 2,
    ...                       "clinical_accuracy": [0.9, 0.5, 0.8, 0.6, 1.0, 0.4]})
    >>> fig = item_scores(items)
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['dx', 'sum']
    """
    frame = _items_frame(items)
    return draw_distributions(
        frame, metric, by, kind=kind, max_points=max_points, seed=seed, ax=ax, where=_WHERE, what="items",
        unit="answers",
    )  # fmt: skip
