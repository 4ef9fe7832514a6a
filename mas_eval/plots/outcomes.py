"""Figures of logged outcomes: pass rates with their intervals, and what a correct answer costs each system."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mas_eval.constraints import AXES, AXES_LIST, FRAME, NONE, Options, validate_params
from mas_eval.errors import DataError, format_keys
from mas_eval.plots._style import (
    SYSTEM,
    as_drawn,
    default_size,
    legend_above,
    numeric,
    require_columns,
    require_rows,
    run_frame,
    system_colours,
    system_order,
    target_axes,
)

__all__ = ["RateInterval", "cost_per_correct", "pass_rates"]

#: The interval :func:`pass_rates` draws: Wilson's, Clopper–Pearson's or the cluster-robust one.
RateInterval = Literal["wilson", "clopper_pearson", "cluster"]

#: Row height (inches) of a figure with one row per group, and the room its axis and legend take.
_ROW, _MARGIN = 0.24, 0.9
#: Vertical room a row gives its systems (of 1).
_SPREAD = 0.5


def _group_columns(frame: pl.DataFrame, first_value: str) -> list[str]:
    """Return the ``by`` columns of a statistic's table: those before ``system``, and before ``first_value``."""
    stop = frame.columns.index(SYSTEM) if SYSTEM in frame.columns else frame.columns.index(first_value)
    return frame.columns[:stop]


def _labels(frame: pl.DataFrame, keys: list[str]) -> list[str]:
    """One label per row: its group values joined by `` · ``, each drawn as written."""
    if not keys:
        return ["" for _ in range(frame.height)]
    parts = [pl.col(k).cast(pl.String).fill_null("null") for k in keys]
    return [as_drawn(t) for t in frame.select(pl.concat_str(parts, separator=" · ")).to_series().to_list()]


def _rows_and_offsets(frame: pl.DataFrame, keys: list[str], systems: list[str]) -> tuple[pl.DataFrame, np.ndarray]:
    """``frame`` with a ``_row`` index per distinct group (in order of appearance), and each system's offset."""
    if keys:
        groups = frame.select(keys).unique(maintain_order=True).with_row_index("_row")
        frame = frame.join(groups, on=keys, how="left", nulls_equal=True, maintain_order="left")
    else:
        frame = frame.with_columns(pl.lit(0, pl.UInt32).alias("_row"))
    step = _SPREAD / max(len(systems), 1)
    offsets = (np.arange(len(systems)) - (len(systems) - 1) / 2) * step
    return frame, offsets


@validate_params({"rates": [FRAME], "interval": [Options.of(RateInterval)], "ax": [AXES, NONE]})
def pass_rates(rates: Any, *, interval: RateInterval = "wilson", ax: Axes | None = None) -> Figure:
    """Each system's pass rate per group (task, metric), a dot with its interval, one colour per system.

    Parameters
    ----------
    rates : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.pass_rates` (one or several metrics, concatenated): its ``by``
        columns, ``system``, ``metric``, ``rate`` and the interval's ``<interval>_low`` / ``_high``.
    interval : {"wilson", "clopper_pearson", "cluster"}
        The interval drawn: Wilson's score interval, the exact Clopper–Pearson one, or the cluster-robust
        one (when runs repeat a case, the one to read: the other two treat repeats as independent).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure as wide as ``rcParams["figure.figsize"]`` and 0.24 in
        taller per row.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        A needed column is missing.
    DataError
        No row has a rate, or two rows share a group, metric and system.

    Notes
    -----
    One row per group of the ``by`` columns and ``metric`` (labelled ``"task1 · match"``; the metric alone
    when there are no groups), top to bottom in the table's order; within a row the systems are stacked
    (``mas`` above ``single``). Each system's rates are one ``Line2D`` of dots (``gid="pass_rate:<system>"``,
    x the rates) and its intervals one ``LineCollection`` (``gid="pass_rate_ci:<system>"``, one segment
    per row with both ends). The x axis runs from 0 to 1.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import pass_rates as rates
    >>> runs = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4, "task": ["a", "a", "b", "b"] * 2,
    ...                      "ok": [True, True, True, False, True, False, False, False]})
    >>> fig = pass_rates(rates(runs, "ok", by="task"))
    >>> [(line.get_gid(), line.get_xdata().tolist()) for line in fig.axes[0].lines]
    [('pass_rate:mas', [1.0, 0.5]), ('pass_rate:single', [0.5, 0.0])]
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a · ok', 'b · ok']
    """
    where = "pass_rates"
    low_name, high_name = f"{interval}_low", f"{interval}_high"
    frame = run_frame(rates, where, "rates")
    require_columns(frame, [SYSTEM, "metric", "rate", low_name, high_name], where, "rates")
    keys = [*_group_columns(frame, "metric"), "metric"]
    data = frame.select(
        *keys,
        pl.col(SYSTEM),
        numeric(frame, "rate", where).alias("_x"),
        numeric(frame, low_name, where).alias("_low"),
        numeric(frame, high_name, where).alias("_high"),
    ).filter(pl.col("_x").is_not_null())
    require_rows(data, where, "rates", after="with a rate")
    repeated = data.select(*keys, SYSTEM).is_duplicated()
    if repeated.any():
        shown = format_keys(
            data.filter(repeated).select(*keys, SYSTEM).unique(maintain_order=True).iter_rows(named=True)
        )
        msg = f"{where}: more than one rate of a group, metric and system: {shown}; give one row each"
        raise DataError(msg)
    systems = system_order(data[SYSTEM].to_list())
    colours = system_colours(systems)
    data, offsets = _rows_and_offsets(data, keys, systems)
    rows = int(data["_row"].max()) + 1  # type: ignore[arg-type]
    width, _ = default_size()
    fig, axes = target_axes(ax, None if ax is not None else (width, _MARGIN + _ROW * rows * max(2, len(systems))))
    handles = []
    # A loop over the handful of systems, to draw each in its colour.
    for offset, system in zip(offsets, systems, strict=True):
        points = data.filter(pl.col(SYSTEM) == system).sort("_row")
        y = points["_row"].to_numpy().astype(float) + offset
        x = points["_x"].to_numpy()
        low, high = points["_low"].fill_null(np.nan).to_numpy(), points["_high"].fill_null(np.nan).to_numpy()
        has = np.isfinite(low) & np.isfinite(high)
        axes.hlines(y[has], low[has], high[has], colors=colours[system], linewidth=1.4, zorder=2,
                    gid=f"pass_rate_ci:{system}")  # fmt: skip
        (line,) = axes.plot(
            x, y, linestyle="none", marker="o", markersize=4.5, color=colours[system], markeredgecolor="white",
            markeredgewidth=0.5, zorder=3, gid=f"pass_rate:{system}", label=system,
        )  # fmt: skip
        handles.append(line)
    labels = _labels(data.select(keys).unique(maintain_order=True), keys)
    axes.set_yticks(np.arange(rows, dtype=float), labels)
    axes.set_ylim(rows - 0.5, -0.5)
    axes.tick_params(axis="y", length=0)
    axes.set_xlim(-0.02, 1.02)
    name = {"wilson": "Wilson", "clopper_pearson": "Clopper–Pearson", "cluster": "cluster-robust"}[interval]
    axes.set_xlabel(f"Pass rate with its 95% {name} interval")
    legend_above(axes, handles)
    return fig


#: The panels :func:`cost_per_correct` draws, by the spending its table holds.
_SPENT = {"tokens": "Tokens", "cost": "Cost (USD)"}


@validate_params({"table": [FRAME], "ax": [AXES, AXES_LIST, NONE]})
def cost_per_correct(table: Any, *, ax: Any = None) -> Figure:
    """Draw what a correct answer costs each system: bars of tokens (and cost) per correct answer, per run marked.

    Parameters
    ----------
    table : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.cost_per_correct`: its ``by`` columns, ``system`` and
        ``tokens_per_correct`` / ``tokens_per_run`` and (or) ``cost_per_correct`` / ``cost_per_run``.
    ax : matplotlib.axes.Axes or sequence of Axes, optional
        One Axes per panel (tokens, then cost, those the table holds); by default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or the given axes' figure.

    Raises
    ------
    SchemaError
        The table has neither ``tokens_per_correct`` nor ``cost_per_correct``, or lacks ``system``.
    DataError
        No row with a value, or two rows share a group and system.

    Notes
    -----
    One panel per spending the table holds (tokens, cost), one row per group (a task; one row without),
    the systems stacked within it. A system's bars (``gid="per_correct:<spending>:<system>"``, a
    ``BarContainer``'s patches carry it) are its spending per correct answer :math:`T/c`; a white-edged
    tick (``gid="per_run:<spending>:<system>"``) marks its spending per run :math:`T/n`, so the gap is what
    its failures cost. A system with no correct answer has no bar (its :math:`T/c` is undefined).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import cost_per_correct as per_correct
    >>> runs = pl.DataFrame({"system": ["mas", "mas", "single", "single"], "case_id": ["a", "b"] * 2,
    ...                      "epoch": 1, "ok": [1, 1, 1, 0], "run_tokens": [900, 1100, 200, 300]})
    >>> fig = cost_per_correct(per_correct(runs, "ok", cost=None))
    >>> [(p.get_gid(), float(p.get_width())) for p in fig.axes[0].patches]
    [('per_correct:tokens:mas', 1000.0), ('per_correct:tokens:single', 500.0)]
    >>> [(line.get_gid(), line.get_xdata().tolist()) for line in fig.axes[0].lines]
    [('per_run:tokens:mas', [1000.0]), ('per_run:tokens:single', [250.0])]
    """
    where = "cost_per_correct"
    frame = run_frame(table, where, "table")
    spent = [name for name in _SPENT if f"{name}_per_correct" in frame.columns]
    require_columns(frame, [SYSTEM, *(spent or ["tokens_per_correct"])], where, "table")
    keys = _group_columns(frame, "runs")
    data = frame.select(
        *keys, pl.col(SYSTEM),
        *(numeric(frame, f"{name}_per_correct", where).alias(f"_{name}") for name in spent),
        *(numeric(frame, f"{name}_per_run", where).alias(f"_{name}_run") for name in spent
          if f"{name}_per_run" in frame.columns),
    ).filter(pl.any_horizontal(pl.col(f"_{name}").is_not_null() for name in spent))  # fmt: skip
    require_rows(data, where, "table", after="with a spending per correct answer")
    if data.select(*keys, SYSTEM).is_duplicated().any():
        msg = f"{where}: more than one row of a group and system; give one row each"
        raise DataError(msg)
    systems = system_order(data[SYSTEM].to_list())
    colours = system_colours(systems)
    data, offsets = _rows_and_offsets(data, keys, systems)
    rows = int(data["_row"].max()) + 1  # type: ignore[arg-type]
    if ax is None:
        width, _ = default_size()
        fig = Figure(figsize=(width, _MARGIN + _ROW * rows * max(2, len(systems))), layout="constrained")
        panels = list(fig.subplots(1, len(spent), sharey=True, squeeze=False)[0])
    else:
        panels = list(ax) if isinstance(ax, list | tuple) else [ax]
        if len(panels) != len(spent):
            drawn = ", ".join(spent)
            msg = f"{where}: ax holds {len(panels)} Axes; the table has {len(spent)} panel(s) to draw ({drawn})"
            raise DataError(msg)
        fig = panels[0].figure
    height = _SPREAD / max(len(systems), 1) * 0.9
    handles = []
    # A loop over the one or two panels and the handful of systems, to draw each in its colour.
    for panel, name in zip(panels, spent, strict=True):
        for offset, system in zip(offsets, systems, strict=True):
            points = data.filter(pl.col(SYSTEM) == system).sort("_row")
            y = points["_row"].to_numpy().astype(float) + offset
            values = points[f"_{name}"].fill_null(np.nan).to_numpy()
            has = np.isfinite(values)
            bars = panel.barh(y[has], values[has], height=height, color=colours[system], zorder=2, label=system,
                              gid=f"per_correct:{name}:{system}")  # fmt: skip
            for patch in bars.patches:
                patch.set_gid(f"per_correct:{name}:{system}")
            if name == spent[0]:
                handles.append(bars)
            if f"_{name}_run" in points.columns:
                per_run = points[f"_{name}_run"].fill_null(np.nan).to_numpy()
                ok = np.isfinite(per_run)
                panel.plot(per_run[ok], y[ok], linestyle="none", marker="|", markersize=7, markeredgewidth=1.6,
                           color="white", zorder=3, gid=f"per_run:{name}:{system}")  # fmt: skip
        panel.set_xlabel(f"{_SPENT[name]} per correct answer")
        panel.set_xlim(left=0)
        panel.tick_params(axis="y", length=0)
    labels = _labels(data.select(keys).unique(maintain_order=True), keys) if keys else [""]
    panels[0].set_yticks(np.arange(rows, dtype=float), labels)
    panels[0].set_ylim(rows - 0.5, -0.5)
    legend_above(panels[0], handles)
    return fig
