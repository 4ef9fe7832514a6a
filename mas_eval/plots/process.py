"""Figures of how the agents worked: each system's profile and each agent's share of its system's work.

The profile shows means with intervals, a panel per measure; the shares are of tokens, turns and tool calls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from mas_eval.constraints import COLUMN_NAMES, FRAME, MAPPING, NONE, Interval, validate_params
from mas_eval.errors import DataError
from mas_eval.plots._style import (
    SYSTEM,
    as_drawn,
    axis_label,
    default_size,
    legend_above,
    numeric,
    require_columns,
    require_rows,
    run_frame,
    system_colours,
    system_order,
)

__all__ = ["agent_shares", "system_profile"]

#: A tick label as the number itself.
_PLAIN = FuncFormatter(lambda value, _: f"{value:g}")
#: Panels per row of a profile, and the height (inches) of a row of panels and of each system in it.
_PER_ROW, _PANEL, _PER_SYSTEM = 4, 0.75, 0.16
#: What :func:`agent_shares` draws, by the share column, and its axis label.
_SHARES = {"token_share": "Share of tokens", "turn_share": "Share of turns", "tool_call_share": "Share of tool calls"}


def _by_columns(frame: pl.DataFrame) -> list[str]:
    return frame.columns[: frame.columns.index(SYSTEM)] if SYSTEM in frame.columns else []


@validate_params(
    {
        "summary": [FRAME],
        "metrics": [COLUMN_NAMES, NONE],
        "columns": [Interval(int, 1, 12), NONE],
        "labels": [MAPPING, NONE],
    }
)
def system_profile(
    summary: Any, metrics: str | Sequence[str] | None = None, *, columns: int | None = None, labels: Any = None
) -> Figure:
    """Each system's mean of each measure with its interval: one small panel per measure, one colour per system.

    Parameters
    ----------
    summary : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.describe` (one group: filter its ``by`` groups first):
        ``system``, ``metric``, ``mean``, ``ci_low``, ``ci_high`` and ``interval``.
    metrics : str or list of str, optional
        The measures drawn, in this order (default: every metric of ``summary``, in its order).
    columns : int, optional
        Panels per row (default: up to 4).
    labels : mapping of str to str, optional
        A panel's title by metric (default: the metric's readable name and unit).

    Returns
    -------
    matplotlib.figure.Figure
        A new figure of ``rcParams["figure.figsize"]``'s width, one row of panels per ``columns`` measures.

    Raises
    ------
    SchemaError
        A needed column is missing.
    DataError
        No row with a mean, a metric asked for is not in ``summary``, or it holds more than one group.

    Notes
    -----
    A panel per measure (titled with its name and unit, :func:`~mas_eval.plots._style.axis_label`), its
    own x scale (the measures have different units), the systems top to bottom (``mas``, ``single``, then
    the others). Each system's mean is a dot (``Line2D``, ``gid="profile:<metric>:<system>"``) and its
    interval a segment (``LineCollection``, ``gid="profile_ci:<metric>:<system>"``) when it has one. A
    pass rate's panel runs from 0 to 1. The figure's legend names the systems above the first panel.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import describe
    >>> runs = pl.DataFrame({"system": ["mas"] * 3 + ["single"] * 3, "ok": [True, True, False, True, False, False],
    ...                      "turns": [6.0, 8.0, 7.0, 1.0, 1.0, 1.0]})
    >>> fig = system_profile(describe(runs, ["ok", "turns"]))
    >>> [(line.get_gid(), line.get_xdata().round(3).tolist()) for ax in fig.axes for line in ax.lines]
    [('profile:ok:mas', [0.667]), ('profile:ok:single', [0.333]), ('profile:turns:mas', [7.0]), ('profile:turns:single', [1.0])]
    >>> [ax.get_title(loc="left") for ax in fig.axes]
    ['Ok', 'Turns']
    """  # noqa: E501
    where = "system_profile"
    frame = run_frame(summary, where, "summary")
    require_columns(frame, [SYSTEM, "metric", "mean", "ci_low", "ci_high"], where, "summary")
    groups = _by_columns(frame)
    if groups and frame.select(groups).n_unique() > 1:
        count, names = frame.select(groups).n_unique(), ", ".join(groups)
        msg = f"{where}: the summary holds {count} groups of {names}; filter it to one"
        raise DataError(msg)
    data = frame.select(
        SYSTEM, "metric",
        *([pl.col("kind")] if "kind" in frame.columns else [pl.lit("graded").alias("kind")]),
        numeric(frame, "mean", where).alias("_x"),
        numeric(frame, "ci_low", where).alias("_low"),
        numeric(frame, "ci_high", where).alias("_high"),
    ).filter(pl.col("_x").is_not_null())  # fmt: skip
    require_rows(data, where, "summary", after="with a mean")
    present = data["metric"].unique(maintain_order=True).to_list()
    chosen = present if metrics is None else ([metrics] if isinstance(metrics, str) else list(metrics))
    unknown = [name for name in chosen if name not in present]
    if unknown:
        asked, have = ", ".join(map(repr, unknown)), ", ".join(map(repr, present))
        msg = f"{where}: no mean of {asked} in the summary; it has {have}"
        raise DataError(msg)
    systems = system_order(data[SYSTEM].to_list())
    colours = system_colours(systems)
    per_row = columns or min(_PER_ROW, len(chosen))
    rows = math.ceil(len(chosen) / per_row)
    width, _ = default_size()
    fig = Figure(figsize=(width, rows * (_PANEL + _PER_SYSTEM * len(systems)) + 0.35), layout="constrained")
    grid = fig.subplots(rows, per_row, squeeze=False)
    y_of = {system: i for i, system in enumerate(systems)}
    handles = []
    # A loop over the few measures (panels) and systems, to draw each in its colour.
    for index, name in enumerate(chosen):
        panel = grid[index // per_row][index % per_row]
        points = data.filter(pl.col("metric") == name)
        for row in points.iter_rows(named=True):
            system, y = row[SYSTEM], float(y_of[row[SYSTEM]])
            if row["_low"] is not None and row["_high"] is not None:
                panel.hlines([y], [row["_low"]], [row["_high"]], colors=colours[system], linewidth=1.4, zorder=2,
                             gid=f"profile_ci:{name}:{system}")  # fmt: skip
            (line,) = panel.plot(
                [row["_x"]], [y], linestyle="none", marker="o", markersize=4.5, color=colours[system],
                markeredgecolor="white", markeredgewidth=0.5, zorder=3, gid=f"profile:{name}:{system}", label=system,
            )  # fmt: skip
            if index == 0:
                handles.append(line)
        title = (labels or {}).get(name) or axis_label(name)
        panel.set_title(as_drawn(title), fontsize="small", loc="left")
        panel.set_yticks(
            np.arange(len(systems), dtype=float), [as_drawn(s) for s in systems] if index % per_row == 0 else []
        )
        panel.set_ylim(len(systems) - 0.5, -0.5)
        panel.tick_params(axis="y", length=0)
        if (points["kind"] == "pass/fail").all():
            panel.set_xlim(-0.02, 1.02)
        panel.margins(x=0.15)
        # Each tick as its number (9.5e-05, 20000), never a shared offset or multiplier in a panel's corner;
        # few enough that such numbers fit side by side in a narrow panel.
        panel.xaxis.set_major_locator(MaxNLocator(nbins=3))
        panel.xaxis.set_major_formatter(_PLAIN)
    for index in range(len(chosen), rows * per_row):
        grid[index // per_row][index % per_row].set_visible(False)
    fig.legend(handles=handles, labels=[as_drawn(h.get_label()) for h in handles], loc="outside upper center",
               ncols=len(handles), frameon=False)  # fmt: skip
    return fig


@validate_params({"shares": [FRAME], "top": [Interval(int, 1, 100)]})
def agent_shares(shares: Any, *, top: int = 6) -> Figure:
    """Each agent's share of its system's tokens, turns and tool calls: a panel per measure, a bar per agent.

    Parameters
    ----------
    shares : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.agent_shares` (one group: filter its ``by`` groups first):
        ``system``, ``agent_id`` and the shares ``token_share``, ``turn_share``, ``tool_call_share``.
    top : int
        Agents shown per system, in the table's order (most tokens first); the others are one bar,
        ``"n other agents"``, holding the rest of the shares.

    Returns
    -------
    matplotlib.figure.Figure
        A new figure: one panel per share with a value, one row per system and agent.

    Raises
    ------
    SchemaError
        A needed column is missing.
    DataError
        No share has a value, or the table holds more than one group.

    Notes
    -----
    The rows are grouped by system (``mas``, ``single``, then the others) and labelled ``"system · agent"``;
    every bar of a system is in its colour (``BarContainer`` patches, ``gid="share:<measure>:<system>"``,
    width the share). A measure no agent recorded (no tool calls) has no panel. A single agent's bars are
    1: the contrast is the point.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import agent_shares as shares
    >>> agents = pl.DataFrame({"run_id": ["r1", "r1", "r2"], "system": ["mas", "mas", "single"],
    ...                        "agent_id": ["lead", "critic", "solo"], "tokens": [600, 200, 300],
    ...                        "turns": [1, 3, 2], "tool_calls": pl.Series([None] * 3, dtype=pl.Int64)})
    >>> fig = agent_shares(shares(agents))
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['Share of tokens', 'Share of turns']
    >>> [(p.get_gid(), float(p.get_width())) for p in fig.axes[0].patches]
    [('share:token_share:mas', 0.75), ('share:token_share:mas', 0.25), ('share:token_share:single', 1.0)]
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['mas · lead', 'mas · critic', 'single · solo']
    """
    where = "agent_shares"
    frame = run_frame(shares, where, "shares")
    require_columns(frame, [SYSTEM, "agent_id"], where, "shares")
    measures = [name for name in _SHARES if name in frame.columns and frame[name].drop_nulls().len() > 0]
    require_columns(frame, measures or list(_SHARES), where, "shares")
    groups = _by_columns(frame)
    if groups and frame.select(groups).n_unique() > 1:
        count, names = frame.select(groups).n_unique(), ", ".join(groups)
        msg = f"{where}: the table holds {count} groups of {names}; filter it to one"
        raise DataError(msg)
    require_rows(frame, where, "shares")
    systems = system_order(frame[SYSTEM].to_list())
    colours = system_colours(systems)
    values = [numeric(frame, name, where).fill_null(0.0).alias(name) for name in measures]
    data = frame.select(SYSTEM, pl.col("agent_id").cast(pl.String), *values).with_columns(
        pl.int_range(pl.len()).over(SYSTEM).alias("_rank")
    )
    kept = data.filter(pl.col("_rank") < top)
    rest = (
        data.filter(pl.col("_rank") >= top)
        .group_by(SYSTEM, maintain_order=True)
        .agg(pl.format("{} other agents", pl.len()).alias("agent_id"), *(pl.col(m).sum() for m in measures))
    )
    shown = pl.concat([kept.drop("_rank"), rest], how="vertical_relaxed")
    order = {system: i for i, system in enumerate(systems)}
    shown = shown.with_row_index("_input").sort(pl.col(SYSTEM).replace_strict(order, return_dtype=pl.Int64), "_input")
    labels = [f"{as_drawn(s)} · {as_drawn(a)}" for s, a in zip(shown[SYSTEM], shown["agent_id"], strict=True)]
    width, _ = default_size()
    fig = Figure(figsize=(width, 0.7 + 0.17 * shown.height), layout="constrained")
    panels = list(fig.subplots(1, len(measures), sharey=True, squeeze=False)[0])
    y = np.arange(shown.height, dtype=float)
    handles = {}
    # A loop over the (at most three) panels and the handful of systems, to draw each in its colour.
    for panel, name in zip(panels, measures, strict=True):
        for system in systems:
            mine = (shown[SYSTEM] == system).to_numpy()
            bars = panel.barh(y[mine], shown[name].to_numpy()[mine], height=0.7, color=colours[system], zorder=2,
                              label=system)  # fmt: skip
            for patch in bars.patches:
                patch.set_gid(f"share:{name}:{system}")
            handles.setdefault(system, bars)
        panel.set_xlim(0, 1)
        panel.set_xlabel(_SHARES[name])
        panel.tick_params(axis="y", length=0)
    panels[0].set_yticks(y, labels)
    panels[0].set_ylim(shown.height - 0.5, -0.5)
    legend_above(panels[0], list(handles.values()))
    return fig
