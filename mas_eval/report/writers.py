"""Write a report (:class:`~mas_eval.report.parts.Document`) to a file, atomically, in the format its suffix names."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mas_eval.storage.outputs import atomic_directory, atomic_file, check_target

if TYPE_CHECKING:
    from mas_eval.report.parts import Document

__all__ = ["figures_folder", "write"]


def figures_folder(markdown: Path) -> Path:
    """Where a Markdown report's figures go: ``<stem>_figures/`` beside it."""
    return markdown.with_name(f"{markdown.stem}_figures")


def write(report: Document, target: Path, suffix: str, *, overwrite: bool, inputs: list[str | Path]) -> Path:
    """Render ``report`` as ``suffix`` and write it to ``target`` (and, for Markdown, its figures)."""
    if suffix == ".md":
        return _write_markdown(report, target, overwrite=overwrite, inputs=inputs)
    # The renderers load with the first report of their format (Jinja2 for HTML).
    if suffix == ".html":
        from mas_eval.report.html import render_html as render
    elif suffix == ".json":
        from mas_eval.report.jsonfile import render_json as render
    else:
        from mas_eval.report.latex import render_latex as render
    text = render(report)
    with atomic_file(target, overwrite=overwrite, inputs=inputs) as staging:
        staging.write_text(text, encoding="utf-8")
    return target


def _write_markdown(report: Document, target: Path, *, overwrite: bool, inputs: list[str | Path]) -> Path:
    from mas_eval.report.markdown import render_markdown, write_figures

    folder = figures_folder(target)
    # Both targets are checked before either is written, so a refusal leaves nothing behind.
    check_target(target, overwrite=overwrite, inputs=inputs)
    check_target(folder, overwrite=overwrite, inputs=inputs)
    text = render_markdown(report, folder.name)
    with atomic_directory(folder, overwrite=overwrite, inputs=inputs) as staging:
        write_figures(report, staging)
    with atomic_file(target, overwrite=overwrite, inputs=inputs) as staging:
        staging.write_text(text, encoding="utf-8")
    return target
