"""The reliability diagram: whether a system's confidence is calibrated against ground truth."""

from __future__ import annotations

from typing import Any

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mas_eval.constraints import AXES, COLUMN_NAME, NONE, RUN_METRICS, Interval, Options, validate_params
from mas_eval.plots._style import (
    SYSTEM,
    axis_label,
    legend_above,
    readable,
    require_columns,
    require_rows,
    run_frame,
    system_colours,
    system_order,
    target_axes,
)
from mas_eval.stats.options import Strategy
from mas_eval.stats.reliability import calibration, reliability_table

__all__ = ["reliability"]

#: Marker area (points²) of the emptiest and of the fullest bin.
_AREA_MIN, _AREA_MAX = 4.0, 64.0


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "ax": [AXES, NONE],
        "confidence": [COLUMN_NAME],
        "outcome": [COLUMN_NAME],
        "bins": [Interval(int, 1)],
        "min_count": [Interval(int, 1)],
        "strategy": [Options.of(Strategy)],
    }
)
def reliability(
    run_metrics: Any,
    confidence: str = "decision_confidence",
    outcome: str = "gt_match",
    *,
    bins: int = 10,
    strategy: Strategy = "uniform",
    min_count: int = 10,
    ax: Axes | None = None,
) -> Figure:
    r"""Reliability diagram per system: accuracy against confidence by bin, with each system's ECE.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run with ``system``, ``confidence`` and ``outcome``.
    confidence : str
        Confidences in [0, 1].
    outcome : str
        Boolean or 0/1: whether the run was right (runs without one are left out).
    bins : int
        Number of confidence bins.
    strategy : {"uniform", "quantile"}
        Equal-width bins, or equal-mass bins per system.
    min_count : int
        Bins with fewer runs are drawn as open markers and left off the line: their accuracy
        is too noisy to read a trend from (they still count in the ECE).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes (the diagram is one panel); by default a new figure of
        ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    InvalidParameterError
        A bad parameter.
    SchemaError
        A named column is missing (the message lists those present), or is not numeric/boolean.
    DataError
        A confidence outside [0, 1], an outcome other than 0/1, or no run with both values.

    Notes
    -----
    The bins, their accuracies and each system's ECE come from
    :func:`mas_eval.stats.reliability_table` and :func:`mas_eval.stats.calibration` (same
    ``bins`` and ``strategy``), :math:`ECE = \sum_b \frac{n_b}{n} \lvert \bar y_b - \bar c_b \rvert`.
    Each non-empty bin is a point at (mean confidence, accuracy) in the system's colour, its
    area proportional to the runs in it, on one scale across systems (a scatter,
    ``gid="bin_counts:<system>"``), joined by a line (``gid="reliability:<system>"``) labelled
    ``"mas (ECE 0.112)"``; a bin with fewer than ``min_count`` runs is an open marker off the
    line (``gid="sparse_bins:<system>"``); the legend has one such entry per system, then "calibrated" for the
    diagonal, and its title says what the marker area means. The dashed diagonal
    (``gid="diagonal"``) is perfect calibration: points below it are over-confident, above it
    under-confident.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4,
    ...                      "decision_confidence": [0.15, 0.2, 0.85, 1.0, 0.9, 0.8, 0.95, 0.75],
    ...                      "gt_match": [False, True, True, True, True, False, False, True]})
    >>> fig = reliability(runs, bins=2)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['mas (ECE 0.200)', 'single (ECE 0.350)', 'calibrated']
    """
    where = "reliability"
    frame = run_frame(run_metrics, where)
    require_columns(frame, [SYSTEM, confidence, outcome], where)
    require_rows(frame, where)
    options = {"confidence": confidence, "outcome": outcome, "bins": bins, "strategy": strategy}
    table = reliability_table(frame, **options)
    require_rows(table, where, after=f"with both {confidence!r} and {outcome!r}")
    ece = dict(calibration(frame, **options).select(SYSTEM, "ece").drop_nulls().iter_rows())
    colours = system_colours(frame[SYSTEM].drop_nulls().unique().to_list())
    systems = system_order(table[SYSTEM].drop_nulls().unique().to_list())

    fig, ax = target_axes(ax)
    (diagonal,) = ax.plot(
        [0, 1], [0, 1], linestyle="--", color="0.55", linewidth=0.8, zorder=0, gid="diagonal", label="calibrated"
    )
    largest = float(table["n"].max())
    handles: list[Any] = []
    # A loop over the systems, to draw each in its colour.
    for system in systems:
        own = table.filter(pl.col(SYSTEM) == system)
        x, y, n = own["mean_confidence"].to_numpy(), own["accuracy"].to_numpy(), own["n"].to_numpy()
        colour = colours[system]
        label = f"{system} (ECE {ece[system]:.3f})"
        dense = n >= min_count
        ax.plot(x[dense], y[dense], color=colour, linewidth=1.0, zorder=2, gid=f"reliability:{system}", label=label)
        area = _AREA_MIN + (_AREA_MAX - _AREA_MIN) * n / largest
        ax.scatter(
            x[dense], y[dense], s=area[dense], color=colour, edgecolors="white", linewidths=0.4, zorder=3,
            gid=f"bin_counts:{system}",
        )  # fmt: skip
        if not dense.all():
            ax.scatter(
                x[~dense], y[~dense], s=area[~dense], facecolors="none", edgecolors=colour, linewidths=0.8, zorder=3,
                gid=f"sparse_bins:{system}",
            )  # fmt: skip
        handles.append(Line2D([], [], color=colour, marker="o", markersize=4, label=label))

    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(axis_label(confidence))
    ax.set_ylabel(f"{readable(outcome)} rate (0–1)")
    largest_text = f"{int(largest):,}"
    handles.append(diagonal)
    sparse = f"; open: < {min_count} runs" if bool((table["n"] < min_count).any()) else ""
    legend_above(ax, handles, title=f"marker area: runs per bin (largest {largest_text}){sparse}")
    return fig
