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
    """Return the format ``path``'s suffix names (one of :data:`FORMATS`), or an error saying which exist.

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

    Examples
    --------
    :func:`~mas_eval.report.build` makes one from scores; here one is made by hand, its provenance reduced
    to what the renderers print. A section with nothing to show becomes a line of "Not in this data":

    >>> import polars as pl
    >>> from mas_eval.report import Report, ReportTable, Section
    >>> means = pl.DataFrame({"system": ["mas", "single"], "dqs": [0.71, 0.64]})
    >>> report = Report(
    ...     "Pilot",
    ...     [Section("headline", "Headline", tables=[ReportTable("headline", "Mean dqs", means)]),
    ...      Section("cost", "Cost", omitted="the runs record no cost")],
    ...     {"mas_eval_version": "0.1.0", "created_utc": "2026-01-01T00:00:00+00:00"},
    ... )
    >>> [s.key for s in report.sections], [s.key for s in report.absent]
    (['headline', 'not_in_data'], ['cost'])
    >>> report.not_in_data
    ['Cost: the runs record no cost.']
    >>> report.tables["headline"].shape
    (2, 2)
    """

    title: str
    sections: list[Section]
    provenance: dict[str, Any]
    cases: str | None = None
    absent: list[Section] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Set the omitted sections apart from those shown (:func:`~mas_eval.report.parts.arrange`)."""
        shown, absent = arrange(self.sections)
        self.sections, self.absent = shown, [*self.absent, *absent]

    @validate_params({"key": [TEXT]})
    def section(self, key: str) -> Section:
        """Return the section ``key`` (``"comparison"``, ``"calibration"``, ...), shown or absent (``omitted``: why).

        Raises
        ------
        KeyError
            The report has no section ``key``; the message lists those it has.

        Examples
        --------
        >>> from mas_eval.report import Report, Section
        >>> report = Report("Pilot", [Section("headline", "Headline", text=["Two systems."]),
        ...                           Section("cost", "Cost", omitted="the runs record no cost")], {})
        >>> report.section("headline").text
        ['Two systems.']
        >>> report.section("cost").omitted
        'the runs record no cost'
        """
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
        """Return the report as one self-contained HTML page: CSS and figures (SVG) inline, nothing fetched.

        Text from the data is escaped: a system named ``<b>`` reads as written.

        Examples
        --------
        >>> import polars as pl
        >>> from mas_eval.report import Report, ReportTable, Section
        >>> ece = ReportTable("calibration", "ECE", pl.DataFrame({"system": ["mas", "single"], "ece": [0.05, 0.11]}))
        >>> report = Report("Pilot", [Section("calibration", "Calibration", tables=[ece])],
        ...                 {"mas_eval_version": "0.1.0", "created_utc": "2026-01-01T00:00:00+00:00"})
        >>> page = report.to_html()
        >>> page.startswith("<!DOCTYPE html>"), "<h1>Pilot</h1>" in page, page.count("<table")
        (True, True, 1)
        """
        from mas_eval.report.html import render_html

        return render_html(self)

    def to_json(self) -> str:
        """Return the report as JSON: every table in full precision, the sections' text, figures and provenance.

        The figures are SVG with the data they draw; :func:`load_json` reads the document back.

        Examples
        --------
        >>> import polars as pl
        >>> from mas_eval.report import Report, ReportTable, Section
        >>> ece = ReportTable("calibration", "ECE", pl.DataFrame({"system": ["mas", "single"], "ece": [0.05, 0.11]}))
        >>> report = Report("Pilot", [Section("calibration", "Calibration", tables=[ece])],
        ...                 {"mas_eval_version": "0.1.0", "created_utc": "2026-01-01T00:00:00+00:00"})
        >>> import json
        >>> document = json.loads(report.to_json())
        >>> list(document)
        ['schema_version', 'title', 'provenance', 'sections', 'tables']
        >>> document["tables"]["calibration"]["rows"]
        [['mas', 0.05], ['single', 0.11]]
        """
        from mas_eval.report.jsonfile import render_json

        return render_json(self)

    def to_latex(self) -> str:
        r"""Return the report's tables as booktabs ``table`` environments, ready to ``\input``.

        Only the tables a paper takes (:data:`~mas_eval.report.latex.PAPER_TABLES`) are written; the others
        are in the JSON and HTML.

        Examples
        --------
        >>> import polars as pl
        >>> from mas_eval.report import Report, ReportTable, Section
        >>> ece = ReportTable("calibration", "ECE", pl.DataFrame({"system": ["mas", "single"], "ece": [0.05, 0.11]}))
        >>> report = Report("Pilot", [Section("calibration", "Calibration", tables=[ece])],
        ...                 {"mas_eval_version": "0.1.0", "created_utc": "2026-01-01T00:00:00+00:00"})
        >>> print("\n".join(line for line in report.to_latex().splitlines() if "rule" in line or "&" in line))
        \toprule
        system & ece \\
        \midrule
        mas & 0.0500 \\
        single & 0.1100 \\
        \bottomrule
        """
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

        Examples
        --------
        >>> import polars as pl
        >>> from mas_eval.report import Report, ReportTable, Section
        >>> ece = ReportTable("calibration", "ECE", pl.DataFrame({"system": ["mas", "single"], "ece": [0.05, 0.11]}))
        >>> report = Report("Pilot", [Section("calibration", "Calibration", tables=[ece])],
        ...                 {"mas_eval_version": "0.1.0", "created_utc": "2026-01-01T00:00:00+00:00"})
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     written = report.write(Path(folder) / "pilot.md")
        ...     text = written.read_text()
        ...     made = sorted(path.name for path in Path(folder).iterdir())
        >>> made
        ['pilot.md', 'pilot_figures']
        >>> print(text[text.index("| system"):].strip())
        | system | ece |
        | --- | ---: |
        | mas | 0.0500 |
        | single | 0.1100 |
        """
        from mas_eval.report import writers

        suffix = check_report_path(path)
        return writers.write(self, Path(path), suffix, overwrite=overwrite, inputs=list(inputs))
