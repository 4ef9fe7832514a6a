"""Reports a researcher can send: the MAS-vs-baseline comparison as HTML, Markdown, JSON or LaTeX.

* :func:`build` — the report of a :class:`~mas_eval.Scores` (and optionally its comparisons
  and Dataset): sections for the dataset, the headline per system, the comparison table, a
  forest plot, distributions, paired differences, calibration, efficiency and cost, and the
  provenance.
* :class:`Report` — what :func:`build` returns; :meth:`Report.write` writes ``.html`` (one
  self-contained page), ``.md`` (figures beside it), ``.json`` (every table, full precision)
  or ``.tex`` (booktabs tables).
* :func:`load_json` — a report's JSON read back, tables as frames.

Matplotlib, SciPy and Jinja2 load with the first call, not with the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mas_eval._lazy import lazy_attributes

if TYPE_CHECKING:
    from mas_eval.report.content import build, system_means
    from mas_eval.report.document import FORMATS, Report, ReportFigure, ReportTable, Section
    from mas_eval.report.jsonfile import load_json

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "build": "mas_eval.report.content",
        "system_means": "mas_eval.report.content",
        "FORMATS": "mas_eval.report.document",
        "Report": "mas_eval.report.document",
        "ReportFigure": "mas_eval.report.document",
        "ReportTable": "mas_eval.report.document",
        "Section": "mas_eval.report.document",
        "load_json": "mas_eval.report.jsonfile",
    },
)

__all__ = ["FORMATS", "Report", "ReportFigure", "ReportTable", "Section", "build", "load_json", "system_means"]
