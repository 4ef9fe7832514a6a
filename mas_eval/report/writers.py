"""Write a report (:class:`~mas_eval.report.parts.Document`) to a file, atomically, in the format its suffix names."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mas_eval.storage.outputs import Kind, atomic_file, atomic_outputs, check_outputs

if TYPE_CHECKING:
    from mas_eval.report.parts import Document

__all__ = ["check_targets", "figures_folder", "write"]


def figures_folder(report: Path) -> Path:
    """Return where a report's figures go: ``<stem>_figures/`` beside a Markdown report, ``<stem>_pdf_figures/``.

    The second is a LaTeX report's, apart, so that a report written as both keeps both.

    >>> figures_folder(Path("out/pilot.md")).as_posix(), figures_folder(Path("out/pilot.tex")).as_posix()
    ('out/pilot_figures', 'out/pilot_pdf_figures')
    """
    kind = "_pdf" if report.suffix.lower() == ".tex" else ""
    return report.with_name(f"{report.stem}{kind}_figures")


def _parts(target: Path) -> list[tuple[Path, Kind]]:
    """Return the outputs a report at ``target`` is made of: the file, and for Markdown and LaTeX its figures folder."""
    if target.suffix.lower() in (".md", ".tex"):
        return [(target, "file"), (figures_folder(target), "folder")]
    return [(target, "file")]


def check_targets(target: Path, *, overwrite: bool, inputs: list[str | Path]) -> None:
    """Check every output of a report at ``target`` before the report is built (:func:`check_outputs`).

    Raises
    ------
    OutputError, OutputExistsError
        One of them exists and ``overwrite`` is false, is or lies inside an input, cannot be
        written there, or is a folder where the report's file goes.
    """
    check_outputs(*_parts(target), overwrite=overwrite, inputs=inputs)


def write(report: Document, target: Path, suffix: str, *, overwrite: bool, inputs: list[str | Path]) -> Path:
    """Render ``report`` as ``suffix`` and write it to ``target`` (and, for Markdown, its figures)."""
    if suffix in (".md", ".tex"):
        return _write_with_figures(report, target, suffix, overwrite=overwrite, inputs=inputs)
    # The renderers load with the first report of their format (Jinja2 for HTML).
    if suffix == ".html":
        from mas_eval.report.html import render_html as render
    else:
        from mas_eval.report.jsonfile import render_json as render
    text = render(report)
    with atomic_file(target, overwrite=overwrite, inputs=inputs) as staging:
        staging.write_text(text, encoding="utf-8")
    return target


def _write_with_figures(
    report: Document, target: Path, suffix: str, *, overwrite: bool, inputs: list[str | Path]
) -> Path:
    """Markdown (figures as PNG and SVG) or LaTeX (figures as PDF), the figures in a folder beside the file."""
    from mas_eval.report.latex import render_latex
    from mas_eval.report.markdown import render_markdown, write_figures

    folder = figures_folder(target)
    # One output of two parts: both are checked before either is written, and they replace what
    # is there together or not at all (a report whose path is a folder leaves the figures as they were).
    with atomic_outputs((target, "file"), (folder, "folder"), overwrite=overwrite, inputs=inputs) as (text, figures):
        if suffix == ".md":
            write_figures(report, figures)
            text.write_text(render_markdown(report, folder.name), encoding="utf-8")
        else:
            text.write_text(render_latex(report, folder.name), encoding="utf-8")
            write_figures(report, figures, formats=("pdf",))
    return target
