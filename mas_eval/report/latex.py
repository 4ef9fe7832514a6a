r"""The report's tables as LaTeX booktabs ``table`` environments, ready to ``\input``.

Needs ``\usepackage{booktabs}`` in the preamble. Every cell and caption is escaped: a
system or task name cannot break the document. Line breaks and tabs in a name become spaces
and other control characters escapes (:func:`~mas_eval.escaping.one_line`), so every row is one
line (a blank line would end the paragraph in the middle of a table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mas_eval.escaping import typeset_text
from mas_eval.report.cells import cells

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
    "answer_comparison", "answer_combined", "outcome_pass_rates", "outcome_comparison",
)  # fmt: skip


def escape_latex(text: str) -> str:
    r"""``text`` on one line as pdfLaTeX takes it (:func:`~mas_eval.escaping.typeset_text`), LaTeX's special
    characters escaped.

    >>> print(escape_latex("a_b & 50% #1 \\ {x}"))
    a\_b \& 50\% \#1 \textbackslash{} \{x\}
    >>> print(escape_latex("a\n\nb\x1b"))
    a  b\textbackslash{}x1b
    """
    return typeset_text(text).translate(_TABLE)


def _row(cells: list[str]) -> str:
    r"""One table row, its cells escaped. A row starting with ``[`` or ``*`` starts with ``{}``:
    else the ``\\`` ending the row before (or ``\midrule``) would read it as its own argument.

    >>> print(_row(["[draft]", "0.5"]))
    {}[draft] & 0.5 \\
    """
    line = " & ".join(escape_latex(cell) for cell in cells)
    return ("{}" if line.startswith(("[", "*")) else "") + line + r" \\"


def _label(name: str) -> str:
    return "tab:mas-eval-" + name.replace("_", "-")


def render_latex(report: Document) -> str:
    """The tables of :data:`PAPER_TABLES` that ``report`` has, as booktabs tables."""
    provenance = report.provenance
    lines = [
        f"% {escape_latex(report.title)}: tables written by mas_eval {provenance['mas_eval_version']}, "
        f"{provenance['created_utc']}.",
        r"% Needs \usepackage{booktabs}. Labels: " + ", ".join(_label(n) for n in PAPER_TABLES if n in report.tables),
        "",
    ]
    for section in report.sections:
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
