"""The power of a comparison against the number of cases, one curve per number of epochs."""

from __future__ import annotations

from typing import Any

import polars as pl
from matplotlib.figure import Figure

from mas_eval.constraints import AXES, FRAME, NONE, Interval, validate_params
from mas_eval.errors import DataError, format_keys
from mas_eval.plots._style import (
    OKABE_ITO,
    legend_above,
    numeric,
    plain_log_axis,
    require_columns,
    require_rows,
    run_frame,
    target_axes,
)

__all__ = ["design_power"]

#: The epoch curves' colours, in order: the palette without yellow (faint) and black (reference lines).
_COLOURS = tuple(OKABE_ITO[name] for name in ("blue", "orange", "bluish green", "vermillion", "reddish purple",
                                              "sky blue"))  # fmt: skip


@validate_params(
    {
        "curves": [FRAME],
        "plan": [FRAME, NONE],
        "ax": [AXES, NONE],
        "target": [Interval(float, 0, 1, closed="neither"), NONE],
    }
)
def design_power(curves: Any, *, plan: Any = None, target: float | None = 0.8, ax: Any = None) -> Figure:
    """Power against cases, one line per number of epochs, the target and the chosen design marked.

    Parameters
    ----------
    curves : polars.DataFrame or polars.LazyFrame
        The output of :func:`mas_eval.stats.design_power` (one ``by`` group).
    plan : polars.DataFrame, optional
        The output of :func:`mas_eval.stats.plan` for the same components: its chosen design is
        marked (a point, ``gid="design_chosen"``).
    target : float or None
        The power drawn as a dotted horizontal line (``gid="design_target"``); None draws none.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes; by default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        A needed column is missing.
    DataError
        No rows, or two rows share epochs and cases (``by`` groups).

    Notes
    -----
    Each epoch count is one ``Line2D`` (``gid="design_power:<epochs>"``) through the power at
    each number of cases. Where the curves for more epochs bunch together, epochs have stopped
    buying power and only cases will.

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval.stats import design_power as curves, plan
    >>> components = pl.DataFrame({"quantity": ["case", "epoch"], "estimate": [0.02, 0.2], "judges": 1,
    ...                            "difference": "mas - single"})
    >>> fig = design_power(curves(components, mde=0.06, epochs=[1, 5], cases=[50, 133, 300]),
    ...                    plan=plan(components, mde=0.06, max_cases=150, max_epochs=6))
    >>> [(line.get_gid(), line.get_ydata().round(2).tolist()) for line in fig.axes[0].lines]
    [('design_power:1', [0.14, 0.31, 0.6]), ('design_power:5', [0.4, 0.8, 0.99]), ('design_target', [0.8, 0.8]), ('design_chosen', [0.8])]
    """  # noqa: E501
    where = "design_power"
    frame = run_frame(curves, where, "curves")
    require_columns(frame, ["epochs", "cases", "power"], where, "curves")
    data = frame.select("epochs", "cases", numeric(frame, "power", where).alias("_power")).drop_nulls()
    require_rows(data, where, "curves", after="with a power")
    repeated = data.select("epochs", "cases").is_duplicated()
    if repeated.any():
        keys = data.filter(repeated).select("epochs", "cases").unique(maintain_order=True)
        msg = (
            f"{where}: more than one row of the same epochs and cases: {format_keys(keys.iter_rows(named=True))}; "
            "the curves have 'by' groups: filter them to one group"
        )
        raise DataError(msg)
    data = data.sort("epochs", "cases")
    fig, axes = target_axes(ax)
    handles = []
    # One line per epoch count (a handful), each in its own colour.
    for i, epochs in enumerate(data["epochs"].unique().sort().to_list()):
        points = data.filter(pl.col("epochs") == epochs)
        (line,) = axes.plot(
            points["cases"].to_numpy(), points["_power"].to_numpy(), color=_COLOURS[i % len(_COLOURS)],
            linewidth=1.3, gid=f"design_power:{epochs}", label=f"{epochs} epoch{'s' if epochs != 1 else ''}",
            zorder=3,
        )  # fmt: skip
        handles.append(line)
    cases = data["cases"].to_numpy()
    if cases.min() > 0 and cases.max() / cases.min() > 10:
        axes.set_xscale("log")
        plain_log_axis(axes.xaxis)
    if target is not None:
        axes.plot([cases.min(), cases.max()], [target, target], color="black", linestyle=":", linewidth=0.9,
                  gid="design_target", zorder=2)  # fmt: skip
    if plan is not None:
        chosen = run_frame(plan, where, "plan")
        require_columns(chosen, ["epochs", "cases", "power", "chosen"], where, "plan")
        chosen = chosen.filter(pl.col("chosen"))
        if chosen.height:
            row = chosen.row(0, named=True)
            axes.plot([row["cases"]], [row["power"]], marker="o", markersize=6, color="black", linestyle="none",
                      gid="design_chosen", zorder=4)  # fmt: skip
            axes.annotate(
                f"{row['cases']:,} cases × {row['epochs']} epochs", (row["cases"], row["power"]), xytext=(6, -10),
                textcoords="offset points", fontsize="x-small",
            )  # fmt: skip
    axes.set_xlabel("Cases")
    axes.set_ylabel("Power")
    axes.set_ylim(0, 1.02)
    legend_above(axes, handles)
    return fig
