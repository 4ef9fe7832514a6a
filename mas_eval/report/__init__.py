"""Reports a researcher can send: the MAS-vs-baseline comparison as HTML, Markdown, JSON or LaTeX.

* :func:`build` — the report of a :class:`~mas_eval.Scores` (and optionally its comparisons
  and Dataset): sections for the dataset, the headline per system, the comparison table, a
  forest plot, distributions, paired differences, calibration, efficiency and cost, the
  differential diagnosis, the answer quality, the logged outcomes (led by their figures), whether
  the extra cost is worth it and how the agents worked, when the scores have them, then what the
  data could not show (one line each) and the provenance.
* :func:`chosen_columns` — what a report headlines and compares when told nothing: the columns of the
  metric families with values in these runs (:class:`~mas_eval.metrics.family.Chosen`, with a sentence saying so).
* :class:`Report` — what :func:`build` returns; :meth:`Report.write` writes ``.html`` (one
  self-contained page), ``.md`` (figures beside it), ``.json`` (every table, full precision)
  or ``.tex`` (booktabs tables).
* :func:`load_json` — a report's JSON read back, tables as frames.

The cases behind a comparison:

* :func:`cases` — one row per case: each system's score, tokens and cost, and its discordance
  class (:data:`DISCORDANCE`: McNemar's *b* and *c* cases first), for Jupyter;
* :func:`write_cases` — the case viewer: one self-contained HTML page of those cases, each
  system's transcripts side by side (:func:`case_viewer` gathers it as a :class:`CaseViewer`;
  :func:`viewer_link` is a report's link to it, :attr:`Report.cases`).

MedAISure's benchmark report, in its own schema:

* :class:`BenchmarkReport` — scores of one model across tasks with their raw results, written
  as ``.json`` (MedAISure reads it), ``.md`` or ``.html``; :func:`read_medaisure_report`
  reads MedAISure's own report file (placeholder results kept and flagged).
* :func:`combined_score` — the weighted combined score per task and overall
  (:class:`CombinedScore`), from category aggregates (:func:`category_scores`,
  :data:`DEFAULT_CATEGORIES`) of per-task means (:func:`task_means`, :func:`overall_means`);
  :data:`DEFAULT_WEIGHTS` are the weights the MAS-vs-baseline report uses.

Matplotlib, SciPy and Jinja2 load with the first call, not with the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mas_eval._lazy import lazy_attributes

if TYPE_CHECKING:
    from mas_eval.report.benchmark import BenchmarkReport, DetailedResult, read_medaisure_report
    from mas_eval.report.combined import (
        DEFAULT_CATEGORIES,
        DEFAULT_WEIGHTS,
        CombinedScore,
        category_scores,
        combined_score,
        overall_means,
        task_means,
    )
    from mas_eval.report.content import build, chosen_columns
    from mas_eval.report.discordance import DISCORDANCE, cases, choose_metric
    from mas_eval.report.document import FORMATS, Report, ReportFigure, ReportTable, Section
    from mas_eval.report.jsonfile import load_json
    from mas_eval.report.tables import system_means
    from mas_eval.report.viewer import CaseViewer, case_viewer, viewer_link, write_cases

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "build": "mas_eval.report.content",
        "chosen_columns": "mas_eval.report.content",
        "system_means": "mas_eval.report.tables",
        "FORMATS": "mas_eval.report.document",
        "Report": "mas_eval.report.document",
        "ReportFigure": "mas_eval.report.document",
        "ReportTable": "mas_eval.report.document",
        "Section": "mas_eval.report.document",
        "load_json": "mas_eval.report.jsonfile",
        **dict.fromkeys(("DISCORDANCE", "cases", "choose_metric"), "mas_eval.report.discordance"),
        **dict.fromkeys(("CaseViewer", "case_viewer", "viewer_link", "write_cases"), "mas_eval.report.viewer"),
        **dict.fromkeys(("BenchmarkReport", "DetailedResult", "read_medaisure_report"), "mas_eval.report.benchmark"),
        **dict.fromkeys(
            (
                "DEFAULT_CATEGORIES",
                "DEFAULT_WEIGHTS",
                "CombinedScore",
                "category_scores",
                "combined_score",
                "overall_means",
                "task_means",
            ),
            "mas_eval.report.combined",
        ),
    },
)

__all__ = [
    "DEFAULT_CATEGORIES",
    "DEFAULT_WEIGHTS",
    "DISCORDANCE",
    "FORMATS",
    "BenchmarkReport",
    "CaseViewer",
    "CombinedScore",
    "DetailedResult",
    "Report",
    "ReportFigure",
    "ReportTable",
    "Section",
    "build",
    "case_viewer",
    "cases",
    "category_scores",
    "choose_metric",
    "chosen_columns",
    "combined_score",
    "load_json",
    "overall_means",
    "read_medaisure_report",
    "system_means",
    "task_means",
    "viewer_link",
    "write_cases",
]
