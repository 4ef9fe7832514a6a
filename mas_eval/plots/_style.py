r"""What every figure shares: the system colours, the paper style, saving, inputs, labels and t CIs.

One colour per system in every figure (:func:`system_colours`), one paper style
(:func:`paper_style`), one writer (:func:`save`), and the helpers the drawing modules use to
check their inputs, word their axis labels and compute their confidence intervals. A name from
the data (a system, task, agent, run id) is drawn through :func:`as_drawn`: as written, on one
line, never read as mathtext.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import io
import sys
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import matplotlib as mpl
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath
from matplotlib.ticker import FuncFormatter
from scipy.special import stdtrit

from mas_eval.constraints import PATH, TEXT, Boolean, Options, Predicate, check_columns, numeric_value, validate_params
from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.escaping import one_line
from mas_eval.metrics import registry
from mas_eval.storage.outputs import atomic_file

__all__ = [
    "OKABE_ITO",
    "PAPER_WIDTHS",
    "SYSTEM",
    "SYSTEM_COLOURS",
    "axis_label",
    "compared_systems",
    "fitted",
    "paper_style",
    "save",
    "system_colours",
]

#: The Okabe–Ito palette (Okabe & Ito 2008, "Color Universal Design"): distinguishable with
#: every common colour-vision deficiency, and in greyscale by lightness for most pairs.
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}

#: The systems whose colour never changes.
SYSTEM_COLOURS: dict[str, str] = {"mas": OKABE_ITO["blue"], "single": OKABE_ITO["orange"]}
#: The treatment and control named by :func:`compared_systems` in the block running now: they take the MAS's and
#: the single agent's colours and places, whatever their names.
_COMPARED: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("mas_eval_compared", default=None)

#: Colours for the other systems, in the order they are handed out (yellow and black last:
#: yellow is faint on white, and black is kept for reference lines).
_OTHER_COLOURS = tuple(
    OKABE_ITO[name] for name in ("vermillion", "bluish green", "reddish purple", "sky blue", "yellow", "black")
)

#: The system column of a run-level frame.
SYSTEM = "system"

#: Figure width (inches) of a single- and a double-column figure.
PAPER_WIDTHS: dict[int, float] = {1: 3.5, 2: 7.0}
_PAPER_HEIGHTS: dict[int, float] = {1: 2.6, 2: 3.0}
#: A log axis spanning at most this many decades labels its 2s and 5s too.
_MINOR_LABEL_DECADES = 1.5
#: Legend geometry (in font sizes), and the margin on measured text widths.
_HANDLE_LENGTH, _HANDLE_PAD, _COLUMN_SPACING, _SAFETY = 1.6, 0.5, 1.2, 1.08

#: The fonts tried in turn for ``font.family = "serif"``: Times where installed, then its metric
#: clones, then STIX and DejaVu Serif, which ship with matplotlib (so one is always found).
_SERIF = ["Times New Roman", "Times", "Liberation Serif", "Nimbus Roman", "STIXGeneral", "DejaVu Serif"]

#: Axis units of the run columns whose unit is not their declared range.
_UNITS = {
    "cost_usd": "USD",
    "run_cost_usd": "USD",
    "processing_time_seconds": "s",
    "time_to_consensus": "iterations",
    "api_calls_used": "API calls",
    "num_agents": "agents",
    "unique_preferences": "alternatives",
}
#: Readable names of the run columns whose name does not read as words.
_NAMES = {
    "dqs": "DQS",
    "dqs_raw": "DQS before boost",
    "gt_match": "Ground-truth match",
    "cost_usd": "Cost",
    "run_cost_usd": "Cost",
    "tokens_used": "Tokens used",
    "processing_time_seconds": "Processing time",
    "er_unassigned": "ER unassigned belief",
}


def system_order(systems: Iterable[str]) -> list[str]:
    """Return the distinct systems in drawing order: ``mas``, ``single``, then the others sorted.

    >>> system_order(["zeta", "single", "alpha", "mas", "zeta"])
    ['mas', 'single', 'alpha', 'zeta']
    """
    present = {s for s in systems if s is not None}
    fixed = _fixed_colours()
    return [s for s in fixed if s in present] + sorted(present - set(fixed))


def _fixed_colours() -> dict[str, str]:
    """Return the systems whose colour is fixed: the compared pair of :func:`compared_systems`, else mas and single."""
    return _COMPARED.get() or SYSTEM_COLOURS


@contextlib.contextmanager
@validate_params({"treatment": [TEXT], "control": [TEXT]})
def compared_systems(treatment: str, control: str) -> Iterator[None]:
    """Draw ``treatment`` in the MAS's colour and place, ``control`` in the single agent's, within this block.

    Whatever the two systems are named: a report of a debate against a one-model baseline reads as the case viewer.

    Examples
    --------
    >>> with compared_systems("debate", "solo"):
    ...     system_colours(["solo", "debate", "other"])
    {'debate': '#0072B2', 'solo': '#E69F00', 'other': '#D55E00'}
    """
    token = _COMPARED.set({treatment: SYSTEM_COLOURS["mas"], control: SYSTEM_COLOURS["single"]})
    try:
        yield
    finally:
        _COMPARED.reset(token)


#: The systems named: any list of them (a null system among them is a colour too).
_SYSTEMS = Predicate(
    lambda value: isinstance(value, Iterable) and not isinstance(value, str | bytes), "a list of system names"
)


@validate_params({"systems": [_SYSTEMS]})
def system_colours(systems: Iterable[str]) -> dict[str, str]:
    """Return the colour of each system: the same system, the same colour, in every figure.

    Parameters
    ----------
    systems : iterable of str
        System names (repeats and ``None`` are ignored).

    Returns
    -------
    dict of str to str
        System → hex colour, in drawing order (``mas``, ``single``, then the others sorted).

    Notes
    -----
    Colours come from the Okabe–Ito palette (:data:`OKABE_ITO`), which stays distinguishable
    with the common colour-vision deficiencies. ``mas`` is always blue (``#0072B2``) and
    ``single`` always orange (``#E69F00``). Any other system gets the remaining colours in
    this order — vermillion, bluish green, reddish purple, sky blue, yellow, black — handed out
    to the other names present in sorted order, so the same set of systems always gets the
    same colours. Past six other systems the colours repeat.

    Examples
    --------
    >>> system_colours(["single", "mas"])
    {'mas': '#0072B2', 'single': '#E69F00'}
    >>> system_colours(["mas", "debate", "cot"])
    {'mas': '#0072B2', 'cot': '#D55E00', 'debate': '#009E73'}
    """
    ordered = system_order(systems)
    fixed = _fixed_colours()
    others = [s for s in ordered if s not in fixed]
    colours = {s: fixed[s] for s in ordered if s in fixed}
    colours.update({s: _OTHER_COLOURS[i % len(_OTHER_COLOURS)] for i, s in enumerate(others)})
    return colours


def _paper_rc(columns: int) -> dict[str, Any]:
    width, height = PAPER_WIDTHS[columns], _PAPER_HEIGHTS[columns]
    small, normal = 7, 8
    return {
        "figure.figsize": (width, height),
        "figure.dpi": 150,
        "savefig.dpi": 300,
        "figure.constrained_layout.use": True,
        # A glyph the serif font lacks (Hebrew, Arabic, Greek in a system's or task's name) is
        # drawn from DejaVu Sans, which ships with matplotlib, instead of as an empty box.
        "font.family": ["serif", "DejaVu Sans"],
        "font.serif": _SERIF,
        "mathtext.fontset": "dejavuserif",
        "font.size": normal,
        "axes.titlesize": normal,
        "axes.labelsize": normal,
        "figure.titlesize": normal,
        "xtick.labelsize": small,
        "ytick.labelsize": small,
        "legend.fontsize": small,
        "legend.title_fontsize": small,
        "legend.frameon": False,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": False,
        "axes.linewidth": 0.6,
        "xtick.major.width": 0.6,
        "ytick.major.width": 0.6,
        "xtick.major.size": 2.5,
        "ytick.major.size": 2.5,
        "lines.linewidth": 1.0,
        "lines.markersize": 4.0,
        "patch.linewidth": 0.6,
        "pdf.fonttype": 42,
        "ps.fonttype": 42,
    }


@contextlib.contextmanager
@validate_params({"columns": [Options((1, 2))]})
def paper_style(columns: Literal[1, 2] = 1) -> Iterator[None]:
    """Within this block, figures are sized and styled for a two-column paper.

    Parameters
    ----------
    columns : {1, 2}
        ``1``: a single-column figure, 3.5 in wide; ``2``: a double-column one, 7 in wide.

    Yields
    ------
    None
        The block runs with these matplotlib settings; they are undone when it ends.

    Notes
    -----
    A :func:`matplotlib.rc_context` with: ``figure.figsize`` 3.5 × 2.6 in (``columns=1``) or
    7 × 3 in (``columns=2``), which every function of :mod:`mas_eval.plots` reads when it is
    called (so a figure made inside the block gets that width; some grow taller with their
    content); constrained layout; serif fonts (Times New Roman, else its metric clones, else
    STIX or DejaVu Serif, which ship with matplotlib); 8 pt text and 7 pt tick labels and
    legends; no top or right spine, no grid, no legend frame; 150 dpi on screen and 300 dpi
    when saved; and ``pdf.fonttype`` / ``ps.fonttype`` 42, so that fonts are embedded as
    TrueType (editable text, accepted by publishers), not as Type 3.

    Examples
    --------
    >>> import matplotlib as mpl
    >>> with paper_style(columns=2):
    ...     tuple(mpl.rcParams["figure.figsize"]), mpl.rcParams["pdf.fonttype"]
    ((7.0, 3.0), 42)
    """
    with mpl.rc_context(_paper_rc(columns)):
        yield


#: The formats :func:`save` writes, by file suffix.
_FORMATS = {".pdf": "pdf", ".svg": "svg", ".png": "png"}
#: Metadata left out so that the same figure saves to the same bytes.
_METADATA: dict[str, dict[str, Any]] = {"pdf": {"CreationDate": None}, "svg": {"Date": None}, "png": {}}


#: A matplotlib figure, told by what it does (matplotlib loads with the first figure drawn).
_FIGURE = Predicate(lambda value: callable(getattr(value, "savefig", None)), "a matplotlib Figure")


@validate_params({"fig": [_FIGURE], "path": [PATH], "overwrite": [Boolean()]})
def save(fig: Figure, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write ``fig`` to ``path`` as PDF, SVG or PNG, chosen by the suffix, atomically.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, e.g. one a function of :mod:`mas_eval.plots` returned.
    path : str or pathlib.Path
        Where to write it; the suffix (``.pdf``, ``.svg`` or ``.png``, any case) picks the format.
    overwrite : bool
        Replace an existing file.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InvalidParameterError
        ``fig`` is not a Figure, or the suffix is not one of the three.
    OutputExistsError
        ``path`` exists and ``overwrite`` is false.
    OutputError
        ``path`` cannot be written there (:func:`mas_eval.storage.outputs.atomic_file`).

    Notes
    -----
    The figure is drawn into a temporary file beside ``path``, which replaces ``path`` only
    once it is complete: a failure leaves no partial file. The size is the figure's own (no
    cropping), at ``savefig.dpi`` for PNG (300 inside :func:`paper_style`). The creation date
    is left out of PDF and SVG files, so the same figure gives the same bytes.

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(2, 1))
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = save(fig, Path(folder) / "empty.svg")
    ...     written.name, written.read_text().count("<svg")
    ('empty.svg', 1)
    """
    if not isinstance(fig, Figure):
        msg = f"save: fig must be a matplotlib Figure, not {type(fig).__name__}"
        raise InvalidParameterError(msg)
    target = Path(path)
    fmt = _FORMATS.get(target.suffix.lower())
    if fmt is None:
        msg = f"save: cannot tell the format of {str(target)!r} from its suffix; use .pdf, .svg or .png"
        raise InvalidParameterError(msg)
    with atomic_file(target, overwrite=overwrite) as staging:
        fig.savefig(staging, format=fmt, metadata=_METADATA[fmt])
    return target


# --- Inputs ---------------------------------------------------------------------------------------


def run_frame(data: Any, where: str, what: str = "run_metrics") -> pl.DataFrame:
    """Return ``data`` (a DataFrame, LazyFrame, or Scores whose ``runs`` is used) as a DataFrame."""
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    if isinstance(data, pl.DataFrame):
        return data
    if hasattr(data, "runs") and isinstance(getattr(data, "runs", None), pl.DataFrame):
        return data.runs
    msg = (
        f"{where}: {what} must be a Polars DataFrame or LazyFrame (or Scores, whose runs are used), "
        f"not {type(data).__name__}"
    )
    raise InvalidParameterError(msg)


def require_columns(frame: pl.DataFrame, columns: Sequence[str], where: str, what: str = "run_metrics") -> None:
    """Raise :class:`~mas_eval.errors.SchemaError` naming the missing columns and listing the others."""
    check_columns(frame.schema, columns, f"{where}: {what}")


def require_rows(frame: pl.DataFrame, where: str, what: str = "run_metrics", *, after: str = "") -> None:
    """Raise :class:`~mas_eval.errors.DataError` when ``frame`` has no rows (``after``: what removed them)."""
    if frame.height == 0:
        reason = f" {after}" if after else ""
        msg = f"{where}: {what} has no rows{reason}; there is nothing to draw"
        raise DataError(msg)


def numeric(frame: pl.DataFrame, name: str, where: str) -> pl.Expr:
    """Column ``name`` as Float64 with NaN as null; a column of another type is a SchemaError."""
    return numeric_value(frame.schema, name, f"{where}: column")


def _figure_png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


@functools.cache
def show_in_jupyter() -> None:
    """Let IPython display a returned Figure as PNG, as it does once ``%matplotlib inline`` ran.

    A Figure built without pyplot has no display of its own until a backend is chosen; this
    registers one only in a running IPython that has none for figures, and changes nothing else.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    if shell is None or not hasattr(shell, "display_formatter"):
        return
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        formatter.lookup_by_type(Figure)
    except KeyError:
        formatter.for_type(Figure, _figure_png)


def target_axes(ax: Axes | None, figsize: tuple[float, float] | None = None) -> tuple[Figure, Axes]:
    """``ax`` and its figure, or a new constrained-layout Figure (sized from rcParams) with one Axes."""
    if ax is not None:
        if not isinstance(ax, Axes):
            msg = f"ax must be a matplotlib Axes or None, not {type(ax).__name__}"
            raise InvalidParameterError(msg)
        return ax.figure, ax  # type: ignore[return-value]
    show_in_jupyter()
    fig = Figure(figsize=figsize or default_size(), layout="constrained")
    return fig, fig.add_subplot()


def default_size(min_height: float = 0.0) -> tuple[float, float]:
    """Return ``rcParams["figure.figsize"]`` read now (so :func:`paper_style` applies), at least ``min_height`` tall.

    >>> with paper_style(columns=1):
    ...     default_size(), default_size(min_height=4.0)
    ((3.5, 2.6), (3.5, 4.0))
    """
    width, height = mpl.rcParams["figure.figsize"]
    return float(width), max(float(height), min_height)


# --- Labels ---------------------------------------------------------------------------------------


def _range_text(low: float, high: float) -> str:
    return f"{low:g}–{high:g}"


def unit(name: str, table: str = "runs") -> str | None:
    """Return the unit of column ``name``: a physical unit, else the declared range (``0–1``), else None.

    >>> unit("cost_usd"), unit("dqs"), unit("no_such_column")
    ('USD', '0–1', None)
    """
    if name in _UNITS:
        return _UNITS[name]
    try:
        entry = registry.metric(table, name)
    except KeyError:
        return None
    if entry.low is not None and entry.high is not None:
        return _range_text(entry.low, entry.high)
    return None


def as_drawn(text: object) -> str:
    r"""Return a name from the data as a figure draws it: the name itself, on one line.

    Line breaks and tabs become spaces and other control characters escapes
    (:func:`~mas_eval.escaping.one_line`), and every ``$`` is escaped: matplotlib would read
    ``$x$`` as mathtext, and fail on ``$\frac{$``.

    >>> as_drawn("cost $5\n\x1b[31m")
    'cost \\$5 \\x1b[31m'
    """
    return one_line(str(text)).replace("$", r"\$")


def readable(name: str) -> str:
    """Return a column name as words: ``decision_confidence`` → ``Decision confidence``, ``dqs`` → ``DQS``.

    >>> readable("decision_confidence"), readable("dqs")
    ('Decision confidence', 'DQS')
    """
    return _NAMES.get(name, name.replace("_", " ").capitalize())


def axis_label(name: str, table: str = "runs", *, prefix: str = "", suffix: str = "") -> str:
    """Axis label of column ``name``, with its unit: ``Cost (USD)``, ``DQS (0–1)``, ``Processing time (s)``.

    ``prefix`` and ``suffix`` go around the name: ``Mean cost per run (USD)``.

    >>> axis_label("dqs"), axis_label("cost_usd"), axis_label("processing_time_seconds"), axis_label("tokens_used")
    ('DQS (0–1)', 'Cost (USD)', 'Processing time (s)', 'Tokens used')
    >>> axis_label("cost_usd", prefix="Mean ", suffix=" per run"), axis_label("dqs", prefix="Mean ")
    ('Mean cost per run (USD)', 'Mean DQS (0–1)')
    """
    text = (f"{prefix}{name_in_text(name)}" if prefix else readable(name)) + suffix
    found = unit(name, table)
    return f"{text} ({found})" if found else text


def name_in_text(name: str) -> str:
    """``name`` as it reads inside a sentence: ``DQS`` stays, ``Decision confidence`` → ``decision confidence``.

    >>> name_in_text("dqs"), name_in_text("decision_confidence")
    ('DQS', 'decision confidence')
    """
    words = readable(name)
    first = words.split()[0]
    return words if first.isupper() else words[:1].lower() + words[1:]


def difference_label(name: str, treatment: str, control: str, table: str = "runs") -> str:
    """Axis label of a difference in ``name``: ``DQS difference, mas − single (−1 to 1)``.

    >>> difference_label("cost_usd", "mas", "single"), difference_label("dqs", "mas", "single")
    ('Cost difference, mas − single (USD)', 'DQS difference, mas − single (−1 to 1)')
    """
    text = f"{readable(name)} difference, {as_drawn(treatment)} − {as_drawn(control)}"
    if name in _UNITS:
        return f"{text} ({_UNITS[name]})"
    try:
        entry = registry.metric(table, name)
    except KeyError:
        return text
    if entry.low is not None and entry.high is not None:
        span = entry.high - entry.low
        return f"{text} (−{span:g} to {span:g})"
    return text


def fitted(text: str, ax: Axes, axis: Literal["x", "y"] = "x") -> str:
    r"""Break ``text`` into lines that fit along ``ax``'s x (or y) axis, measured from the glyphs.

    An axis label naming two long systems (``mockllm/model debate − mockllm/single generate``) stays inside its figure.

    >>> from matplotlib.figure import Figure
    >>> ax = Figure(figsize=(2, 2)).add_subplot()
    >>> "\n" in fitted("Mean difference, a-rather-long-system-name − another-long-system-name", ax)
    True
    >>> fitted("Short", ax)
    'Short'
    """
    fig = ax.figure
    size = FontProperties(size=mpl.rcParams["axes.labelsize"]).get_size_in_points()
    position = ax.get_position()
    room = (position.width * fig.get_figwidth() if axis == "x" else position.height * fig.get_figheight()) * 72
    font = FontProperties(size=size)
    if _SAFETY * _text_width(text, font) <= room:
        return text
    per_char = _SAFETY * _text_width(text, font) / len(text)
    return textwrap.fill(text, width=max(int(room / per_char), 16), break_on_hyphens=False)


def thousands(n: int) -> str:
    """Return ``n`` with a comma between thousands.

    >>> thousands(4000), thousands(1234567)
    ('4,000', '1,234,567')
    """
    return f"{n:,}"


# --- Statistics -----------------------------------------------------------------------------------


def t_half_width(sd: np.ndarray, n: np.ndarray, level: float = 0.95) -> np.ndarray:
    r"""Half-width :math:`t_{(1+\text{level})/2,\,n-1}\, s/\sqrt{n}` of the t CI of a mean; NaN below n = 2.

    >>> t_half_width(np.array([1.0, 1.0]), np.array([4, 1])).round(4)
    array([1.5912,    nan])
    """
    sd, n = np.asarray(sd, dtype=float), np.asarray(n, dtype=float)
    ok = n >= 2
    out = np.full(sd.shape, np.nan)
    # ``stdtrit(df, p)`` is ``scipy.stats.t.ppf(p, df)`` without importing scipy.stats (docs/performance.md).
    out[ok] = stdtrit(n[ok] - 1, 0.5 + level / 2) * sd[ok] / np.sqrt(n[ok])
    return out


def mean_ci_table(frame: pl.DataFrame, keys: Sequence[str], value: str) -> pl.DataFrame:
    """Return per group of ``keys``: ``n``, ``mean``, ``sd`` and the 95% t CI ``low``/``high`` of ``value`` (non-null).

    >>> frame = pl.DataFrame({"system": ["mas"] * 3 + ["single"], "dqs": [0.5, 0.7, 0.9, 0.4]})
    >>> mean_ci_table(frame, ["system"], "dqs").select("system", "n", pl.col("mean", "low", "high").round(3)).rows()
    [('mas', 3, 0.7, 0.203, 1.197), ('single', 1, 0.4, None, None)]
    """
    summary = (
        frame.filter(pl.col(value).is_not_null())
        .group_by(keys)
        .agg(n=pl.len(), mean=pl.col(value).mean(), sd=pl.col(value).std())
        .sort(keys)
    )
    mean = summary["mean"].to_numpy()
    half = t_half_width(summary["sd"].fill_null(np.nan).to_numpy(), summary["n"].to_numpy())
    return summary.with_columns(
        low=pl.Series(mean - half, nan_to_null=True), high=pl.Series(mean + half, nan_to_null=True)
    )


# --- Legends --------------------------------------------------------------------------------------


def _text_width(text: str, font: FontProperties) -> float:
    """Width (points) of ``text`` in ``font``, measured from the glyphs (no renderer needed)."""
    return float(TextToPath().get_text_width_height_descent(text, font, ismath=False)[0])


def _legend_room(ax: Axes) -> tuple[float, float]:
    """Return the legend's font size and the width (points) a legend above ``ax`` may take."""
    size = FontProperties(size=mpl.rcParams["legend.fontsize"]).get_size_in_points()
    width = ax.figure.get_figwidth() * 72
    return size, ax.get_position().width * width + 0.15 * width


def _legend_columns(ax: Axes, labels: Sequence[str]) -> int:
    """Return the most columns (up to one row) whose estimated width fits the width ``ax`` may take."""
    size, room = _legend_room(ax)
    handle = (_HANDLE_LENGTH + _HANDLE_PAD) * size
    font = FontProperties(size=size)
    widths = [handle + _SAFETY * _text_width(label, font) for label in labels]
    # The fewest rows that fit, each as full as the others: 6 entries in 2 rows of 3, not 5 + 1.
    for rows in range(1, len(labels)):
        ncols = -(-len(labels) // rows)
        # Entries fill columns top to bottom; a column is as wide as its widest entry.
        columns = [max(widths[c * rows : (c + 1) * rows], default=0.0) for c in range(ncols)]
        if sum(columns) + (ncols - 1) * _COLUMN_SPACING * size <= room:
            return ncols
    return 1


def legend_above(ax: Axes, handles: Sequence[Any], *, title: str | None = None, ncols: int | None = None) -> Any:
    """Draw a frameless legend centred just above ``ax`` (constrained layout makes room for it).

    By default with as many columns as fit the width ``ax`` can take (one row if they all do); a
    title too long for that width is wrapped. The handles' labels and the title, which name
    systems and groups, are drawn as written (:func:`as_drawn`).
    """
    handles = list(handles)
    labels = [as_drawn(h.get_label()) for h in handles]
    if ncols is None:
        ncols = _legend_columns(ax, labels)
    if title:
        title = as_drawn(title)
        size, room = _legend_room(ax)
        per_char = _SAFETY * _text_width(title, FontProperties(size=size)) / len(title)
        title = textwrap.fill(title, width=max(int(room / per_char), 20), break_on_hyphens=False)
    legend = ax.legend(
        handles=handles,
        labels=labels,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.01),
        ncols=max(ncols, 1),
        borderaxespad=0.2,
        frameon=False,
        title=title,
        handlelength=_HANDLE_LENGTH,
        handletextpad=_HANDLE_PAD,
        columnspacing=_COLUMN_SPACING,
    )
    if title:
        legend.get_title().set_fontsize(mpl.rcParams["legend.fontsize"])
    return legend


def plain_log_axis(axis: Any) -> None:
    """Label a log-scale axis ``0.001, 0.01`` (not ``10^-3``); across at most 1.5 decades, also 2s and 5s."""

    def major(value: float, _: int) -> str:
        return f"{value:g}"

    def minor(value: float, _: int) -> str:
        low, high = sorted(axis.get_view_interval())
        if value <= 0 or low <= 0 or np.log10(high / low) > _MINOR_LABEL_DECADES:
            return ""
        mantissa = round(value / 10 ** np.floor(np.log10(value)), 6)
        return f"{value:g}" if mantissa in (2.0, 5.0) else ""

    axis.set_major_formatter(FuncFormatter(major))
    axis.set_minor_formatter(FuncFormatter(minor))
