"""pass@k and pass^k against k, per system, with their intervals as bands."""

from __future__ import annotations

from typing import Any, Literal

import polars as pl
from matplotlib.figure import Figure

from mas_eval.constraints import AXES, FRAME, NONE, Options, validate_params
from mas_eval.errors import DataError, format_keys
from mas_eval.plots._style import (
    SYSTEM,
    legend_above,
    numeric,
    require_columns,
    require_rows,
    run_frame,
    system_colours,
    system_order,
    target_axes,
)

__all__ = ["Band", "pass_at_k"]

#: Which interval the bands show: the percentile bootstrap's or the t interval over cases.
Band = Literal["boot", "t"]

_BANDS = {"boot": ("boot_low", "boot_high"), "t": ("ci_low", "ci_high")}
#: Each measure's line style and marker, and the gid prefix of its artists.
_MEASURES = {"pass@k": ("-", "o", "pass_at_k"), "pass^k": ("--", "s", "pass_hat_k")}


@validate_params({"intervals": [FRAME], "ax": [AXES, NONE], "band": [Options.of(Band)]})
def pass_at_k(intervals: Any, *, band: Band = "boot", ax: Any = None) -> Figure:
    """pass@k (solid) and pass^k (dashed) of each system against k, each with its interval as a band.

    Parameters
    ----------
    intervals : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.pass_at_k_intervals` (filter its ``by`` groups to
        one first); the paired differences' rows are not drawn.
    band : {"boot", "t"}
        The band: the bootstrap interval (``boot_low``, ``boot_high``) or the t interval over
        cases (``ci_low``, ``ci_high``).
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
        No row with an estimate, or two rows share a system, k and measure (``by`` groups).

    Notes
    -----
    Each (system, measure) is one ``Line2D`` in the system's colour through its estimates by k
    (``gid="pass_at_k:<system>"`` or ``"pass_hat_k:<system>"``) and one band (a
    ``PolyCollection`` from ``fill_between``, ``gid="pass_at_k_band:<system>"`` …) where the
    interval exists. pass@k climbs and pass^k falls with k; the gap between them is how
    inconsistent a system is across repeats (τ-bench's GPT-4o: pass^1 0.604, pass^4 0.383).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import pass_at_k_intervals
    >>> runs = pl.DataFrame({"system": "mas", "case_id": [c for c in "abcd" for _ in range(3)],
    ...                      "epoch": [1, 2, 3] * 4, "ok": [1, 1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 0]})
    >>> fig = pass_at_k(pass_at_k_intervals(runs, "ok", k=[1, 2, 3], n_boot=200, seed=0))
    >>> [(line.get_gid(), line.get_ydata().round(3).tolist()) for line in fig.axes[0].lines]
    [('pass_at_k:mas', [0.5, 0.667, 0.75]), ('pass_hat_k:mas', [0.5, 0.333, 0.25])]
    """
    where = "pass_at_k"
    low_column, high_column = _BANDS[band]
    frame = run_frame(intervals, where, "intervals")
    require_columns(frame, [SYSTEM, "control", "k", "measure", "estimate", low_column, high_column], where, "intervals")
    data = frame.filter(pl.col("control").is_null() & pl.col("estimate").is_not_null()).select(
        SYSTEM, "k", "measure",
        numeric(frame, "estimate", where).alias("_y"),
        numeric(frame, low_column, where).alias("_low"),
        numeric(frame, high_column, where).alias("_high"),
    )  # fmt: skip
    require_rows(data, where, "intervals", after="with an estimate of a system")
    repeated = data.select(SYSTEM, "k", "measure").is_duplicated()
    if repeated.any():
        keys = data.filter(repeated).select(SYSTEM, "k", "measure").unique(maintain_order=True)
        msg = (
            f"{where}: more than one row of a system, k and measure: {format_keys(keys.iter_rows(named=True))}; "
            "the intervals have 'by' groups: filter them to one group (or draw each into its own ax=)"
        )
        raise DataError(msg)
    data = data.sort(SYSTEM, "measure", "k")
    present = data[SYSTEM].unique().to_list()
    colours = system_colours(present)
    fig, axes = target_axes(ax)
    handles = []
    # A loop over the handful of systems and the two measures, to draw each in its colour and style.
    for system in system_order(present):
        for measure, (style, marker, gid) in _MEASURES.items():
            points = data.filter((pl.col(SYSTEM) == system) & (pl.col("measure") == measure))
            if points.height == 0:
                continue
            ks = points["k"].to_numpy()
            (line,) = axes.plot(
                ks, points["_y"].to_numpy(), linestyle=style, marker=marker, markersize=4, linewidth=1.2,
                color=colours[system], markeredgecolor="white", markeredgewidth=0.5, zorder=3,
                gid=f"{gid}:{system}", label=f"{system} {measure}",
            )  # fmt: skip
            handles.append(line)
            banded = points.filter(pl.col("_low").is_not_null() & pl.col("_high").is_not_null())
            if banded.height:
                axes.fill_between(
                    banded["k"].to_numpy(), banded["_low"].to_numpy(), banded["_high"].to_numpy(),
                    color=colours[system], alpha=0.15, linewidth=0, zorder=2, gid=f"{gid}_band:{system}",
                )  # fmt: skip
    axes.set_xticks(sorted(set(data["k"].to_list())))
    axes.set_xlabel("k (attempts per case)")
    axes.set_ylabel("pass@k (solid), pass^k (dashed)")
    axes.set_ylim(-0.02, 1.02)
    legend_above(axes, handles)
    return fig
