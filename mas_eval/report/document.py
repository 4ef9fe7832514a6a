"""What a report is made of: sections holding text, tables and figures, and its provenance.

:func:`mas_eval.report.build` fills a :class:`Report`; the renderers write it as HTML,
Markdown, JSON or LaTeX (:meth:`Report.write` picks one by the path's suffix). Tables keep
their full-precision frames: each renderer formats them for its reader, and the JSON keeps
every digit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mas_eval.constraints import PATH, PATH_LIST, TEXT, Boolean, validate_params
from mas_eval.report.parts import ReportFigure, ReportTable, Section, arrange
from mas_eval.storage.outputs import check_suffix

if TYPE_CHECKING:
    from collections.abc import Iterable


__all__ = ["FORMATS", "Report", "ReportFigure", "ReportTable", "Section", "check_report_path"]

#: Report formats, by suffix.
FORMATS = (".html", ".md", ".json", ".tex")


def check_report_path(path: str | Path) -> str:
    """The format ``path``'s suffix names (one of :data:`FORMATS`), or an error saying which exist.

    >>> check_report_path("out/report.HTML")
    '.html'
    """
    return check_suffix(path, FORMATS, "a report")


@dataclass
class Report:
    """A MAS-vs-baseline report, ready to be written in any of :data:`FORMATS`.

    Attributes
    ----------
    title
        The report's title.
    sections
        In reading order, each with something to show; the closing ``not_in_data`` section ("Not in
        this data") lists, one line each, the sections and parts the data could not fill.
    provenance
        Package version, time, preset and every parameter, the inputs' SHA-256 and the call.
    cases
        The link (an ``href`` relative to the report, :func:`~mas_eval.report.viewer_link`) to the case
        viewer written beside it (:func:`~mas_eval.report.write_cases`); the HTML report shows it
        under its title. ``None``: no link.
    absent
        The sections the data could not fill, each with its ``omitted`` reason (not shown: a line of
        ``not_in_data`` each).
    """

    title: str
    sections: list[Section]
    provenance: dict[str, Any]
    cases: str | None = None
    absent: list[Section] = field(default_factory=list)

    def __post_init__(self) -> None:
        shown, absent = arrange(self.sections)
        self.sections, self.absent = shown, [*self.absent, *absent]

    @validate_params({"key": [TEXT]})
    def section(self, key: str) -> Section:
        """The section ``key`` (``"comparison"``, ``"calibration"``, ...), shown or absent (``omitted`` says why)."""
        for section in (*self.sections, *self.absent):
            if section.key == key:
                return section
        msg = f"the report has no section {key!r}; it has: {', '.join(s.key for s in self.sections)}"
        raise KeyError(msg)

    @property
    def not_in_data(self) -> list[str]:
        """The lines of the closing "Not in this data" list: what the data could not show, and why."""
        return next((s.items for s in self.sections if s.key == "not_in_data"), [])

    @property
    def tables(self) -> dict[str, pl.DataFrame]:
        """Every table of every section, by name."""
        return {table.name: table.frame for section in self.sections for table in section.tables}

    def to_html(self) -> str:
        """One self-contained HTML page: CSS and figures (SVG) inline, nothing fetched."""
        from mas_eval.report.html import render_html

        return render_html(self)

    def to_json(self) -> str:
        """Every table in full precision, the sections' text, the figures (SVG and the data they draw) and the
        provenance (:func:`load_json` reads it)."""
        from mas_eval.report.jsonfile import render_json

        return render_json(self)

    def to_latex(self) -> str:
        """The report's tables as booktabs ``table`` environments, ready to ``\\input``."""
        from mas_eval.report.latex import render_latex

        return render_latex(self)

    @validate_params({"path": [PATH], "overwrite": [Boolean()], "inputs": [PATH_LIST]})
    def write(self, path: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path] = ()) -> Path:
        """Write the report to ``path`` in the format its suffix names (:data:`FORMATS`).

        Markdown writes its figures as PNG and SVG into ``<stem>_figures/`` beside the file, LaTeX as PDF
        into ``<stem>_pdf_figures/`` (its ``figure`` environments include them); HTML inlines them as SVG,
        JSON holds their SVG and data.
        Everything is written atomically: a failure leaves no partial file. ``inputs`` are
        paths the report must not overwrite (its own inputs).
        """
        from mas_eval.report import writers

        suffix = check_report_path(path)
        return writers.write(self, Path(path), suffix, overwrite=overwrite, inputs=list(inputs))
