"""The report as Markdown, its figures written beside it as PNG (shown) and SVG (linked)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mas_eval.report.cells import Cells, cells

if TYPE_CHECKING:
    from mas_eval.report.parts import Document

__all__ = ["markdown_table", "render_markdown", "write_figures"]

#: Resolution of the PNG figures a Markdown report shows.
PNG_DPI = 200


def _cell(text: str) -> str:
    """A table cell: a ``|`` or a line break would end the cell or the row."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(shown: Cells) -> list[str]:
    """A pipe table, numbers right-aligned.

    >>> markdown_table(Cells(["system", "dqs"], [["a|b", "0.5"]], [False, True]))
    ['| system | dqs |', '| --- | ---: |', '| a\\\\|b | 0.5 |']
    """
    align = ["---:" if is_number else "---" for is_number in shown.numeric]
    lines = ["| " + " | ".join(map(_cell, shown.headers)) + " |", "| " + " | ".join(align) + " |"]
    return lines + ["| " + " | ".join(map(_cell, row)) + " |" for row in shown.rows]


def render_markdown(report: Document, figures: str) -> str:
    """The report as Markdown; its figures are linked as ``<figures>/<name>.png`` (and ``.svg``)."""
    provenance = report.provenance
    lines = [
        f"# {report.title}",
        "",
        f"mas_eval {provenance['mas_eval_version']}, {provenance['created_utc']}, "
        f"preset `{provenance.get('parameters', {}).get('preset', '')}`.",
        "",
    ]
    for section in report.sections:
        lines += [f"## {section.title}", ""]
        if section.omitted:
            lines += [f"*Omitted: {section.omitted}*", ""]
        for paragraph in section.text:
            lines += [paragraph, ""]
        for table in section.tables:
            lines += [f"*{table.caption}*", "", *markdown_table(cells(table)), ""]
        for figure in section.figures:
            lines += [
                f"![{figure.caption}]({figures}/{figure.name}.png)",
                "",
                f"*{figure.caption}* ([SVG]({figures}/{figure.name}.svg))",
                "",
            ]
    return "\n".join(lines)


def write_figures(report: Document, folder: Path) -> None:
    """Every figure of ``report`` into ``folder`` as ``<name>.png`` and ``<name>.svg``."""
    for section in report.sections:
        for figure in section.figures:
            figure.figure.savefig(folder / f"{figure.name}.png", dpi=PNG_DPI)
            figure.figure.savefig(folder / f"{figure.name}.svg", metadata={"Date": None})
