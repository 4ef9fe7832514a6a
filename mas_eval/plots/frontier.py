"""The accuracy–cost frontier drawn: each system's pass rate against what it spends, as k epochs per case grow.

:func:`frontier_curve` draws the table :func:`mas_eval.stats.accuracy_cost_frontier` computes. The figure
was called ``accuracy_cost_frontier`` too, the table's name; that name stays for one release as a
deprecated alias that warns (``DeprecationWarning``) and draws the same figure.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patheffects import withStroke

from mas_eval.constraints import AXES, FRAME, NONE, Boolean, Options, validate_params
from mas_eval.errors import DataError, format_keys
from mas_eval.plots._style import (
    SYSTEM,
    legend_above,
    numeric,
    plain_log_axis,
    require_columns,
    require_rows,
    run_frame,
    system_colours,
    system_order,
    target_axes,
)

__all__ = ["FrontierX", "FrontierY", "accuracy_cost_frontier", "frontier_curve"]

#: The spending on the x axis: the frontier's ``tokens_per_case`` or ``cost_per_case``.
FrontierX = Literal["tokens", "cost"]
#: The rate on the y axis: the majority vote of k epochs, or pass@k (one of k passes).
FrontierY = Literal["majority", "pass_at_k"]

_X = {"tokens": ("tokens_per_case", "Mean tokens per case"), "cost": ("cost_per_case", "Mean cost per case (USD)")}
_Y = {"majority": ("majority_rate", "Pass rate, majority of k epochs"), "pass_at_k": ("pass_at_k", "pass@k")}


#: The parameters' constraints, shared by :func:`frontier_curve` and its deprecated alias.
_CONSTRAINTS = {
    "frontier": [FRAME],
    "ax": [AXES, NONE],
    "x": [Options.of(FrontierX)],
    "y": [Options.of(FrontierY)],
    "log_x": [Boolean(), NONE],
}


@validate_params(_CONSTRAINTS)
def frontier_curve(
    frontier: Any,
    *,
    x: FrontierX = "tokens",
    y: FrontierY = "majority",
    log_x: bool | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Draw each system's pass rate against its spending per case, one point per k, joined in k order.

    Parameters
    ----------
    frontier : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.accuracy_cost_frontier`: one row per ``system`` and
        ``k`` (filter its ``by`` groups to one first).
    x : {"tokens", "cost"}
        The x axis: ``tokens_per_case`` or ``cost_per_case``.
    y : {"majority", "pass_at_k"}
        The y axis: ``majority_rate`` (what a deployment that votes gets) or ``pass_at_k`` (one
        of k passes: a ceiling, reached only with an oracle that picks the right answer).
    log_x : bool, optional
        A logarithmic x axis; by default one is used when the spending is positive and spans more
        than a factor of 10 (k = 1, 2, 4, … doubles it at each point).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure of ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        A needed column is missing (the message lists those present), or is not numeric.
    DataError
        No point has both values, or two rows share a system and k.

    Notes
    -----
    Each system is one ``Line2D`` in its colour (``gid="frontier:<system>"``) through its points
    by increasing k, each point labelled with its k (``Text``, ``gid="frontier_k:<system>"``;
    the first reads ``k=1``). A single agent's curve passing above a MAS's point is a
    compute-matched win for the single agent: more tries for the same spending beat the team.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import accuracy_cost_frontier as points
    >>> runs = pl.DataFrame({"system": ["mas"] * 2 + ["single"] * 4, "case_id": "a",
    ...                      "epoch": [1, 2, 1, 2, 3, 4], "ok": [1, 0, 0, 1, 1, 1],
    ...                      "run_tokens": [900, 950, 200, 210, 190, 200]})
    >>> fig = frontier_curve(points(runs, "ok", cost=None))
    >>> [(line.get_gid(), line.get_xydata().tolist()) for line in fig.axes[0].lines]
    [('frontier:mas', [[900.0, 1.0], [1850.0, 0.0]]), ('frontier:single', [[200.0, 0.0], [410.0, 0.0], [800.0, 1.0]])]
    """
    where = "frontier_curve"
    x_column, x_label = _X[x]
    y_column, y_label = _Y[y]
    frame = run_frame(frontier, where, "frontier")
    require_columns(frame, [SYSTEM, "k", x_column, y_column], where, "frontier")
    data = frame.select(
        pl.col(SYSTEM),
        pl.col("k"),
        numeric(frame, x_column, where).alias("_x"),
        numeric(frame, y_column, where).alias("_y"),
    ).drop_nulls()
    require_rows(data, where, "frontier", after=f"with values of both {x_column!r} and {y_column!r}")
    repeated = data.select(SYSTEM, "k").is_duplicated()
    if repeated.any():
        shown = format_keys(data.filter(repeated).select(SYSTEM, "k").unique(maintain_order=True).iter_rows(named=True))
        msg = (
            f"{where}: the frontier has more than one row of a system and k: {shown}; it has 'by' groups: "
            "filter it to one group (or draw each group into its own ax=)"
        )
        raise DataError(msg)
    data = data.sort(SYSTEM, "k")
    present = data[SYSTEM].unique().to_list()
    colours = system_colours(present)

    fig, ax = target_axes(ax)
    handles = []
    # A loop over the handful of systems, to draw each in its colour.
    for system in system_order(present):
        points = data.filter(pl.col(SYSTEM) == system)
        xs, ys, ks = points["_x"].to_numpy(), points["_y"].to_numpy(), points["k"].to_list()
        (line,) = ax.plot(
            xs, ys, color=colours[system], marker="o", markersize=4, linewidth=1.2, markeredgecolor="white",
            markeredgewidth=0.5, zorder=3, gid=f"frontier:{system}", label=system,
        )  # fmt: skip
        handles.append(line)
        for i, (px, py, k) in enumerate(zip(xs, ys, ks, strict=True)):
            ax.annotate(
                f"k={k}" if i == 0 else str(k), (px, py), xytext=(0, 5), textcoords="offset points", ha="center",
                va="bottom", fontsize="x-small", color=colours[system], gid=f"frontier_k:{system}", zorder=4,
                path_effects=[withStroke(linewidth=2, foreground="white")],
            )  # fmt: skip

    spending = data["_x"].to_numpy()
    spread = spending.max() / max(spending.min(), 1e-300)
    if log_x if log_x is not None else bool(np.all(spending > 0) and spread > 10):
        ax.set_xscale("log")
        plain_log_axis(ax.xaxis)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    # Room above the top point for its k label.
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + 0.06 * (high - low))
    legend_above(ax, handles)
    return fig


@validate_params(_CONSTRAINTS)
def accuracy_cost_frontier(
    frontier: Any,
    *,
    x: FrontierX = "tokens",
    y: FrontierY = "majority",
    log_x: bool | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Draw the accuracy–cost frontier: the deprecated name of :func:`frontier_curve`.

    .. deprecated:: 0.2.0
        The figure shared its name with the table :func:`mas_eval.stats.accuracy_cost_frontier`;
        call :func:`frontier_curve` (same parameters, same figure). The alias goes in the release after 0.2.0.

    Parameters
    ----------
    frontier : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.accuracy_cost_frontier`.
    x : {"tokens", "cost"}
        The x axis, as :func:`frontier_curve`'s.
    y : {"majority", "pass_at_k"}
        The y axis, as :func:`frontier_curve`'s.
    log_x : bool, optional
        A logarithmic x axis, as :func:`frontier_curve`'s.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        What :func:`frontier_curve` returns.

    Warns
    -----
    DeprecationWarning
        On every call, naming :func:`frontier_curve`.

    Examples
    --------
    >>> import warnings
    >>> import polars as pl
    >>> from mas_eval.stats import accuracy_cost_frontier as points
    >>> runs = pl.DataFrame({"system": ["mas", "single"], "case_id": "a", "epoch": 1, "ok": [1, 0],
    ...                      "run_tokens": [900, 200]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fig = accuracy_cost_frontier(points(runs, "ok", cost=None))
    >>> print(caught[0].category.__name__, caught[0].message)
    DeprecationWarning plots.accuracy_cost_frontier is deprecated; use plots.frontier_curve (the same figure)
    >>> [line.get_gid() for line in fig.axes[0].lines]
    ['frontier:mas', 'frontier:single']
    """
    msg = "plots.accuracy_cost_frontier is deprecated; use plots.frontier_curve (the same figure)"
    # stacklevel 3: past this body and validate_params' wrapper, to the line that called the alias.
    warnings.warn(msg, DeprecationWarning, stacklevel=3)
    return frontier_curve(frontier, x=x, y=y, log_x=log_x, ax=ax)
