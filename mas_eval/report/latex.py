r"""The report's tables as LaTeX booktabs ``table`` environments and its figures as ``figure`` environments.

The output is ready to ``\input``.

Needs ``\usepackage{booktabs}`` (and ``graphicx`` for the figures, written as PDF beside the file by
:meth:`~mas_eval.report.Report.write`) in the preamble. Every cell and caption is escaped: a
system or task name cannot break the document. Line breaks and tabs in a name become spaces
and other control characters escapes (:func:`~mas_eval.escaping.one_line`), so every row is one
line (a blank line would end the paragraph in the middle of a table).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mas_eval.escaping import typeset_text
from mas_eval.report.cells import cells
from mas_eval.report.parts import arrange

if TYPE_CHECKING:
    from mas_eval.report.parts import Document

__all__ = ["escape_latex", "render_latex"]

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "−": "$-$",
    "≤": r"$\leq$",
    "×": r"$\times$",
}
_TABLE = str.maketrans(_SPECIAL)

#: The tables a paper takes from a report (the others are in the JSON and HTML).
PAPER_TABLES = (
    "comparison", "headline", "calibration", "diagnosis_labels", "diagnosis_scores", "answer_means",
    "answer_comparison", "answer_combined", "outcome_pass_rates", "outcome_comparison", "cost_effectiveness",
    "process_profile",
)  # fmt: skip


def escape_latex(text: str) -> str:
    r"""Return ``text`` on one line as pdfLaTeX takes it, LaTeX's special characters escaped.

    The text is first made typesettable by :func:`~mas_eval.escaping.typeset_text`.

    >>> print(escape_latex("a_b & 50% #1 \\ {x}"))
    a\_b \& 50\% \#1 \textbackslash{} \{x\}
    >>> print(escape_latex("a\n\nb\x1b"))
    a  b\textbackslash{}x1b
    """
    return typeset_text(text).translate(_TABLE)


def _row(cells: list[str]) -> str:
    r"""Return one table row, its cells escaped.

    A row starting with ``[`` or ``*`` starts with ``{}``: else the ``\\`` ending the row before (or
    ``\midrule``) would read it as its own argument.

    >>> print(_row(["[draft]", "0.5"]))
    {}[draft] & 0.5 \\
    """
    line = " & ".join(escape_latex(cell) for cell in cells)
    return ("{}" if line.startswith(("[", "*")) else "") + line + r" \\"


def _label(name: str) -> str:
    return "tab:mas-eval-" + name.replace("_", "-")


#: A folder name LaTeX reads as a path as written: anything else (a brace, a %, a control character from the
#: report's file name) cannot go in \includegraphics, and is left to the reader to rename.
_PATH = re.compile(r"[A-Za-z0-9._-]+")


def _figure(name: str, caption: str, folder: str) -> list[str]:
    """Return a ``figure`` environment including ``<folder>/<name>.pdf`` across the text width.

    It is commented out, with why, when the folder's name is not a path LaTeX reads as written.
    """
    if not _PATH.fullmatch(folder) or not _PATH.fullmatch(name):
        return [
            f"% Figure {escape_latex(name)}: {escape_latex(caption)}",
            f"% It is {escape_latex(name)}.pdf in the folder {escape_latex(folder)} beside this file, whose name LaTeX "
            "cannot read as a path: rename the folder (letters, digits, '.', '_', '-') and include it.",
            "",
        ]
    return [
        r"\begin{figure}[htbp]",
        r"\centering",
        rf"\includegraphics[width=\linewidth]{{{folder}/{name}.pdf}}",
        rf"\caption{{{escape_latex(caption)}}}",
        rf"\label{{fig:mas-eval-{name.replace('_', '-')}}}",
        r"\end{figure}",
        "",
    ]


def render_latex(report: Document, figures: str | None = None) -> str:
    """Render the tables of :data:`PAPER_TABLES` that ``report`` has, as booktabs tables, each section's figures first.

    ``figures``: the folder (relative to the ``.tex`` file) holding each figure as ``<name>.pdf``
    (:func:`~mas_eval.report.markdown.write_figures` writes them); ``None`` leaves the figures out.
    """
    provenance = report.provenance
    sections = arrange(report.sections)[0]
    names = {table.name for section in sections for table in section.tables}
    needs = r"\usepackage{booktabs}" + (r" and \usepackage{graphicx}" if figures is not None else "")
    lines = [
        f"% {escape_latex(report.title)}: tables written by mas_eval {provenance['mas_eval_version']}, "
        f"{provenance['created_utc']}.",
        f"% Needs {needs}. Labels: " + ", ".join(_label(n) for n in PAPER_TABLES if n in names),
        "",
    ]
    for section in sections:
        if figures is not None:
            for figure in section.figures:
                lines += _figure(figure.name, figure.caption, figures)
        for table in section.tables:
            if table.name not in PAPER_TABLES:
                continue
            shown = cells(table)
            spec = "".join("r" if number else "l" for number in shown.numeric)
            lines += [
                r"\begin{table}[htbp]",
                r"\centering",
                r"\small",
                r"\setlength{\tabcolsep}{4pt}",
                rf"\caption{{{escape_latex(table.caption)}}}",
                rf"\label{{{_label(table.name)}}}",
                rf"\begin{{tabular}}{{{spec}}}",
                r"\toprule",
                _row(shown.headers),
                r"\midrule",
                *(_row(row) for row in shown.rows),
                r"\bottomrule",
                r"\end{tabular}",
                r"\end{table}",
                "",
            ]
    return "\n".join(lines)
