"""The report as Markdown, its figures written beside it as PNG (shown) and SVG (linked).

Every text the report holds (its title, section titles, paragraphs, captions, table cells) is
plain text, and is written by :func:`~mas_eval.escaping.markdown_text`: a ``<script>`` in a
system's name is shown, never run, and a ``|`` or a line break in a task's name cannot break a
table. The figures' file names are URL-encoded in their links.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from mas_eval.escaping import markdown_text
from mas_eval.report.cells import Cells, cells
from mas_eval.report.parts import arrange
from mas_eval.report.svg import figure_svg

if TYPE_CHECKING:
    from mas_eval.report.parts import Document

__all__ = ["markdown_table", "render_markdown", "write_figures"]

#: Resolution of the PNG figures a Markdown report shows.
PNG_DPI = 200


def markdown_table(shown: Cells) -> list[str]:
    r"""Return a pipe table, numbers right-aligned, the headers and text cells escaped.

    Text is escaped by :func:`~mas_eval.escaping.markdown_text`; the numbers, which :mod:`mas_eval.formatting`
    wrote, are kept as they read (``[0.01, 0.2]``, ``0.011 *``).

    >>> markdown_table(Cells(["system", "dqs"], [["a|b", "0.5"]], [False, True]))
    ['| system | dqs |', '| --- | ---: |', '| a\\|b | 0.5 |']
    """
    align = ["---:" if is_number else "---" for is_number in shown.numeric]
    lines = ["| " + " | ".join(map(markdown_text, shown.headers)) + " |", "| " + " | ".join(align) + " |"]
    rows = [[cell if number else markdown_text(cell) for cell, number in zip(row, shown.numeric, strict=True)]
            for row in shown.rows]  # fmt: skip
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def render_markdown(report: Document, figures: str) -> str:
    """Render the report as Markdown; its figures are linked as ``<figures>/<name>.png`` (and ``.svg``)."""
    provenance = report.provenance
    preset = str(provenance.get("parameters", {}).get("preset", ""))
    lines = [
        f"# {markdown_text(report.title)}",
        "",
        markdown_text(f"mas_eval {provenance['mas_eval_version']}, {provenance['created_utc']}, preset {preset}."),
        "",
    ]
    for section in arrange(report.sections)[0]:
        lines += [f"## {markdown_text(section.title)}", ""]
        for paragraph in section.text:
            lines += [markdown_text(paragraph), ""]
        if section.items:
            lines += [*(f"- {markdown_text(item)}" for item in section.items), ""]
        for figure in section.figures:
            caption, link = markdown_text(figure.caption), quote(f"{figures}/{figure.name}")
            lines += [f"![{caption}]({link}.png)", "", f"*{caption}* ([SVG]({link}.svg))", ""]
        for table in section.tables:
            lines += [f"*{markdown_text(table.caption)}*", "", *markdown_table(cells(table)), ""]
    return "\n".join(lines)


def write_figures(report: Document, folder: Path, formats: tuple[str, ...] = ("png", "svg")) -> None:
    """Every figure of ``report`` into ``folder`` as ``<name>.png`` and ``<name>.svg`` (``formats``; ``"pdf"`` too).

    Control characters that a name put in an SVG's artist ids are written as escapes (XML
    allows none of them). The PDF leaves out its creation date, so the same figure gives the same bytes.
    """
    for section in arrange(report.sections)[0]:
        for figure in section.figures:
            if "png" in formats:
                figure.figure.savefig(folder / f"{figure.name}.png", dpi=PNG_DPI)
            if "svg" in formats:  # the SVG the HTML page inlines, drawn once for both
                (folder / f"{figure.name}.svg").write_text(figure_svg(figure), encoding="utf-8")
            if "pdf" in formats:
                figure.figure.savefig(folder / f"{figure.name}.pdf", format="pdf", metadata={"CreationDate": None})
