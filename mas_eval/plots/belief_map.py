"""One run's belief masses: agents × alternatives, as a heatmap."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from mas_eval.constraints import AXES, NONE, TEXT, Boolean, Instance, validate_params
from mas_eval.data.schema import RUN_KEY
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.plots._style import as_drawn, default_size, target_axes
from mas_eval.scoring.scores import Scores
from mas_eval.storage.dataset import Dataset

__all__ = ["beliefs"]

#: Row height (inches) of the heatmap, and the room its labels, title and colour bar take.
_ROW, _MARGIN, _MIN_HEIGHT = 0.3, 1.1, 1.6
#: Cells darker than this get white text.
_DARK = 0.6
#: Highlight of the recommended alternative's column.
_HIGHLIGHT = "#D55E00"


def _height(agents: int) -> float:
    """Figure height (inches) for ``agents`` rows: a band per agent plus the labels, at least ``_MIN_HEIGHT``."""
    return max(_MIN_HEIGHT, _MARGIN + _ROW * agents)


def _dataset(ds_or_scores: Any) -> Dataset:
    if isinstance(ds_or_scores, Dataset):
        return ds_or_scores
    if isinstance(ds_or_scores, Scores):
        msg = (
            f"beliefs: Scores hold no belief masses (their tables: {', '.join(ds_or_scores.names)}); pass the "
            "Dataset they were scored from, e.g. beliefs(mas_eval.Dataset.open(path), run_id)"
        )
        raise InvalidParameterError(msg)
    msg = f"beliefs: ds_or_scores must be a mas_eval.Dataset with a beliefs table, not {type(ds_or_scores).__name__}"
    raise InvalidParameterError(msg)


def _run_rows(ds: Dataset, table: str, run_id: str) -> pl.DataFrame:
    with ds.reading():
        return ds[table].filter(pl.col(RUN_KEY) == run_id).collect()


def _missing_run(ds: Dataset, run_id: str) -> DataError:
    """Return the error for a run without beliefs: it is not in the Dataset, or it has no belief rows."""
    with ds.reading():
        in_runs = ds["runs"].filter(pl.col(RUN_KEY) == run_id).select(pl.len()).collect().item() > 0
        examples = ds["beliefs"].select(pl.col(RUN_KEY).unique(maintain_order=True).head(3)).collect()
    shown = ", ".join(map(repr, examples.to_series().to_list())) or "(none: the table is empty)"
    if in_runs:
        msg = f"beliefs: run {run_id!r} has no rows in the beliefs table (runs with beliefs are, e.g., {shown})"
    else:
        msg = f"beliefs: no run {run_id!r} in the runs table nor in the beliefs table; runs with beliefs are, e.g., {shown}"  # noqa: E501
    return DataError(msg)


def _belief_grid(ds: Dataset, run_id: str) -> tuple[list[str], list[str], np.ndarray]:
    """Return the run's agents and alternatives (sorted) and its agents × alternatives masses (NaN: no row)."""
    masses = _run_rows(ds, "beliefs", run_id)
    if masses.height == 0:
        raise _missing_run(ds, run_id)
    grid = (
        masses.group_by("agent_id", "alternative")
        .agg(pl.col("mass").sum())
        .pivot(on="alternative", index="agent_id", values="mass", sort_columns=True)
        .sort("agent_id")
    )
    agents = grid["agent_id"].cast(pl.String).to_list()
    alternatives = [c for c in grid.columns if c != "agent_id"]
    return agents, alternatives, grid.select(alternatives).cast(pl.Float64).to_numpy()


def _write_values(ax: Axes, values: np.ndarray) -> None:
    """Write each cell's mass in it, to two decimals, white on the dark cells."""
    # A loop over the cells of one run (agents × alternatives), to write their values.
    for (i, j), mass in np.ndenumerate(values):
        if np.isfinite(mass):
            colour = "white" if mass > _DARK else "black"
            ax.text(j, i, f"{mass:.2f}", ha="center", va="center", fontsize="x-small", color=colour,
                    gid="belief_value")  # fmt: skip


#: What ``beliefs`` reads a run from.
_SOURCE = Instance((Dataset, Scores), "a Dataset or Scores")


@validate_params({"ds_or_scores": [_SOURCE], "run_id": [TEXT], "ax": [AXES, NONE], "annotate": [Boolean()]})
def beliefs(ds_or_scores: Dataset | Scores, run_id: str, *, annotate: bool = True, ax: Axes | None = None) -> Figure:
    """Heatmap of one run's belief masses: one row per agent, one column per alternative.

    Parameters
    ----------
    ds_or_scores : Dataset
        The Dataset holding the run (its ``beliefs`` table; ``agents`` and ``runs`` when
        present). :class:`~mas_eval.Scores` do not keep belief masses and are refused with a
        message saying to pass the Dataset.
    run_id : str
        The run drawn.
    annotate : bool
        Write each cell's mass in it.
    ax : matplotlib.axes.Axes, optional
        Draw into this Axes (the colour bar takes room beside it); by default a new figure as
        wide as ``rcParams["figure.figsize"]`` and 1.1 + 0.3 in per agent tall (at least 1.6 in).

    Returns
    -------
    matplotlib.figure.Figure
        The new figure, or ``ax.figure``.

    Raises
    ------
    InvalidParameterError
        Scores (or anything else that is not a Dataset) were given.
    SchemaError
        The Dataset has no ``beliefs`` table.
    DataError
        The run has no belief rows; the message says whether it is in the ``runs`` table and
        names runs that have beliefs.

    Notes
    -----
    Cell (agent, alternative) is the agent's mass on the alternative, from the ``beliefs``
    table, on a white-to-blue scale over [0, 1] (``gid="belief_heatmap"``) with a colour bar;
    an alternative an agent gave no row for is left blank. Agents and alternatives are in
    sorted order. Each row label carries the agent's confidence from the ``agents`` table,
    ``"a1 (conf 0.90)"``. The alternative the run recommended (``runs.recommended``) has its
    column outlined (a ``Rectangle``, ``gid="recommended"``) and its tick label in bold; the
    title says which it is and whether it was the correct one (``runs.correct``). With
    ``annotate``, each cell holds its mass to two decimals (``gid="belief_value"``).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval import Dataset
    >>> ds = Dataset.from_frames(
    ...     runs=pl.DataFrame({"run_id": ["r1"], "system": ["mas"], "case_id": ["c1"], "recommended": ["x"]}),
    ...     agents=pl.DataFrame({"run_id": ["r1", "r1"], "agent_id": ["a1", "a2"], "confidence": [0.9, 0.6]}),
    ...     beliefs=pl.DataFrame({"run_id": ["r1"] * 4, "agent_id": ["a1", "a1", "a2", "a2"],
    ...                           "alternative": ["x", "y", "x", "y"], "mass": [0.7, 0.3, 0.4, 0.6]}))
    >>> fig = beliefs(ds, "r1")
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a1 (conf 0.90)', 'a2 (conf 0.60)']
    >>> fig.axes[0].get_title()
    'Run r1 (mas): recommended x'
    """
    ds = _dataset(ds_or_scores)
    if "beliefs" not in ds:
        msg = f"beliefs: the Dataset has no beliefs table (it has: {', '.join(ds.table_names)}); nothing to draw"
        raise SchemaError(msg)
    agents, alternatives, values = _belief_grid(ds, run_id)

    confidence: dict[str, float] = {}
    if "agents" in ds:
        own = _run_rows(ds, "agents", run_id).select("agent_id", "confidence").drop_nulls()
        confidence = {str(a): float(c) for a, c in own.iter_rows()}
    run = _run_rows(ds, "runs", run_id)
    info = run.row(0, named=True) if run.height else {}
    recommended, correct = info.get("recommended"), info.get("correct")

    fig, ax = target_axes(ax, None if ax is not None else (default_size()[0], _height(len(agents))))
    image = ax.imshow(
        np.ma.masked_invalid(values), cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest",
        gid="belief_heatmap",
    )  # fmt: skip
    bar = fig.colorbar(image, ax=ax, pad=0.02, aspect=20)
    bar.set_label("Belief mass (0–1)")
    bar.outline.set_linewidth(0.4)

    labels = [f"{as_drawn(a)} (conf {confidence[a]:.2f})" if a in confidence else as_drawn(a) for a in agents]
    ax.set_yticks(range(len(agents)), labels)
    ax.set_xticks(range(len(alternatives)), [as_drawn(a) for a in alternatives])
    if sum(len(a) for a in alternatives) > 40:
        ax.tick_params(axis="x", labelrotation=45)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xlabel("Alternative")

    if annotate:
        _write_values(ax, values)

    system = info.get("system")
    title = f"Run {run_id}" + (f" ({system})" if system is not None else "")
    if recommended is not None:
        title += f": recommended {recommended}"
        if correct is not None:
            title += " (correct)" if recommended == correct else f"; correct {correct}"
    if recommended in alternatives:
        column = alternatives.index(recommended)
        ax.add_patch(
            Rectangle(
                (column - 0.5, -0.5), 1.0, len(agents), fill=False, edgecolor=_HIGHLIGHT, linewidth=1.6,
                clip_on=False, zorder=3, gid="recommended",
            )
        )  # fmt: skip
        ax.get_xticklabels()[column].set_fontweight("bold")
    elif recommended is not None:
        title += " (no beliefs)"
    ax.set_title(as_drawn(title))
    return fig
