"""A diagnostic team's collaboration (the LDDx v6 metrics guide): TempoScore per round and credibility per agent."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.transforms import blended_transform_factory

from mas_eval.constraints import AXES, NONE, Instance, Interval, Predicate, check_columns, validate_params
from mas_eval.data.schema import RUN_KEY
from mas_eval.data.vocabulary import (
    CANT_MISS,
    DEBATE,
    INDEPENDENT,
    MASTER_LIST,
    ROUNDS,
    SPECIALIZED_RANKING,
    SYMPTOM_MANAGEMENT,
    VOTING,
)
from mas_eval.errors import DataError, InvalidParameterError, SchemaError
from mas_eval.plots._style import (
    SYSTEM,
    as_drawn,
    default_size,
    legend_above,
    require_rows,
    show_in_jupyter,
    system_colours,
    system_order,
    thousands,
)
from mas_eval.scoring.scores import Scores

__all__ = ["ROUND_LABELS", "collaboration"]

#: Tick labels of Local-DDx's rounds: short enough for a one-column figure; other rounds are
#: written as words (:func:`_round_label`).
ROUND_LABELS: dict[str, str] = {
    SPECIALIZED_RANKING: "Specialty ranking",
    SYMPTOM_MANAGEMENT: "Symptom management",
    INDEPENDENT: "Independent DDx",
    MASTER_LIST: "Master list",
    DEBATE: "Debate (refinement)",
    VOTING: "Post-debate vote",
    CANT_MISS: "Can't-miss",
}
#: Longest tick label (characters) of a round or an agent; longer ones end in "…".
_LABEL_CHARS = 22
#: Below this width (inches) the two panels are stacked, above it side by side.
_SIDE_BY_SIDE = 5.0
#: Heights (inches): a bar's row (one run); a box (several runs) and the gap between rounds; an
#: agents panel's row; the room a panel's title and x axis take; the legend's.
_BAR_ROW, _BOX_ROW, _GROUP_GAP, _AGENT_ROW, _MARGIN, _LEGEND = 0.19, 0.09, 0.08, 0.25, 0.72, 0.3
#: Opacity of box faces and of points.
_FACE_ALPHA, _POINT_ALPHA = 0.35, 0.5
#: The tables and columns drawn, and how Scores get them.
_ROUNDS = ("rounds", (RUN_KEY, SYSTEM, "round", "tempo_score"))
_AGENTS = ("agents", (RUN_KEY, SYSTEM, "agent_id", "credibility"))
_FIX = (
    "TempoScores and credibility are scored from a Dataset with ddx and messages tables, e.g. "
    "mas_eval.score(mas_eval.ingest.ingest_lddx(files).dataset)"
)

#: What ``collaboration`` reads, and where it may draw (one Axes per panel).
_SCORES = Instance(Scores, "the Scores mas_eval.score returned")
_AXES_LIST = Predicate(
    lambda value: isinstance(value, Sequence) and len(value) == 2 and all(AXES.is_satisfied_by(ax) for ax in value),
    "a pair of matplotlib Axes",
)
_RUN_ID = Predicate(lambda value: isinstance(value, str), "a run id (string)")


def _round_label(name: str) -> str:
    """``team_independent_differentials`` → ``Independent DDx``; another round as words, shortened."""
    if name in ROUND_LABELS:
        return ROUND_LABELS[name]
    return _shortened(name.replace("_", " ").capitalize())


def _shortened(text: str) -> str:
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1].rstrip() + "…"


def _round_order(rounds: Sequence[str]) -> list[str]:
    """Local-DDx's rounds in the order it runs them, then any other round, sorted.

    >>> _round_order(["zeta", "post_debate_voting", "alpha", "specialized_ranking"])
    ['specialized_ranking', 'post_debate_voting', 'alpha', 'zeta']
    """
    present = set(rounds)
    return [r for r in ROUNDS if r in present] + sorted(present - set(ROUNDS))


def _table(scores: Any, spec: tuple[str, tuple[str, ...]]) -> pl.DataFrame:
    """Table ``spec[0]`` of ``scores`` with columns ``spec[1]``, or an error naming what is missing and the fix."""
    name, columns = spec
    if not isinstance(scores, Mapping):
        msg = f"collaboration: scores must be the Scores mas_eval.score returned, not {type(scores).__name__}"
        raise InvalidParameterError(msg)
    if name not in scores:
        msg = f"collaboration: these Scores have no {name!r} table (they have: {', '.join(scores)}); {_FIX}"
        raise SchemaError(msg)
    frame = scores[name]
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    check_columns(frame.schema, columns, f"collaboration: the {name!r} table", fix=_FIX)
    return frame


def _values(frame: pl.DataFrame, key: str, value: str) -> pl.DataFrame:
    """``run_id, system, <key>, value`` (Float64) of the rows with a value."""
    return frame.select(
        pl.col(RUN_KEY).cast(pl.String),
        pl.col(SYSTEM).cast(pl.String),
        pl.col(key).cast(pl.String),
        pl.col(value).cast(pl.Float64).fill_nan(None).alias("value"),
    ).drop_nulls([SYSTEM, key, "value"])


def _missing_run(scores: Mapping[str, pl.DataFrame], rounds: pl.DataFrame, run_id: str) -> DataError:
    """Return the error for a run without rounds: it is not in the Scores, or it has no rounds."""
    examples = rounds[RUN_KEY].unique(maintain_order=True).head(3).to_list()
    shown = ", ".join(map(repr, examples)) or "(none: the table is empty)"
    runs = scores.get("runs")
    if runs is not None and RUN_KEY in runs.columns and runs.filter(pl.col(RUN_KEY) == run_id).height > 0:
        msg = f"collaboration: run {run_id!r} has no rows in the rounds table (runs with rounds are, e.g., {shown})"
    else:
        msg = f"collaboration: no run {run_id!r} in these Scores; runs with rounds are, e.g., {shown}"
    return DataError(msg)


def _panels(axes: Sequence[Axes] | None, heights: tuple[float, float]) -> tuple[Figure, Axes, Axes]:
    """Return the given pair of Axes and their figure, or a new figure: stacked when narrow, side by side when wide."""
    if axes is not None:
        pair = list(axes) if isinstance(axes, Sequence | np.ndarray) else [axes]
        if len(pair) != 2 or not all(isinstance(ax, Axes) for ax in pair):
            msg = (
                "collaboration: axes must be a pair of matplotlib Axes (rounds, agents) or None, "
                f"not {type(axes).__name__}"
            )
            raise InvalidParameterError(msg)
        return pair[0].figure, pair[0], pair[1]  # type: ignore[return-value]
    show_in_jupyter()
    width, least = default_size()
    if width < _SIDE_BY_SIDE:
        fig = Figure(figsize=(width, max(least, sum(heights))), layout="constrained")
        top, bottom = fig.subplots(2, 1, gridspec_kw={"height_ratios": heights})
        return fig, top, bottom
    fig = Figure(figsize=(width, max(least, *heights)), layout="constrained")
    left, right = fig.subplots(1, 2)
    return fig, left, right


def _stacked(bottom: Axes) -> bool:
    """Whether the agents panel is below the rounds panel (not beside it)."""
    spec = bottom.get_subplotspec()
    return spec is not None and spec.rowspan.start == 1


def _categorical_axis(ax: Axes, labels: Sequence[str], x_label: str, title: str = "") -> None:
    ax.set_yticks(range(len(labels)), [as_drawn(label) for label in labels])
    ax.set_ylim(len(labels) - 0.5, -0.5)  # first row on top
    ax.tick_params(axis="y", length=0)
    ax.spines["left"].set_visible(False)
    ax.set_xlabel(x_label)
    if title:
        ax.set_title(title)


def _note(ax: Axes, text: str) -> None:
    """Write in an empty panel's middle why it has nothing to draw."""
    ax.text(0.5, 0.5, as_drawn(text), transform=ax.transAxes, ha="center", va="center", fontsize="small", color="0.35",
            wrap=True, gid="no_values")  # fmt: skip
    ax.set_yticks([])
    ax.set_xticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


# --- one run --------------------------------------------------------------------------------------


def _bars(ax: Axes, values: np.ndarray, colour: str, gid: str, digits: int) -> None:
    """One horizontal bar per value, top down, each with its value written at its end."""
    bars = ax.barh(range(len(values)), values, height=0.62, color=colour, edgecolor="none", zorder=2)
    for bar in bars:
        bar.set_gid(gid)
    texts = ax.bar_label(bars, labels=[f"{v:.{digits}f}" for v in values], padding=2, fontsize="x-small")
    for text in texts:
        text.set_gid(f"{gid.partition(':')[0]}_value")
    ax.set_xlim(0, float(values.max()) * 1.18 if values.size and values.max() > 0 else 1.0)
    ax.xaxis.grid(True, color="0.9", linewidth=0.5, zorder=0)
    ax.set_axisbelow(True)


def _one_run(
    rounds: pl.DataFrame, agents: pl.DataFrame, run_id: str, axes: Sequence[Axes] | None
) -> tuple[Figure, str]:
    system = str(rounds[SYSTEM][0])
    colour = system_colours([system])[system]
    order = _round_order(rounds["round"].unique().to_list())
    tempo = (
        rounds.group_by("round")
        .agg(pl.col("value").mean())
        .with_columns(pl.col("round").replace_strict({r: i for i, r in enumerate(order)}).alias("_at"))
        .sort("_at")
    )
    credible = agents.sort(["value", "agent_id"], descending=[True, False])
    heights = (len(order) * _BAR_ROW + _MARGIN, max(credible.height, 1) * _BAR_ROW + _MARGIN)
    fig, top, bottom = _panels(axes, heights)

    _bars(top, tempo["value"].to_numpy(), colour, f"tempo:{system}", 2)
    _categorical_axis(top, [_round_label(r) for r in order], "TempoScore", "TempoScore per round")
    if credible.height:
        names = [_shortened(a) for a in credible["agent_id"].to_list()]
        _bars(bottom, credible["value"].to_numpy(), colour, f"credibility:{system}", 1)
        _categorical_axis(bottom, names, "Credibility", "Credibility per agent (highest first)")
    else:
        bottom.set_title("Credibility per agent")
        _note(bottom, f"no agent of run {run_id} has a credibility score")
    return fig, system


# --- many runs ------------------------------------------------------------------------------------


def _boxes(
    ax: Axes,
    data: pl.DataFrame,
    order: list[str],
    systems: list[str],
    colours: dict[str, str],
    role: str,
    *,
    side_by_side: bool,
    max_points: int,
    seed: int,
    fill: float = 0.75,
) -> int:
    """Draw per category of ``order`` a horizontal box per system, with jittered points; return the points drawn.

    Boxes are ``side_by_side`` in the category's row, else centred on it; ``fill`` is the share of its slot a box
    takes.
    """
    k = len(systems) if side_by_side else 1
    slot = 0.8 / k
    offsets = {s: (i - (k - 1) / 2) * slot if side_by_side else 0.0 for i, s in enumerate(systems)}
    at = {c: float(i) for i, c in enumerate(order)}
    data = data.with_columns(
        _y=pl.col("_group").replace_strict(at, return_dtype=pl.Float64)
        + pl.col(SYSTEM).replace_strict(offsets, return_dtype=pl.Float64)
    ).sort("_y", maintain_order=True)
    height = slot * fill
    # A loop over the systems, to draw each in its colour; the grouping is Polars'.
    for system in systems:
        own = data.filter(pl.col(SYSTEM) == system).partition_by("_y", as_dict=True, maintain_order=True)
        if not own:
            continue
        drawn = ax.boxplot(
            [part["value"].to_numpy() for part in own.values()], positions=[y for (y,) in own], widths=height,
            orientation="horizontal", patch_artist=True, showfliers=False, manage_ticks=False,
            medianprops={"color": "black", "linewidth": 1.0}, whiskerprops={"color": colours[system]},
            capprops={"color": colours[system]},
            boxprops={"facecolor": (*to_rgb(colours[system]), _FACE_ALPHA), "edgecolor": colours[system]},
        )  # fmt: skip
        for box in drawn["boxes"]:
            box.set_gid(f"{role}:{system}")
    shown = data if data.height <= max_points else data.sample(n=max_points, seed=seed)
    if max_points > 0:
        jitter = np.random.default_rng(seed).uniform(-height * 0.35, height * 0.35, shown.height)
        shown = shown.with_columns(_jy=pl.col("_y") + pl.Series(jitter))
        for system in systems:
            own = shown.filter(pl.col(SYSTEM) == system)
            ax.scatter(
                own["value"].to_numpy(), own["_jy"].to_numpy(), s=3, color=colours[system], alpha=_POINT_ALPHA,
                linewidths=0, zorder=2.5, rasterized=True, gid=f"{role}_points:{system}",
            )  # fmt: skip
    ax.xaxis.grid(True, color="0.9", linewidth=0.5, zorder=0)
    ax.set_axisbelow(True)
    return shown.height if max_points > 0 else 0


def _many_runs(
    rounds: pl.DataFrame, agents: pl.DataFrame, axes: Sequence[Axes] | None, *, max_points: int, seed: int
) -> Figure:
    present = [*rounds[SYSTEM].unique().to_list(), *agents[SYSTEM].unique().to_list()]
    systems, colours = system_order(present), system_colours(present)
    k = len(systems)
    order = _round_order(rounds["round"].unique().to_list())
    row = k * _BOX_ROW + _GROUP_GAP
    heights = (len(order) * row + _MARGIN + _LEGEND, k * _AGENT_ROW + _MARGIN)
    fig, top, bottom = _panels(axes, heights)

    tempo = rounds.rename({"round": "_group"})
    drawn = _boxes(top, tempo, order, systems, colours, "tempo", side_by_side=True, max_points=max_points,
                   seed=seed)  # fmt: skip
    # No panel titles: the legend goes above the rounds, and the axis labels say what each panel shows.
    _categorical_axis(top, [_round_label(r) for r in order], "TempoScore per round")
    if agents.height:
        credible = agents.with_columns(_group=pl.col(SYSTEM))
        # Side by side, the agents' few rows are as tall as the rounds panel: boxes as thick as in a stacked panel.
        row_height = (fig.get_figheight() - _MARGIN) / k if axes is None and not _stacked(bottom) else _AGENT_ROW
        fill = 0.75 * min(1.0, _AGENT_ROW / row_height)
        drawn += _boxes(bottom, credible, systems, [*systems], colours, "credibility", side_by_side=False,
                        max_points=max_points, seed=seed, fill=fill)  # fmt: skip
        _categorical_axis(bottom, systems, "Credibility per agent")
    else:
        _note(bottom, "no agent of these runs has a credibility score")

    runs = rounds.group_by(SYSTEM).agg(pl.col(RUN_KEY).n_unique())
    count = dict(runs.iter_rows())
    handles: list[Any] = [
        Patch(
            facecolor=(*to_rgb(colours[s]), _FACE_ALPHA), edgecolor=colours[s],
            label=f"{s} ({thousands(count.get(s, 0))} run{'' if count.get(s, 0) == 1 else 's'})",
        )
        for s in systems
    ]  # fmt: skip
    total = tempo.height + agents.height
    note = None
    if max_points == 0:
        note = "points not drawn"
    elif drawn < total:
        note = f"points: a sample of {thousands(max_points)} per panel"
    legend = legend_above(top, handles, title=note)
    if axes is None and _stacked(bottom):
        # Stacked panels: centred on the figure, not on the rounds panel, which the round names push
        # to the right (side by side, this would widen the rounds panel's margin into the agents').
        legend.set_bbox_to_anchor((0.5, 1.01), transform=blended_transform_factory(fig.transFigure, top.transAxes))
    return fig


# --- the figure -----------------------------------------------------------------------------------


@validate_params(
    {
        "scores": [_SCORES],
        "axes": [_AXES_LIST, NONE],
        "run_id": [_RUN_ID, NONE],
        "max_points": [Interval(int, 0)],
        "seed": [Interval(int, 0)],
    }
)
def collaboration(
    scores: Scores,
    run_id: str | None = None,
    *,
    max_points: int = 2000,
    seed: int = 0,
    axes: Sequence[Axes] | None = None,
) -> Figure:
    """TempoScore per round and credibility per agent: of one run, or their distributions over runs.

    Parameters
    ----------
    scores : Scores
        Scores of a diagnostic team (the LDDx v6 metrics guide): the ``rounds`` table (``run_id, system, round,
        tempo_score``) and the ``agents`` table with its ``credibility`` column.
    run_id : str, optional
        Draw this run alone; by default every run, as distributions per system.
    max_points : int
        Over runs, at most this many values per panel are drawn as jittered points; above it a
        random sample of this size is (0: no points).
    seed : int
        Seed of that sample and of the jitter.
    axes : pair of matplotlib.axes.Axes, optional
        Draw the rounds into ``axes[0]`` and the agents into ``axes[1]``; by default a new
        figure as wide as ``rcParams["figure.figsize"]``, its panels stacked below 5 in and
        side by side from 5 in, as tall as their rows need (at least the rcParams height).

    Returns
    -------
    matplotlib.figure.Figure
        The new figure (its axes: rounds, then agents), or ``axes[0].figure``.

    Raises
    ------
    InvalidParameterError
        ``scores`` are not Scores, ``axes`` is not a pair of Axes, or another bad parameter.
    SchemaError
        The Scores have no ``rounds`` table, or no ``agents`` table with a ``credibility``
        column (the message says how to score them), or a table lacks a column named above.
    DataError
        The ``rounds`` table has no TempoScore; ``run_id`` has no rounds (the message says
        whether it is in the ``runs`` table and names runs that have rounds).

    Notes
    -----
    The rounds are in the order Local-DDx runs them (specialty ranking, symptom management,
    independent differentials, master list, debate, post-debate vote, can't-miss), then any
    other round sorted, from top to bottom, labelled by :data:`ROUND_LABELS`. Tick labels
    longer than 22 characters are cut with "…".

    With ``run_id``: one horizontal bar per round of the run (``gid="tempo:<system>"``) and one
    per agent with a credibility score (``gid="credibility:<system>"``), agents by decreasing
    credibility (then by name), in the system's colour, each with its value written at its end
    (``gid="tempo_value"``, ``"credibility_value"``); the figure's title names the run and its
    system. A round scored twice (it should not be) shows its mean.

    Without: per round, one horizontal box per system with TempoScores
    (``gid="tempo:<system>"``, side by side within the round's row), and per system one box of
    its agents' credibility scores, one value per agent and run (``gid="credibility:<system>"``);
    boxes show the median, quartiles and whiskers at 1.5 IQR, without outliers, since the
    values are drawn as jittered points over them (``gid="tempo_points:<system>"``,
    ``"credibility_points:<system>"``, rasterised in vector files). The legend above names each
    system with its number of runs. Colours are :func:`~mas_eval.plots.system_colours`.

    A panel without any credibility score says so in its middle (``gid="no_values"``).

    Examples
    --------
    >>> import polars as pl
    >>> from mas_eval import Scores
    >>> ids = {"system": "mas", "case_id": "c1", "task": "ddx", "variant": None}
    >>> rounds = pl.DataFrame({"run_id": "r1", **ids, "round": ["team_independent_differentials",
    ...                        "refinement_and_justification"], "tempo_score": [1.8, 1.25]})
    >>> agents = pl.DataFrame({"run_id": "r1", **ids, "agent_id": ["Dr. A", "Dr. B"],
    ...                        "credibility": [41.5, 47.2]})
    >>> fig = collaboration(Scores(tables={"rounds": rounds, "agents": agents}), "r1")
    >>> [[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes]
    [['Independent DDx', 'Debate (refinement)'], ['Dr. B', 'Dr. A']]
    >>> fig.get_suptitle()
    'Run r1 (mas)'
    """
    rounds = _values(_table(scores, _ROUNDS), "round", "tempo_score")
    agents = _values(_table(scores, _AGENTS), "agent_id", "credibility")
    require_rows(rounds, "collaboration", "the rounds table", after="with a tempo_score")
    if run_id is None:
        return _many_runs(rounds, agents, axes, max_points=max_points, seed=seed)
    own = rounds.filter(pl.col(RUN_KEY) == run_id)
    if own.height == 0:
        raise _missing_run(scores, rounds, run_id)
    fig, system = _one_run(own, agents.filter(pl.col(RUN_KEY) == run_id), run_id, axes)
    if axes is None:
        title = as_drawn(f"Run {run_id} ({system})")
        width = fig.get_figwidth() * 72 / mpl.rcParams["font.size"] * 1.8
        fig.suptitle(textwrap.fill(title, width=max(int(width), 20)), fontsize=mpl.rcParams["axes.titlesize"])
    return fig
