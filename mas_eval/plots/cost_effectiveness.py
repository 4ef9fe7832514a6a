"""Cost-effectiveness figures: the plane of (difference in effect, difference in cost) and the acceptability curve."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from mas_eval.constraints import AXES, COLUMN_NAME, FRAME, NONE, Interval, validate_params
from mas_eval.errors import DataError
from mas_eval.plots._style import (
    OKABE_ITO,
    as_drawn,
    difference_label,
    fitted,
    legend_above,
    require_columns,
    require_rows,
    run_frame,
    system_colours,
    target_axes,
)

__all__ = ["acceptability_curve", "cost_effectiveness_plane"]

#: The columns of a cost-effectiveness table that are not its ``by`` columns.
_SUMMARY_START = "metric"
#: The quadrants of the plane, by the signs of (difference in effect, difference in cost), as labelled.
_QUADRANTS = {(1, -1): "dominant", (1, 1): "dearer, better", (-1, -1): "cheaper, worse", (-1, 1): "dominated"}


def _groups(frame: pl.DataFrame, first_value: str) -> list[str]:
    """Return the ``by`` columns of a cost-effectiveness frame: those before ``first_value``."""
    return frame.columns[: frame.columns.index(first_value)] if first_value in frame.columns else []


def _one_group(frame: pl.DataFrame, keys: list[str], where: str, what: str) -> None:
    if keys and frame.select(keys).n_unique() > 1:
        msg = (
            f"{where}: {what} holds {frame.select(keys).n_unique()} groups of {', '.join(map(repr, keys))}; "
            f"filter it to one group (or draw each into its own ax=)"
        )
        raise DataError(msg)


@validate_params(
    {
        "summary": [FRAME],
        "replicates": [FRAME, NONE],
        "ax": [AXES, NONE],
        "price": [Interval(float, 0), NONE],
        "treatment": [COLUMN_NAME],
        "control": [COLUMN_NAME],
    }
)
def cost_effectiveness_plane(
    summary: Any,
    replicates: Any = None,
    *,
    price: float | None = None,
    treatment: str = "mas",
    control: str = "single",
    ax: Axes | None = None,
) -> Figure:
    r"""Draw the cost-effectiveness plane: the difference in cost against the difference in effect.

    Parameters
    ----------
    summary : polars.DataFrame or polars.LazyFrame
        :func:`mas_eval.stats.cost_effectiveness`'s table, one group (filter its ``by`` groups to
        one first): the point estimate and the intervals of the two differences.
    replicates : polars.DataFrame or polars.LazyFrame, optional
        The same call's ``level="replicates"`` frame, for the same group: the bootstrap cloud.
    price : float, optional
        A willingness to pay :math:`\lambda \ge 0` per unit of effect (per extra correct answer):
        the line :math:`\Delta C = \lambda \Delta E`, below which the treatment is worth its cost.
    treatment, control : str
        The compared systems, for the axis labels and the cloud's colour (the treatment's).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure of ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        A needed column is missing (the message lists those present).
    DataError
        No rows, or more than one group.

    Notes
    -----
    Drawn: the axes through 0 (``gid="plane_axes"``, a ``LineCollection`` of two segments) that
    cut the plane into its quadrants, each named in its corner (``Text``, ``gid="plane_quadrant"``:
    ``dominant`` bottom right, cheaper and better; ``dominated`` top left; the two trade-offs);
    the bootstrap replicates as one scatter in the treatment's colour (``gid="plane_replicates"``,
    one point per replicate); the estimate (``gid="plane_estimate"``) with its two t intervals as
    error bars (``gid="plane_estimate_ci"``, the x bar first); and the price line through 0
    (``gid="plane_price"``) when ``price`` is given. The x axis is the effect's difference, the y
    axis the cost's.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import cost_effectiveness
    >>> runs = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4, "case_id": [1, 2, 3, 4] * 2,
    ...                      "passed": [1, 1, 1, 0, 1, 0, 0, 0],
    ...                      "run_cost_usd": [0.30, 0.33, 0.27, 0.30, 0.10, 0.11, 0.09, 0.10]})
    >>> table = cost_effectiveness(runs, "passed", seed=1, n_boot=200)
    >>> cloud = cost_effectiveness(runs, "passed", seed=1, n_boot=200, level="replicates")
    >>> fig = cost_effectiveness_plane(table, cloud, price=0.5)
    >>> [a.get_gid() for a in fig.axes[0].collections]
    ['plane_replicates', 'plane_estimate_ci', 'plane_estimate_ci', 'plane_axes', 'plane_price']
    >>> len(fig.axes[0].collections[0].get_offsets()), fig.axes[0].get_ylabel()
    (200, 'Cost difference, mas − single (USD)')
    """
    where = "cost_effectiveness_plane"
    frame = run_frame(summary, where, "summary")
    needed = ["metric", "cost_metric", "delta_effect", "delta_cost"]
    needed += ["delta_effect_low", "delta_effect_high", "delta_cost_low", "delta_cost_high"]
    require_columns(frame, needed, where, "summary")
    require_rows(frame, where, "summary")
    keys = _groups(frame, _SUMMARY_START)
    _one_group(frame, keys, where, "summary")
    row = frame.row(0, named=True)
    colour = system_colours([treatment, control])[treatment]

    fig, ax = target_axes(ax)
    xs: list[float] = [0.0]
    ys: list[float] = [0.0]
    handles = []
    if replicates is not None:
        cloud = run_frame(replicates, where, "replicates")
        require_columns(cloud, ["delta_effect", "delta_cost"], where, "replicates")
        _one_group(cloud, _groups(cloud, "replicate"), where, "replicates")
        x, y = cloud["delta_effect"].to_numpy(), cloud["delta_cost"].to_numpy()
        points = ax.scatter(
            x, y, s=4, color=colour, alpha=0.25, linewidths=0, zorder=2, gid="plane_replicates",
            label=f"bootstrap ({cloud.height:,})", rasterized=cloud.height > 5000,
        )  # fmt: skip
        handles.append(points)
        xs += [float(np.nanmin(x)), float(np.nanmax(x))]
        ys += [float(np.nanmin(y)), float(np.nanmax(y))]

    estimate = (row["delta_effect"], row["delta_cost"])
    if all(v is not None for v in estimate):
        x_err = _error(row["delta_effect"], row["delta_effect_low"], row["delta_effect_high"])
        y_err = _error(row["delta_cost"], row["delta_cost_low"], row["delta_cost_high"])
        container = ax.errorbar(
            [estimate[0]], [estimate[1]], xerr=x_err, yerr=y_err, fmt="o", color="black", markersize=5,
            elinewidth=1.0, capsize=2, zorder=4, label="estimate",
        )  # fmt: skip
        container.lines[0].set_gid("plane_estimate")
        for bars in container.lines[2]:
            bars.set_gid("plane_estimate_ci")
        handles.append(container)
        xs += [v for v in (row["delta_effect_low"], row["delta_effect_high"], estimate[0]) if v is not None]
        ys += [v for v in (row["delta_cost_low"], row["delta_cost_high"], estimate[1]) if v is not None]

    x_low, x_high = _padded(min(xs), max(xs))
    y_low, y_high = _padded(min(ys), max(ys))
    ax.set_xlim(x_low, x_high)
    ax.set_ylim(y_low, y_high)
    cross = LineCollection(
        [[(x_low, 0.0), (x_high, 0.0)], [(0.0, y_low), (0.0, y_high)]], colors="0.45", linewidths=0.8, zorder=1,
        gid="plane_axes",
    )  # fmt: skip
    ax.add_collection(cross, autolim=False)
    corners = {(1, -1): (0.98, 0.02, "right", "bottom"), (1, 1): (0.98, 0.98, "right", "top"),
               (-1, -1): (0.02, 0.02, "left", "bottom"), (-1, 1): (0.02, 0.98, "left", "top")}  # fmt: skip
    for signs, (cx, cy, ha, va) in corners.items():
        ax.text(
            cx, cy, _QUADRANTS[signs], transform=ax.transAxes, ha=ha, va=va, fontsize="x-small", color="0.35",
            gid="plane_quadrant",
        )  # fmt: skip
    if price is not None:
        line = ax.add_collection(
            LineCollection(
                [[(x_low, price * x_low), (x_high, price * x_high)]],
                colors=OKABE_ITO["vermillion"],
                linestyles=(0, (5, 2)),
                linewidths=1.0,
                zorder=3,
                gid="plane_price",
            ),
            autolim=False,
        )
        line.set_label(f"{price:g} per unit of effect")
        handles.append(line)
    ax.set_xlabel(fitted(difference_label(str(row["metric"]), treatment, control), ax))
    ax.set_ylabel(fitted(difference_label(str(row["cost_metric"]), treatment, control), ax, "y"))
    if handles:
        legend_above(ax, handles)
    return fig


def _error(value: float, low: float | None, high: float | None) -> np.ndarray | None:
    """Return the asymmetric error bar of an interval around ``value``; None without one."""
    if low is None or high is None:
        return None
    return np.array([[value - low], [high - value]])


def _padded(low: float, high: float) -> tuple[float, float]:
    span = high - low if high > low else max(abs(high), 1.0)
    return low - 0.08 * span, high + 0.08 * span


@validate_params({"curve": [FRAME], "ax": [AXES, NONE], "treatment": [COLUMN_NAME]})
def acceptability_curve(curve: Any, *, treatment: str = "mas", ax: Axes | None = None) -> Figure:
    r"""Draw the cost-effectiveness acceptability curve: how likely the treatment is worth its cost, at each price.

    Parameters
    ----------
    curve : polars.DataFrame or polars.LazyFrame
        :func:`mas_eval.stats.cost_effectiveness`'s ``level="acceptability"`` frame: ``price``,
        ``probability`` and any ``by`` columns (one curve per group).
    treatment : str
        The treatment, whose colour a single curve takes.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure of ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        A needed column is missing.
    DataError
        No row has a probability.

    Notes
    -----
    Each group is one ``Line2D`` (``gid="acceptability"``) through its (price, probability)
    points in price order, labelled with its group (``task=t1``); one group is drawn in the
    treatment's colour, several in the Okabe–Ito colours in turn. The y axis runs from 0 to 1,
    with a dashed line at 0.5 (``gid="acceptability_half"``): the price where a curve crosses it
    is the median of the bootstrap ICERs when every replicate is better.

    Examples
    --------
    >>> import polars as pl
    >>> curve = pl.DataFrame({"metric": "passed", "cost_metric": "run_cost_usd", "price": [0.0, 0.5, 1.0],
    ...                       "probability": [0.0, 0.6, 0.95]})
    >>> fig = acceptability_curve(curve)
    >>> [line.get_xydata().tolist() for line in fig.axes[0].lines if line.get_gid() == "acceptability"]
    [[[0.0, 0.0], [0.5, 0.6], [1.0, 0.95]]]
    """
    where = "acceptability_curve"
    frame = run_frame(curve, where, "curve")
    require_columns(frame, ["price", "probability"], where, "curve")
    keys = _groups(frame, _SUMMARY_START) if _SUMMARY_START in frame.columns else _groups(frame, "price")
    data = frame.filter(pl.col("probability").is_not_null() & pl.col("price").is_not_null())
    require_rows(data, where, "curve", after="with a probability")
    groups = data.select(keys).unique(maintain_order=True).sort(keys, nulls_last=True) if keys else None
    fig, ax = target_axes(ax)
    ax.axhline(0.5, color="0.6", linewidth=0.8, linestyle="--", zorder=1, gid="acceptability_half")
    palette = [OKABE_ITO[name] for name in ("blue", "vermillion", "bluish green", "reddish purple", "sky blue")]
    handles = []
    rows = [{}] if groups is None else list(groups.iter_rows(named=True))
    # A loop over the groups (a handful of tasks), one line each.
    for i, key in enumerate(rows):
        part = data
        for name, value in key.items():
            part = part.filter(pl.col(name).is_null() if value is None else pl.col(name) == value)
        part = part.sort("price")
        colour = system_colours([treatment])[treatment] if len(rows) == 1 else palette[i % len(palette)]
        label = ", ".join(f"{k}={as_drawn(v)}" for k, v in key.items()) or as_drawn(treatment)
        (line,) = ax.plot(
            part["price"].to_numpy(), part["probability"].to_numpy(), color=colour, linewidth=1.4, zorder=3,
            gid="acceptability", label=label,
        )  # fmt: skip
        handles.append(line)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(left=0.0)
    ax.set_xlabel("Price of one unit of effect (willingness to pay)")
    ax.set_ylabel("Probability cost-effective")
    legend_above(ax, handles)
    return fig
