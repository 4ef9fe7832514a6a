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

__all__ = ["Document", "ReportFigure", "ReportTable", "Section"]


@dataclass(frozen=True)
class ReportTable:
    """One table of a section: a short ``name`` (unique in the report), its caption and its rows."""

    name: str
    caption: str
    frame: pl.DataFrame


@dataclass(frozen=True)
class ReportFigure:
    """One figure of a section: a short ``name`` (its file name in Markdown), caption and figure."""

    name: str
    caption: str
    figure: Figure


@dataclass
class Section:
    """A titled part of the report.

    ``omitted`` is the one line saying why a section has no content (its inputs are absent);
    such a section has neither tables nor figures.
    """

    key: str
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[ReportTable] = field(default_factory=list)
    figures: list[ReportFigure] = field(default_factory=list)
    omitted: str | None = None


class Document(Protocol):
    """What a renderer reads of a report: its title, sections in reading order, and provenance."""

    title: str
    sections: list[Section]
    provenance: dict[str, Any]
