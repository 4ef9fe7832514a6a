"""The forest plot of a comparison table: one estimate and CI per (group, metric) row."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mas_eval.constraints import AXES, COLUMN_NAME, NONE, PROBABILITY, Instance, Options, validate_params
from mas_eval.errors import InvalidParameterError
from mas_eval.formatting import correction_name
from mas_eval.plots._style import (
    as_drawn,
    default_size,
    fitted,
    legend_above,
    require_columns,
    require_rows,
    target_axes,
    unit,
)

__all__ = ["Effect", "forest"]

#: The estimates :func:`forest` draws.
Effect = Literal["difference", "cohens_d", "hedges_g"]

#: Estimate column and CI columns of each effect (Hedges' g reuses Cohen's d's CI, rescaled).
_COLUMNS: dict[str, tuple[str, str, str]] = {
    "difference": ("difference", "ci_low", "ci_high"),
    "cohens_d": ("cohens_d", "d_ci_low", "d_ci_high"),
    "hedges_g": ("hedges_g", "d_ci_low", "d_ci_high"),
}

#: Row height (inches) of a forest plot, and the room its axis labels and legend take.
_ROW, _MARGIN = 0.2, 1.0


def _frame(comparisons: Any) -> pl.DataFrame:
    if isinstance(comparisons, pl.LazyFrame):
        return comparisons.collect()
    if isinstance(comparisons, pl.DataFrame):
        return comparisons
    msg = f"forest: comparisons must be the Polars DataFrame compare() returns, not {type(comparisons).__name__}"
    raise InvalidParameterError(msg)


def _floats(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def _correction_name(frame: pl.DataFrame) -> str:
    """``Holm``, ``BH``, ``Bonferroni``, ``unadjusted``, or ``adjusted`` when unknown or mixed."""
    return correction_name(frame["correction"].to_list() if "correction" in frame.columns else [])


def _row_labels(frame: pl.DataFrame, keys: list[str]) -> list[str]:
    parts = [pl.col(k).cast(pl.String).fill_null("null") for k in keys]
    label = pl.concat_str([*parts, pl.col("metric").cast(pl.String)], separator=" · ")
    return [as_drawn(text) for text in frame.select(label).to_series().to_list()]


def _x_label(frame: pl.DataFrame, effect: str, treatment: str, control: str) -> str:
    treatment, control = as_drawn(treatment), as_drawn(control)
    if effect == "difference":
        units = {unit(str(m)) for m in frame["metric"].unique().to_list()}
        shared = units.pop() if len(units) == 1 else None
        # A declared range (0–1) is not the unit of a difference; a physical unit is.
        suffix = f" ({shared})" if shared and "–" not in shared else ""
        return f"Mean difference, {treatment} − {control}{suffix}"
    d_types = frame["d_type"].drop_nulls().unique().to_list() if "d_type" in frame.columns else []
    if effect == "hedges_g":
        return f"Hedges' $g$, {treatment} vs {control}"
    one = len(d_types) == 1 and d_types[0].startswith("d_")
    sub = f"_{{{d_types[0].removeprefix('d_')}}}" if one else ""
    return f"Cohen's $d{sub}$, {treatment} vs {control}"


#: What ``forest`` draws.
_COMPARISONS = Instance((pl.DataFrame, pl.LazyFrame), "the Polars DataFrame compare() returns")


@validate_params(
    {
        "comparisons": [_COMPARISONS],
        "ax": [AXES, NONE],
        "effect": [Options.of(Effect)],
        "alpha": [PROBABILITY],
        "treatment": [COLUMN_NAME],
        "control": [COLUMN_NAME],
    }
)
def forest(
    comparisons: pl.DataFrame | pl.LazyFrame,
    effect: Effect = "difference",
    *,
    alpha: float = 0.05,
    treatment: str = "mas",
    control: str = "single",
    ax: Axes | None = None,
) -> Figure:
    r"""Forest plot of a comparison table: each (group, metric) row's estimate and CI.

    Parameters
    ----------
    comparisons : polars.DataFrame or polars.LazyFrame
        What :func:`mas_eval.stats.compare` returns: the ``by`` columns (every column before
        ``metric``), ``metric``, the estimate and CI columns of ``effect``, ``p_adjusted`` and
        ``correction``.
    effect : {"difference", "cohens_d", "hedges_g"}
        The estimate drawn: the difference of means (CI ``ci_low``/``ci_high``), Cohen's d
        (CI ``d_ci_low``/``d_ci_high``) or Hedges' g (Cohen's d's CI scaled by
        ``hedges_g / cohens_d``).
    alpha : float
        A row is marked significant when ``p_adjusted <= alpha``.
    treatment, control : str
        The names of the compared systems, for the axis label only (the table does not hold them;
        pass what ``compare`` was given).
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure, as wide as ``rcParams["figure.figsize"]``
        and 0.2 in taller per row.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    InvalidParameterError
        An unknown ``effect``, or ``comparisons`` is not a frame.
    SchemaError
        A needed column is missing (the message lists those present).
    DataError
        ``comparisons`` has no rows.

    Notes
    -----
    Rows are sorted by metric, then by the group columns, top to bottom, and labelled
    ``"task1 · dqs"`` (group values, then the metric). Each row with an estimate and both CI
    ends gets one horizontal CI segment; all of them are drawn by one ``hlines`` call, a
    ``LineCollection`` with ``gid="forest_ci"`` holding exactly one segment per such row. The
    estimate is a filled circle (``gid="forest_significant"``) when the row stays
    significant after the table's multiple-comparison correction, ``p_adjusted <= alpha``,
    and an open one (``gid="forest_not_significant"``) otherwise; the legend names the
    correction from the ``correction`` column, e.g. ``p (Holm) ≤ 0.05``. A dashed zero line
    (``gid="zero_line"``) marks no effect.

    Degenerate rows (``compare`` left the estimate or the CI null, e.g. a group with fewer than
    two pairs) keep their label; a row without an estimate shows "no estimate", and one with an
    estimate but no CI shows its estimate without a segment (text ``gid="forest_no_estimate"``
    or ``"forest_no_ci"``).

    A table tested against a margin (``compare(..., margin=..., hypothesis=...)``: its ``margin``
    and ``hypothesis`` columns) gets the margin drawn on the difference's axis: a dashed
    segment at :math:`-\delta` across each row (non-inferiority), and one at :math:`+\delta` too
    (equivalence), all in one ``LineCollection`` with ``gid="forest_margin"`` (two segments a row for
    equivalence, one for non-inferiority), so that rows with different margins each show their own.
    A filled circle then means the hypothesis was shown (its p, adjusted, at most ``alpha``), and
    the legend says so. Cohen's d and Hedges' g are on another scale: no margin is drawn for them.

    Hedges' g is :math:`J d` with a small-sample factor :math:`J < 1`; its CI is taken as
    Cohen's d's CI times :math:`J = g / d` (times 1 when :math:`d = 0`), as the table stores
    no separate CI for g. The CIs are those ``compare`` computed (95% unless it was given
    another ``confidence``), e.g. for a paired t test
    :math:`\bar d \pm t_{0.975,\,n-1}\, s_d/\sqrt{n}`.

    Examples
    --------
    >>> import polars as pl
    >>> table = pl.DataFrame({"task": ["t1", "t2"], "metric": ["dqs", "dqs"], "difference": [0.05, -0.01],
    ...                       "ci_low": [0.02, -0.04], "ci_high": [0.08, 0.02], "p_adjusted": [0.003, 0.6],
    ...                       "correction": ["holm", "holm"]})
    >>> fig = forest(table)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['t1 · dqs', 't2 · dqs']
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['p (Holm) ≤ 0.05', 'p (Holm) > 0.05']
    """
    frame = _frame(comparisons)
    estimate, low_name, high_name = _COLUMNS[effect]
    needed = ["metric", estimate, low_name, high_name, "p_adjusted", *(["cohens_d"] if effect == "hedges_g" else [])]
    require_columns(frame, needed, "forest", "comparisons")
    require_rows(frame, "forest", "comparisons")
    keys = frame.columns[: frame.columns.index("metric")]
    frame = frame.sort(["metric", *keys], nulls_last=True)

    value, low, high = _floats(frame, estimate), _floats(frame, low_name), _floats(frame, high_name)
    if effect == "hedges_g":
        d = _floats(frame, "cohens_d")
        usable = np.isfinite(d) & (d != 0) & np.isfinite(value)
        scale = np.ones_like(value)
        np.divide(value, d, out=scale, where=usable)
        low, high = low * scale, high * scale
    has_value = np.isfinite(value)
    has_ci = has_value & np.isfinite(low) & np.isfinite(high)
    p_adjusted = _floats(frame, "p_adjusted")
    significant = has_value & np.isfinite(p_adjusted) & (p_adjusted <= alpha)

    n = frame.height
    y = np.arange(n, dtype=float)
    fig, ax = target_axes(ax, None if ax is not None else default_size(_MARGIN + _ROW * n))
    ax.axvline(0.0, color="0.45", linewidth=0.8, linestyle="--", zorder=0, gid="zero_line")
    ax.hlines(y[has_ci], low[has_ci], high[has_ci], colors="black", linewidth=1.2, zorder=2, gid="forest_ci")

    correction = _correction_name(frame)
    marker = {"marker": "o", "linestyle": "none", "markersize": 4.5, "markeredgecolor": "black", "zorder": 3}
    filled = ax.plot(value[significant], y[significant], markerfacecolor="black", gid="forest_significant", **marker)
    rest = has_value & ~significant
    hollow = ax.plot(value[rest], y[rest], markerfacecolor="white", gid="forest_not_significant", **marker)
    shown = _hypothesis_shown(frame)
    filled[0].set_label(f"{shown}p ({correction}) ≤ {alpha:g}")
    hollow[0].set_label(f"{'not shown: ' if shown else ''}p ({correction}) > {alpha:g}")
    handles = [filled[0], hollow[0]]
    if effect == "difference" and "margin" in frame.columns:
        handles += _draw_margins(ax, frame, y)

    # A loop over the few degenerate rows, to write what they lack.
    for row in np.flatnonzero(~has_ci):
        if has_value[row]:
            text, gid, x = "no CI", "forest_no_ci", value[row]
        else:
            text, gid, x = "no estimate", "forest_no_estimate", 0.0
        ax.annotate(
            text, (x, y[row]), xytext=(4, 0), textcoords="offset points", va="center", fontsize="small",
            color="0.35", gid=gid,
        )  # fmt: skip

    ax.set_yticks(y, _row_labels(frame, keys))
    ax.set_ylim(n - 0.5, -0.5)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel(fitted(_x_label(frame, effect, treatment, control), ax))
    legend_above(ax, handles)
    return fig


def _hypothesis_shown(frame: pl.DataFrame) -> str:
    """``"non-inferior: "`` or ``"equivalent: "`` when every row tested that hypothesis, else ``""``."""
    tested = frame["hypothesis"].drop_nulls().unique().to_list() if "hypothesis" in frame.columns else []
    words = {"noninferior": "non-inferior: ", "equivalent": "equivalent: "}
    return words.get(tested[0], "") if len(tested) == 1 else ""


def _draw_margins(ax: Axes, frame: pl.DataFrame, y: np.ndarray) -> list[Any]:
    """Dashed segments at -margin (and +margin for equivalence) across each row that has a margin."""
    margin = _floats(frame, "margin")
    both = (
        frame["hypothesis"].eq("equivalent").fill_null(False).to_numpy()
        if "hypothesis" in frame.columns
        else np.zeros(frame.height, dtype=bool)
    )
    has = np.isfinite(margin) & (margin > 0)
    if not has.any():
        return []
    x = np.concatenate([-margin[has], margin[has & both]])
    rows = np.concatenate([y[has], y[has & both]])
    lines = ax.vlines(
        x, rows - 0.5, rows + 0.5, colors="0.3", linestyles=(0, (4, 2)), linewidth=0.9, zorder=1, gid="forest_margin"
    )
    one = np.unique(margin[has]).size == 1
    lines.set_label(f"margin {'±' if both[has].all() else '−'}{margin[has][0]:g}" if one else "margin")
    return [lines]
