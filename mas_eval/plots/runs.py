r"""Figures of run-level metrics: distributions, paired differences, cost vs quality, consensus vs quality.

Every function takes one row per run (``scores.runs``, any Polars frame with a ``system``
column, or the Scores themselves) and draws each system in its colour
(:func:`~mas_eval.plots.system_colours`). Means carry 95% t intervals,
:math:`\bar x \pm t_{0.975,\,n-1}\, s/\sqrt{n}`, computed from per-group sums in Polars.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import polars as pl
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap, to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.patheffects import withStroke
from matplotlib.ticker import FuncFormatter

from mas_eval.constraints import AXES, COLUMN_NAME, NONE, RUN_METRICS, Boolean, Interval, Options, validate_params
from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.formatting import format_ci, format_number
from mas_eval.plots._style import (
    SYSTEM,
    as_drawn,
    axis_label,
    difference_label,
    legend_above,
    mean_ci_table,
    name_in_text,
    numeric,
    plain_log_axis,
    readable,
    require_columns,
    require_rows,
    run_frame,
    system_colours,
    system_order,
    t_half_width,
    target_axes,
    thousands,
)

__all__ = ["Kind", "consensus_quality", "cost_quality", "distributions", "draw_distributions", "paired"]

#: The shapes :func:`distributions` draws.
Kind = Literal["box", "violin"]

#: Marker shapes of the ``by`` groups of :func:`cost_quality`, in order (then repeated).
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")
#: Opacity of box/violin faces and of points.
_FACE_ALPHA, _POINT_ALPHA = 0.35, 0.35
#: Greys from a visible light grey (a hexagon of one run must show) to black.
_GREYS = ListedColormap(colormaps["Greys"](np.linspace(0.2, 1.0, 256)), name="greys_visible")
#: Fewest runs behind a point of a binned-mean line.
_MIN_BIN_RUNS = 5


def _systems(frame: pl.DataFrame) -> tuple[list[str], dict[str, str]]:
    """Return the systems of ``frame`` in drawing order, and every system's colour."""
    present = frame[SYSTEM].drop_nulls().unique().to_list()
    return system_order(present), system_colours(present)


def _values(frame: pl.DataFrame, where: str, **columns: str) -> pl.DataFrame:
    """``system`` and each ``alias=column`` as Float64, for the runs with every value (NaN is missing)."""
    out = frame.select(pl.col(SYSTEM), *(numeric(frame, c, where).alias(a) for a, c in columns.items()))
    return out.drop_nulls()


# --- distributions --------------------------------------------------------------------------------


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "ax": [AXES, NONE],
        "metric": [COLUMN_NAME],
        "by": [COLUMN_NAME, NONE],
        "kind": [Options.of(Kind)],
        "max_points": [Interval(int, 0)],
        "seed": [Interval(int, 0)],
    }
)
def distributions(
    run_metrics: Any,
    metric: str,
    by: str | None = None,
    *,
    kind: Kind = "box",
    max_points: int = 2000,
    seed: int = 0,
    ax: Axes | None = None,
) -> Figure:
    r"""Distribution of a metric per system (and per group of ``by``, side by side), with means and CIs.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run with ``system``, ``metric`` and ``by``.
    metric : str
        The numeric (or boolean) column drawn.
    by : str, optional
        A grouping column: its values along the x axis, the systems side by side within each.
    kind : {"box", "violin"}
        Box plots (median, quartiles, whiskers at 1.5 IQR) or violins (Gaussian KDE).
    max_points : int
        At most this many runs are drawn as jittered points; above it a random subsample of
        this size is drawn (0: no points).
    seed : int
        Seed of the subsample and of the jitter.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure of ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    InvalidParameterError
        An unknown ``kind``, or another bad parameter.
    SchemaError
        A named column is missing (the message lists those present), or ``metric`` is not numeric.
    DataError
        No run has a value of ``metric``.

    Notes
    -----
    Runs with a null or NaN ``metric`` are left out. For every (group, system) with values:

    * one box (a ``PathPatch``, ``gid="box:<system>"``) or violin body (``gid="violin:<system>"``)
      in the system's colour; box plots hide their outliers, as the points show every run;
    * the runs as jittered points (one scatter per system, ``gid="points:<system>"``,
      rasterised in vector files). With more than ``max_points`` runs in the panel, a random
      subsample of ``max_points`` runs (``polars.DataFrame.sample`` with ``seed``) is drawn and
      the legend's title says so, e.g. "2,000 of 4,000 runs shown as points";
    * the mean with its 95% t CI, :math:`\bar x \pm t_{0.975,\,n-1}\, s/\sqrt{n}`, as a white
      diamond with a black bar (one ``errorbar`` per system, ``gid="mean_ci:<system>"``).

    A metric whose every value is 0 or 1 (pass/fail, a diagnosis right or wrong) is drawn as a bar
    per group and system at its share of 1s (``gid="share:<system>"``) with the mean's CI, without
    boxes, violins or points, which would span 0 to 1 whatever the share.

    The legend has one entry per system (a patch in its colour) and one for the mean marker;
    its title names the systems without any value of ``metric``. A violin needs two distinct
    values; a group with fewer has only its points and mean.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas", "single"] * 4, "task": ["t1"] * 4 + ["t2"] * 4,
    ...                      "dqs": [0.8, 0.6, 0.7, 0.5, 0.9, 0.7, 0.6, 0.6]})
    >>> fig = distributions(runs, "dqs", by="task")
    >>> ax = fig.axes[0]
    >>> ax.get_ylabel(), [t.get_text() for t in ax.get_xticklabels()]
    ('DQS (0–1)', ['t1', 't2'])
    >>> sorted(p.get_gid() for p in ax.patches)
    ['box:mas', 'box:mas', 'box:single', 'box:single']
    """
    where = "distributions"
    frame = run_frame(run_metrics, where)
    return draw_distributions(frame, metric, by, kind=kind, max_points=max_points, seed=seed, ax=ax, where=where)


def draw_distributions(
    frame: pl.DataFrame,
    metric: str,
    by: str | None,
    *,
    kind: Kind,
    max_points: int,
    seed: int,
    ax: Axes | None,
    where: str,
    what: str = "run_metrics",
    unit: str = "runs",
) -> Figure:
    """Draw :func:`distributions` of any frame with one row per ``unit`` (runs, answers).

    For the functions that draw it; errors name the calling function (``where``) and its argument (``what``).
    """
    data = _distribution_data(frame, metric, by, where, what)
    every, colours = _systems(frame)
    with_values = set(data[SYSTEM].unique().to_list())
    systems, without = [s for s in every if s in with_values], [s for s in every if s not in with_values]
    groups = sorted(data["_group"].unique().to_list())

    k = len(systems)
    slot = 0.8 / k
    offsets = {s: (i - (k - 1) / 2) * slot for i, s in enumerate(systems)}
    group_x = {g: float(j) for j, g in enumerate(groups)}
    width = slot * 0.75
    data = data.with_columns(
        _x=pl.col("_group").replace_strict(group_x, return_dtype=pl.Float64)
        + pl.col(SYSTEM).replace_strict(offsets, default=0.0, return_dtype=pl.Float64)
    )

    fig, ax = target_axes(ax)
    # A pass/fail metric's box spans 0 to 1 whatever the share: its bars show the share instead.
    binary = bool(data["_value"].is_in([0.0, 1.0]).all())
    shares = mean_ci_table(data, ["_x", SYSTEM], "_value") if binary else None
    for system in systems:
        _draw_body(ax, data, system, colours[system], shares, kind, width)

    total = data.height
    shown = data if total <= max_points else data.sample(n=max_points, seed=seed)
    if max_points > 0 and not binary:  # points of 0 and 1 would only paint two lines
        _draw_points(ax, shown, systems, colours, width, seed)

    means = mean_ci_table(data, ["_x", SYSTEM], "_value")
    for system in systems:
        own = means.filter(pl.col(SYSTEM) == system)
        _mean_markers(ax, own["_x"].to_numpy(), own, gid=f"mean_ci:{system}")

    if by:
        ax.set_xticks(list(group_x.values()), [as_drawn(group) for group in groups])
        ax.set_xlabel(readable(by))
    else:
        ax.set_xticks([offsets[s] for s in systems], [as_drawn(s) for s in systems])
    ax.set_xlim(-0.5, len(groups) - 0.5)
    ax.tick_params(axis="x", length=0)
    ax.set_ylabel(axis_label(metric))

    handles: list[Any] = [
        Patch(facecolor=(*to_rgb(colours[s]), _FACE_ALPHA), edgecolor=colours[s], label=s) for s in systems
    ]
    handles.append(_mean_handle())
    notes = []
    if binary:
        notes.append(f"every value 0 or 1: bars are the share of 1s among the {unit}")
    elif max_points == 0:
        notes.append("points not drawn")
    elif total > max_points:
        notes.append(f"{thousands(shown.height)} of {thousands(total)} {unit} shown as points")
    if without:
        notes.append(f"no {name_in_text(metric)}: {', '.join(without)}")
    legend_above(ax, handles, title="; ".join(notes) or None)
    return fig


def _distribution_data(frame: pl.DataFrame, metric: str, by: str | None, where: str, what: str) -> pl.DataFrame:
    """Return the rows with a value of ``metric``: ``system``, ``_group`` (``by`` as text) and ``_value``, sorted."""
    require_columns(frame, [SYSTEM, metric, *([by] if by else [])], where, what)
    require_rows(frame, where, what)
    group = pl.col(by).cast(pl.String).fill_null("null") if by else pl.lit("")
    data = (
        frame.select(pl.col(SYSTEM), group.alias("_group"), numeric(frame, metric, where).alias("_value"))
        .drop_nulls([SYSTEM, "_value"])
        .sort("_group", SYSTEM, maintain_order=True)
    )
    require_rows(data, where, what, after=f"with a value of {metric!r}")
    return data


def _draw_body(
    ax: Axes, data: pl.DataFrame, system: str, colour: str, shares: pl.DataFrame | None, kind: Kind, width: float
) -> None:
    """Draw one system's bars of shares (a pass/fail metric), else its boxes or violins, one per group."""
    # A loop over the system's groups, to draw; the statistics come from Polars.
    own = data.filter(pl.col(SYSTEM) == system).partition_by("_x", as_dict=True, maintain_order=True)
    positions = [x for (x,) in own]
    samples = [part["_value"].to_numpy() for part in own.values()]
    if shares is not None:
        mine = shares.filter(pl.col(SYSTEM) == system)
        bars = ax.bar(
            mine["_x"].to_numpy(), mine["mean"].to_numpy(), width=width,
            facecolor=(*to_rgb(colour), _FACE_ALPHA), edgecolor=colour,
        )  # fmt: skip
        for bar in bars:
            bar.set_gid(f"share:{system}")
    elif kind == "box":
        drawn = ax.boxplot(
            samples, positions=positions, widths=width, patch_artist=True, showfliers=False,
            manage_ticks=False, medianprops={"color": "black", "linewidth": 1.0},
            whiskerprops={"color": colour}, capprops={"color": colour},
            boxprops={"facecolor": (*to_rgb(colour), _FACE_ALPHA), "edgecolor": colour},
        )  # fmt: skip
        for box in drawn["boxes"]:
            box.set_gid(f"box:{system}")
    else:
        keep = [i for i, s in enumerate(samples) if np.unique(s).size >= 2]
        if keep:
            drawn = ax.violinplot(
                [samples[i] for i in keep], positions=[positions[i] for i in keep], widths=width,
                showextrema=False,
            )  # fmt: skip
            for body in drawn["bodies"]:
                body.set(facecolor=colour, edgecolor=colour, alpha=_FACE_ALPHA, gid=f"violin:{system}")


def _draw_points(
    ax: Axes, shown: pl.DataFrame, systems: list[str], colours: dict[str, str], width: float, seed: int
) -> None:
    """Draw the ``shown`` rows as points jittered across their box (the jitter drawn with ``seed``)."""
    rng = np.random.default_rng(seed)
    jitter = rng.uniform(-width * 0.35, width * 0.35, shown.height)
    shown = shown.with_columns(_jx=pl.col("_x") + pl.Series(jitter))
    for system in systems:
        own = shown.filter(pl.col(SYSTEM) == system)
        ax.scatter(
            own["_jx"].to_numpy(), own["_value"].to_numpy(), s=2.5, color=colours[system], alpha=_POINT_ALPHA,
            linewidths=0, zorder=2.5, rasterized=True, gid=f"points:{system}",
        )  # fmt: skip


def _mean_markers(ax: Axes, x: np.ndarray, table: pl.DataFrame, gid: str) -> None:
    """White diamonds at the means, black bars over their CIs (``table`` from :func:`mean_ci_table`)."""
    mean = table["mean"].to_numpy()
    low = np.nan_to_num(mean - table["low"].fill_null(np.nan).to_numpy(), nan=0.0)
    high = np.nan_to_num(table["high"].fill_null(np.nan).to_numpy() - mean, nan=0.0)
    drawn = ax.errorbar(
        x, mean, yerr=np.vstack([low, high]), fmt="D", markersize=3.2, markerfacecolor="white",
        markeredgecolor="black", markeredgewidth=0.7, ecolor="black", elinewidth=0.9, capsize=0, zorder=4,
    )  # fmt: skip
    for artist in (drawn.lines[0], *drawn.lines[2]):
        artist.set_gid(gid)


def _mean_handle() -> Line2D:
    return Line2D(
        [], [], marker="D", markersize=3.2, markerfacecolor="white", markeredgecolor="black", color="black",
        linewidth=0.9, label="mean ± 95% CI",
    )  # fmt: skip


# --- paired ---------------------------------------------------------------------------------------


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "ax": [AXES, NONE],
        "metric": [COLUMN_NAME],
        "pair_on": [COLUMN_NAME],
        "treatment": [COLUMN_NAME],
        "control": [COLUMN_NAME],
    }
)
def paired(
    run_metrics: Any,
    metric: str,
    pair_on: str = "case_id",
    *,
    treatment: str = "mas",
    control: str = "single",
    ax: Axes | None = None,
) -> Figure:
    r"""Histogram of the per-case differences treatment − control, with their mean and its 95% CI.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run with ``system``, ``metric`` and ``pair_on``.
    metric : str
        The numeric (or boolean) column compared.
    pair_on : str
        The column naming the unit both systems ran (a case).
    treatment, control : str
        The two systems; the differences are treatment − control.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure of ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    InvalidParameterError
        ``treatment`` equals ``control``, or another bad parameter.
    SchemaError
        A named column is missing (the message lists those present), or ``metric`` is not numeric.
    DataError
        A system has no run, or no case has values of both systems.

    Notes
    -----
    Each case's runs are averaged per system (runs with a null ``metric`` left out); a case
    with a mean for both systems gives one difference :math:`d_i = \bar x_{i,T} - \bar x_{i,C}`.
    Drawn: a histogram of the :math:`d_i` (``gid="paired_histogram"`` on every bar), the mean
    difference as a vertical line (``gid="mean_difference"``) and its 95% t CI as a shaded band
    (``gid="mean_difference_ci"``), :math:`\bar d \pm t_{0.975,\,n-1}\, s_d/\sqrt{n}` over the
    :math:`n` pairs — the paired t interval of :func:`mas_eval.stats.compare` with
    ``test="paired"`` — and a dashed zero line (``gid="zero_line"``). The legend states
    :math:`n`, the mean and the CI.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas", "single"] * 3, "case_id": ["c1", "c1", "c2", "c2", "c3", "c3"],
    ...                      "dqs": [0.8, 0.6, 0.7, 0.6, 0.9, 0.5]})
    >>> fig = paired(runs, "dqs")
    >>> fig.axes[0].get_xlabel()
    'DQS difference, mas − single (−1 to 1)'
    >>> fig.axes[0].get_legend().get_title().get_text()
    'n = 3 pairs (case_id values run by both)'
    """
    where = "paired"
    if treatment == control:
        msg = f"paired: treatment and control are both {treatment!r}; name two different systems"
        raise InvalidParameterError(msg)
    frame = run_frame(run_metrics, where)
    require_columns(frame, [SYSTEM, pair_on, metric], where)
    require_rows(frame, where)
    present = frame[SYSTEM].drop_nulls().unique().sort().to_list()
    missing = [s for s in (treatment, control) if s not in present]
    if missing:
        msg = (
            f"paired: no runs of system {', '.join(map(repr, missing))} in column {SYSTEM!r}; "
            f"the systems present are: {', '.join(map(repr, present))}"
        )
        raise DataError(msg)
    means = (
        frame.select(pl.col(pair_on), pl.col(SYSTEM), numeric(frame, metric, where).alias("_value"))
        .filter(pl.col(SYSTEM).is_in([treatment, control]) & pl.col("_value").is_not_null())
        .group_by(pair_on)
        .agg(
            _t=pl.col("_value").filter(pl.col(SYSTEM) == treatment).mean(),
            _c=pl.col("_value").filter(pl.col(SYSTEM) == control).mean(),
        )
        .drop_nulls(["_t", "_c"])
    )
    if means.height == 0:
        msg = (
            f"paired: no {pair_on!r} has a value of {metric!r} from both {treatment!r} and {control!r}; "
            "pair on a column both systems share"
        )
        raise DataError(msg)
    diff = (means["_t"] - means["_c"]).to_numpy()
    n = diff.size
    mean = float(diff.mean())
    sd = float(diff.std(ddof=1)) if n >= 2 else np.nan
    half = float(t_half_width(np.array([sd]), np.array([n]))[0])

    fig, ax = target_axes(ax)
    bins = int(np.clip(np.histogram_bin_edges(diff, bins="auto").size - 1, 5, 40)) if n >= 2 else 1
    _, _, bars = ax.hist(diff, bins=bins, color="0.8", edgecolor="white", linewidth=0.4, zorder=1)
    for bar in bars:
        bar.set_gid("paired_histogram")
    zero = ax.axvline(0.0, color="0.3", linestyle="--", linewidth=0.8, zorder=2, gid="zero_line", label="no difference")
    line = ax.axvline(
        mean, color="black", linewidth=1.2, zorder=3, gid="mean_difference", label=f"mean {format_number(mean, 3)}"
    )
    handles: list[Any] = [line]
    if np.isfinite(half):
        band = ax.axvspan(
            mean - half, mean + half, color="black", alpha=0.3, linewidth=0, zorder=2, gid="mean_difference_ci",
            label=f"95% CI {format_ci(mean - half, mean + half, 3)}",
        )  # fmt: skip
        handles.append(band)
    handles.append(zero)
    ax.set_xlabel(difference_label(metric, treatment, control))
    ax.set_ylabel("Cases (count)")
    plural = "pair" if n == 1 else "pairs"
    legend_above(ax, handles, title=f"n = {thousands(n)} {plural} ({pair_on} values run by both)")
    return fig


# --- cost vs quality ------------------------------------------------------------------------------


def pareto_front(cost: np.ndarray, quality: np.ndarray) -> np.ndarray:
    """Whether each point is non-dominated: no other point costs no more and scores no less, one strictly.

    >>> pareto_front(np.array([1.0, 2.0, 3.0, 2.5]), np.array([0.5, 0.7, 0.6, 0.9])).tolist()
    [True, True, False, True]
    """
    c, q = cost[:, None], quality[:, None]
    no_worse = (cost[None, :] <= c) & (quality[None, :] >= q)
    better = (cost[None, :] < c) | (quality[None, :] > q)
    return ~(no_worse & better).any(axis=1)


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "ax": [AXES, NONE],
        "quality": [COLUMN_NAME],
        "cost": [COLUMN_NAME],
        "by": [COLUMN_NAME, NONE],
        "log_cost": [Boolean(), NONE],
    }
)
def cost_quality(
    run_metrics: Any,
    quality: str = "dqs",
    cost: str = "cost_usd",
    *,
    by: str | None = "variant",
    log_cost: bool | None = None,
    ax: Axes | None = None,
) -> Figure:
    r"""Mean quality against mean cost per system (× ``by`` group), with CIs both ways and the Pareto front.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run with ``system``, ``quality``, ``cost`` and ``by``.
    quality : str
        Higher is better (e.g. ``dqs``).
    cost : str
        Lower is better (e.g. ``cost_usd``, ``tokens_used``, ``processing_time_seconds``).
    by : str or None
        A grouping column (e.g. the system's variant); each (system, group) is one point, the
        group shown by the marker shape. ``None``: one point per system.
    log_cost : bool, optional
        A logarithmic cost axis; by default one is used when every CI is positive and the
        costs span more than a factor of 10.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure of ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        A named column is missing (the message lists those present), or is not numeric.
    DataError
        No run has both values.

    Notes
    -----
    Over the runs with both values, each (system, group) point sits at the mean cost and mean
    quality, with the 95% t CI of each, :math:`\bar x \pm t_{0.975,\,n-1}\, s/\sqrt{n}`, as
    horizontal and vertical error bars in the system's colour (``gid="cost_quality:<system>"``).

    A point is on the Pareto front when no other point has a lower or equal mean cost and a
    higher or equal mean quality, one of them strictly. The front is one ``Line2D``
    (``gid="pareto_front"``, label "Pareto front") whose data are exactly the front's points,
    by increasing cost, drawn as a step (``drawstyle="steps-post"``): the best mean quality
    reached at each cost. It describes the means; overlapping CIs say how sure it is.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas", "single"] * 4, "variant": ["v1"] * 4 + ["v2"] * 4,
    ...                      "dqs": [0.8, 0.6, 0.7, 0.5, 0.9, 0.7, 0.6, 0.6],
    ...                      "cost_usd": [0.05, 0.01, 0.07, 0.02, 0.02, 0.004, 0.03, 0.006]})
    >>> fig = cost_quality(runs)
    >>> ax = fig.axes[0]
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('Mean cost per run (USD)', 'Mean DQS (0–1)')
    >>> [line.get_xydata().round(3).tolist() for line in ax.lines if line.get_gid() == "pareto_front"]
    [[[0.005, 0.65], [0.025, 0.75]]]
    """
    where = "cost_quality"
    frame = run_frame(run_metrics, where)
    require_columns(frame, [SYSTEM, quality, cost, *([by] if by else [])], where)
    require_rows(frame, where)
    group = pl.col(by).cast(pl.String).fill_null("null") if by else pl.lit("")
    data = frame.select(
        pl.col(SYSTEM), group.alias("_group"), numeric(frame, quality, where).alias("_q"),
        numeric(frame, cost, where).alias("_c"),
    ).drop_nulls([SYSTEM, "_q", "_c"])  # fmt: skip
    require_rows(data, where, after=f"with values of both {quality!r} and {cost!r}")
    systems, colours = _systems(frame)
    keys = [SYSTEM, "_group"]
    points = (
        mean_ci_table(data, keys, "_q")
        .rename({"mean": "q", "low": "q_low", "high": "q_high"})
        .join(mean_ci_table(data, keys, "_c").rename({"mean": "c", "low": "c_low", "high": "c_high"}), on=keys)
        .sort(keys)
    )
    c, q = points["c"].to_numpy(), points["q"].to_numpy()
    c_low, c_high = (points[name].fill_null(np.nan).to_numpy() for name in ("c_low", "c_high"))
    q_low, q_high = (points[name].fill_null(np.nan).to_numpy() for name in ("q_low", "q_high"))
    groups = sorted(points["_group"].unique().to_list())
    markers = {g: _MARKERS[i % len(_MARKERS)] for i, g in enumerate(groups)}

    fig, ax = target_axes(ax)
    front = pareto_front(c, q)
    order = np.argsort(c[front], kind="stable")
    (front_line,) = ax.plot(
        c[front][order], q[front][order], drawstyle="steps-post", color="0.25", linewidth=0.9, linestyle="-",
        marker="o", markersize=9, markerfacecolor="none", markeredgecolor="0.25", markeredgewidth=0.8,
        zorder=1, gid="pareto_front", label="Pareto front",
    )  # fmt: skip
    # A loop over the handful of (system, group) points, to draw each with its colour and marker.
    for i, (system, grp) in enumerate(points.select(keys).iter_rows()):
        xerr = np.nan_to_num([[c[i] - c_low[i]], [c_high[i] - c[i]]])
        yerr = np.nan_to_num([[q[i] - q_low[i]], [q_high[i] - q[i]]])
        drawn = ax.errorbar(
            c[i], q[i], xerr=xerr, yerr=yerr, fmt=markers[grp], color=colours[system], markersize=5,
            markeredgecolor="white" if front[i] else colours[system], markeredgewidth=0.6, elinewidth=1.0,
            capsize=0, zorder=3,
        )  # fmt: skip
        for artist in (drawn.lines[0], *drawn.lines[2]):
            artist.set_gid(f"cost_quality:{system}")

    spread = np.nanmax(c_high if np.isfinite(c_high).any() else c) / max(np.nanmin(c), 1e-300)
    use_log = log_cost if log_cost is not None else bool(np.all(c > 0) and np.nanmin(c_low) > 0 and spread > 10)
    if use_log:
        ax.set_xscale("log")
        plain_log_axis(ax.xaxis)
    ax.set_xlabel(axis_label(cost, prefix="Mean ", suffix=" per run"))
    ax.set_ylabel(axis_label(quality, prefix="Mean "))

    present = [s for s in systems if s in set(points[SYSTEM].to_list())]
    handles: list[Any] = [
        Line2D([], [], color=colours[s], marker="o", linestyle="none", markersize=5, label=s) for s in present
    ]
    if by:
        handles += [
            Line2D([], [], color="0.35", marker=markers[g], linestyle="none", markersize=5, label=g) for g in groups
        ]
    handles.append(front_line)
    legend_above(ax, handles)
    return fig


# --- consensus vs quality -------------------------------------------------------------------------


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "ax": [AXES, NONE],
        "consensus": [COLUMN_NAME],
        "quality": [COLUMN_NAME],
        "hexbin_above": [Interval(int, 0)],
        "bins": [Interval(int, 1)],
    }
)
def consensus_quality(
    run_metrics: Any,
    consensus: str = "consensus_level",
    quality: str = "dqs",
    *,
    hexbin_above: int = 3000,
    bins: int = 10,
    ax: Axes | None = None,
) -> Figure:
    r"""Quality against consensus, per system: the runs (points or hexagons) and a binned-mean line.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run with ``system``, ``consensus`` and ``quality``.
    consensus : str
        The x column, e.g. ``consensus_level`` (null for single-agent runs).
    quality : str
        The y column, e.g. ``dqs``.
    hexbin_above : int
        With more runs than this (both values present, all systems), the runs are drawn as one
        hexbin density instead of points.
    bins : int
        Number of equal-width consensus bins of the binned-mean lines.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure of ``rcParams["figure.figsize"]``.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        ``consensus`` or ``quality`` is missing (the message lists the columns present) or not numeric.
    DataError
        No run has both a consensus and a quality value.

    Notes
    -----
    Only runs with both values are drawn; a system with none (single-agent runs have no
    consensus) is named in the legend title instead. Up to ``hexbin_above`` runs: one scatter
    per system in its colour (``gid="points:<system>"``, rasterised in vector files). Above:
    a single grey hexbin of all systems' runs (``gid="hexbin"``, log colour scale) with a colour
    bar of runs per hexagon, so the per-system lines stay readable on top.

    The binned-mean line of a system (``gid="binned_mean:<system>"``, in its colour, with a
    white outline) joins, for each of ``bins`` equal-width bins spanning the observed
    consensus range, the mean consensus and mean quality of the system's runs in it; bins with
    fewer than 5 runs are left out.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 6 + ["single"] * 2,
    ...                      "consensus_level": [0.2, 0.4, 0.5, 0.6, 0.8, 0.9, None, None],
    ...                      "dqs": [0.5, 0.6, 0.6, 0.7, 0.8, 0.85, 0.6, 0.7]})
    >>> fig = consensus_quality(runs, bins=2)
    >>> fig.axes[0].get_xlabel(), fig.axes[0].get_legend().get_title().get_text()
    ('Consensus level (0–1)', 'lines: mean per consensus bin; no consensus level: single')
    """
    where = "consensus_quality"
    frame = run_frame(run_metrics, where)
    require_columns(frame, [SYSTEM, consensus, quality], where)
    require_rows(frame, where)
    data = _values(frame, where, _x=consensus, _y=quality)
    require_rows(data, where, after=f"with values of both {consensus!r} and {quality!r}")
    systems, colours = _systems(frame)
    with_values = set(data[SYSTEM].unique().to_list())
    drawn, without = [s for s in systems if s in with_values], [s for s in systems if s not in with_values]

    fig, ax = target_axes(ax)
    if data.height > hexbin_above:
        hexes = ax.hexbin(
            data["_x"].to_numpy(), data["_y"].to_numpy(), gridsize=30, cmap=_GREYS, bins="log", mincnt=1,
            linewidths=0.1, edgecolors="face", gid="hexbin", zorder=1,
        )  # fmt: skip
        bar = fig.colorbar(hexes, ax=ax, pad=0.02, aspect=30)
        bar.set_label("Runs per hexagon (log scale)")
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        bar.outline.set_linewidth(0.4)
    else:
        # A loop over the systems, to draw each in its colour.
        for system in drawn:
            own = data.filter(pl.col(SYSTEM) == system)
            ax.scatter(
                own["_x"].to_numpy(), own["_y"].to_numpy(), s=3, color=colours[system], alpha=_POINT_ALPHA,
                linewidths=0, zorder=1, rasterized=True, gid=f"points:{system}",
            )  # fmt: skip

    low, high = data["_x"].min(), data["_x"].max()
    span = (high - low) or 1.0
    binned = (
        data.with_columns(_bin=((pl.col("_x") - low) / span * bins).floor().clip(0, bins - 1))
        .group_by(SYSTEM, "_bin")
        .agg(n=pl.len(), x=pl.col("_x").mean(), y=pl.col("_y").mean())
        .filter(pl.col("n") >= _MIN_BIN_RUNS)
        .sort(SYSTEM, "_bin")
    )
    outline = [withStroke(linewidth=2.6, foreground="white")]
    handles: list[Any] = []
    for system in drawn:
        own = binned.filter(pl.col(SYSTEM) == system)
        (line,) = ax.plot(
            own["x"].to_numpy(), own["y"].to_numpy(), color=colours[system], marker="o", markersize=3,
            linewidth=1.4, zorder=3, path_effects=outline, gid=f"binned_mean:{system}", label=system,
        )  # fmt: skip
        handles.append(line)
    ax.set_xlabel(axis_label(consensus))
    ax.set_ylabel(axis_label(quality))
    note = "lines: mean per consensus bin"
    if without:
        note += f"; no {name_in_text(consensus)}: {', '.join(without)}"
    legend_above(ax, handles, title=note)
    return fig
