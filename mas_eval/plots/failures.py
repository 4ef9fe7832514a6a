"""Failure modes by system: each mode's rate per system as a heat map, the paired differences beside it."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from mas_eval.constraints import AXES, FRAME, NONE, PROBABILITY, Boolean, validate_params
from mas_eval.errors import DataError, format_keys
from mas_eval.plots._style import (
    OKABE_ITO,
    as_drawn,
    default_size,
    require_columns,
    require_rows,
    run_frame,
    system_order,
    target_axes,
)

__all__ = ["failure_modes"]

#: Row height (inches) of the heat map, and the room its labels, header and colour bar take.
_ROW, _MARGIN, _MIN_HEIGHT = 0.24, 1.0, 1.6
#: Cells darker than this rate get white text.
_DARK = 0.55
#: The outline of a mode whose paired difference stays significant after the correction.
_SIGNIFICANT = OKABE_ITO["black"]


@validate_params(
    {
        "rates": [FRAME],
        "differences": [FRAME, NONE],
        "ax": [AXES, NONE],
        "alpha": [PROBABILITY],
        "annotate": [Boolean()],
    }
)
def failure_modes(
    rates: Any, differences: Any = None, *, alpha: float = 0.05, annotate: bool = True, ax: Any = None
) -> Figure:
    """Heat map of each failure mode's rate per system, with the paired differences marked.

    Parameters
    ----------
    rates : polars.DataFrame or polars.LazyFrame
        :func:`mas_eval.stats.failure_rates`' table: one rate per system and mode (without
        ``by``).
    differences : polars.DataFrame or polars.LazyFrame, optional
        :func:`mas_eval.stats.failure_differences`' table for two of the systems: each mode's
        treatment − control difference is written beside its row, and the modes whose adjusted
        p is below ``alpha`` are outlined.
    alpha : float
        The level at which an adjusted p counts as significant, in (0, 1).
    annotate : bool
        Write each cell's rate in it, as a percentage.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes (the colour bar takes room beside it); by default a new figure as
        wide as ``rcParams["figure.figsize"]`` and 1.0 + 0.24 in per mode tall.

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    SchemaError
        A needed column is missing.
    DataError
        No rate, or two rates of one system and mode (a table broken down ``by`` agent).

    Notes
    -----
    Rows are the modes in sorted order (MAST's labels start with their code, so its categories
    stay together), columns the systems in the house order (``mas``, ``single``, then the others
    sorted). Cell (mode, system) is the rate on a white-to-red scale over [0, 1] (an image,
    ``gid="failure_rates"``, whose data is the rates; a system without annotations of a mode is
    blank) with a colour bar; with ``annotate`` each cell holds its rate as a percentage
    (``gid="failure_rate"``). With ``differences``, a column to the right gives each mode's
    difference in percentage points (``gid="failure_difference"``,
    ``+12 pp*`` when significant after the table's correction, ``−5 pp`` otherwise), and a significant mode's row
    is outlined (a ``Rectangle``, ``gid="significant"``). Mode and system names are drawn as
    written (:func:`~mas_eval.plots._style.as_drawn`).

    Examples
    --------
    >>> import polars as pl
    >>> rates = pl.DataFrame({"system": ["mas", "mas", "single", "single"],
    ...                       "mode": ["1.3 Step repetition", "3.3 Incorrect verification"] * 2,
    ...                       "rate": [0.40, 0.10, 0.05, 0.20]})
    >>> fig = failure_modes(rates)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['1.3 Step repetition', '3.3 Incorrect verification']
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['40%', '5%', '10%', '20%']
    """
    where = "failure_modes"
    table = run_frame(rates, where, "rates")
    require_columns(table, ["system", "mode", "rate"], where, "rates")
    table = table.filter(pl.col("rate").is_not_null())
    require_rows(table, where, "rates", after="with a rate")
    twice = table.filter(pl.struct("system", "mode").is_duplicated())
    if twice.height:
        shown = format_keys(twice.select("system", "mode").unique(maintain_order=True).to_dicts())
        msg = (
            f"{where}: rates has several rows of one system and mode ({shown}); draw failure_rates' table "
            "without by= (or filter it to one agent)"
        )
        raise DataError(msg)
    systems = system_order(table["system"].to_list())
    modes = sorted(table["mode"].unique().to_list())
    grid = (
        pl.DataFrame({"mode": modes})
        .join(table.pivot(on="system", index="mode", values="rate"), on="mode", how="left")
        .select(*(pl.col(s).cast(pl.Float64) if s in table["system"] else pl.lit(None, pl.Float64) for s in systems))
    )
    values = grid.to_numpy().astype(float)

    fig, ax = target_axes(
        ax, None if ax is not None else (default_size()[0], max(_MIN_HEIGHT, _MARGIN + _ROW * len(modes)))
    )
    image = ax.imshow(
        np.ma.masked_invalid(values), cmap="Reds", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest",
        gid="failure_rates",
    )  # fmt: skip
    bar = fig.colorbar(image, ax=ax, pad=0.02, aspect=20)
    bar.set_label("Failure rate (0–1)")
    bar.outline.set_linewidth(0.4)
    ax.set_yticks(range(len(modes)), [as_drawn(m) for m in modes])
    ax.set_xticks(range(len(systems)), [as_drawn(s) for s in systems])
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if annotate:
        # A loop over the cells (modes × systems), to write their values.
        for (i, j), rate in np.ndenumerate(values):
            if np.isfinite(rate):
                colour = "white" if rate > _DARK else "black"
                ax.text(j, i, f"{rate:.0%}", ha="center", va="center", fontsize="x-small", color=colour,
                        gid="failure_rate")  # fmt: skip
    if differences is not None:
        _mark_differences(ax, run_frame(differences, where, "differences"), modes, len(systems), alpha)
    return fig


def _mark_differences(ax: Any, differences: pl.DataFrame, modes: list[str], columns: int, alpha: float) -> None:
    """Each mode's treatment − control difference to the right of its row; significant modes outlined."""
    require_columns(
        differences, ["mode", "treatment", "control", "difference", "p_adjusted"], "failure_modes", "differences"
    )
    rows = {row["mode"]: row for row in differences.iter_rows(named=True)}
    pairs = differences.select("treatment", "control").unique()
    if pairs.height:
        treatment, control = pairs.row(0)
        ax.text(columns - 0.5 + 0.15, -0.75, as_drawn(f"{treatment} − {control}"), ha="left", va="bottom",
                fontsize="x-small", gid="failure_difference_header")  # fmt: skip
    # A loop over the modes drawn, to write each one's difference.
    for i, mode in enumerate(modes):
        row = rows.get(mode)
        if row is None or row["difference"] is None:
            continue
        significant = row["p_adjusted"] is not None and row["p_adjusted"] < alpha
        # A typographic minus, as the house's difference labels write it.
        text = f"{100 * row['difference']:+.0f} pp".replace("-", "\u2212") + ("*" if significant else "")
        ax.text(columns - 0.5 + 0.15, i, text, ha="left", va="center", fontsize="x-small",
                fontweight="bold" if significant else "normal", gid="failure_difference")  # fmt: skip
        if significant:
            ax.add_patch(
                Rectangle(
                    (-0.5, i - 0.5), columns, 1.0, fill=False, edgecolor=_SIGNIFICANT, linewidth=1.2, clip_on=False,
                    zorder=3, gid="significant",
                )
            )  # fmt: skip
