"""The parts a report is made of, and the shape every renderer reads: sections of text, tables, figures.

The renderers (HTML, Markdown, JSON, LaTeX) read a :class:`Document`, which
:class:`mas_eval.report.document.Report` is; they import nothing of the report that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["NOT_IN_DATA", "Document", "ReportFigure", "ReportTable", "Section", "arrange"]

#: The key and title of the closing section listing what the data could not show.
NOT_IN_DATA = ("not_in_data", "Not in this data")


@dataclass(frozen=True)
class ReportTable:
    """One table of a section: a short ``name`` (unique in the report), its caption and its rows.

    The frame keeps full precision; each renderer formats it for its reader.

    Examples
    --------
    >>> import polars as pl
    >>> table = ReportTable("usage", "Mean tokens per system", pl.DataFrame({"system": ["mas"], "tokens": [2310.5]}))
    >>> table.name, table.frame.row(0)
    ('usage', ('mas', 2310.5))
    """

    name: str
    caption: str
    frame: pl.DataFrame


@dataclass(frozen=True)
class ReportFigure:
    """One figure of a section: a short ``name`` (its file name in Markdown), caption, figure and data.

    ``data`` is the tidy frame it draws, when there is one; the JSON report carries it beside the figure's SVG.

    Examples
    --------
    >>> import polars as pl
    >>> from matplotlib.figure import Figure
    >>> points = pl.DataFrame({"x": [1.0, 2.0], "y": [0.5, 0.7]})
    >>> fig = Figure()
    >>> _ = fig.add_subplot().plot(points["x"], points["y"])
    >>> part = ReportFigure("trend", "y against x.", fig, data=points)
    >>> part.name, part.data.height, len(part.figure.axes)
    ('trend', 2, 1)
    """

    name: str
    caption: str
    figure: Figure
    data: pl.DataFrame | None = None


@dataclass
class Section:
    """A titled part of the report.

    ``omitted`` is the one line saying why a section has no content (its inputs are absent);
    such a section has neither tables nor figures, and is not shown: :func:`arrange` makes it a
    line of the closing "Not in this data" list. ``missing`` are the parts of a section with
    content that the data cannot show (no costs, no epochs), each one line, listed there too.
    ``items`` is a bulleted list shown after the text (that closing list's lines).

    Examples
    --------
    >>> shown = Section("efficiency", "Efficiency and cost", text=["Tokens per run."], missing=["no costs"])
    >>> absent = Section("calibration", "Calibration", omitted="no confidence column")
    >>> [s.key for s in arrange([shown, absent])[0]]
    ['efficiency', 'not_in_data']
    >>> arrange([shown, absent])[0][1].items
    ['Efficiency and cost: no costs.', 'Calibration: no confidence column.']
    """

    key: str
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[ReportTable] = field(default_factory=list)
    figures: list[ReportFigure] = field(default_factory=list)
    omitted: str | None = None
    missing: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def arrange(sections: list[Section]) -> tuple[list[Section], list[Section]]:
    """Arrange the sections a reader sees, the omitted ones and missing parts one line each of "Not in this data".

    That closing section comes before the provenance, and is never a heading over nothing.

    Arranged sections (those holding a "Not in this data" section already) come back as they are.

    >>> shown, absent = arrange([Section("a", "A", text=["x"], missing=["no costs"]), Section("b", "B", omitted="no b"),
    ...                          Section("provenance", "Provenance")])
    >>> [s.key for s in shown], [s.key for s in absent], shown[1].items
    (['a', 'not_in_data', 'provenance'], ['b'], ['A: no costs.', 'B: no b.'])
    """
    if any(section.key == NOT_IN_DATA[0] for section in sections):
        return list(sections), []
    shown = [section for section in sections if not section.omitted]
    absent = [section for section in sections if section.omitted]
    # In the sections' order: what each could not show, where the reader would have found it; sections
    # missing for one reason (no comparison: no forest either) share its line.
    reasons: dict[str, list[str]] = {}
    for section in sections:
        for line in [str(section.omitted)] if section.omitted else section.missing:
            reasons.setdefault(_sentence(line), []).append(section.title)
    lines = [f"{' and '.join(dict.fromkeys(titles))}: {reason}" for reason, titles in reasons.items()]
    if lines:
        closing = Section(*NOT_IN_DATA, items=lines)
        at = next((i for i, s in enumerate(shown) if s.key == "provenance"), len(shown))
        shown.insert(at, closing)
    return shown, absent


class Document(Protocol):
    """What a renderer reads of a report: its title, sections in reading order, and provenance."""

    title: str
    sections: list[Section]
    provenance: dict[str, Any]
