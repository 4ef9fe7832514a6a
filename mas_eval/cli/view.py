"""``mas-eval view``: the case viewer, one HTML page of the cases with each system's runs side by side.

Calls :func:`mas_eval.report.case_viewer` on a Scores folder (and the Dataset it scored, whose
transcripts the page shows) and writes the page with :meth:`~mas_eval.report.CaseViewer.write`.
The output path is checked before any work; the metric the cases are compared on is printed,
with why it was chosen, and the count of each discordance class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mas_eval.cli.common import OverwriteOpt, defaults_of
from mas_eval.cli.terminal import console, literal, steps
from mas_eval.report.viewer import CaseViewer, case_viewer, check_viewer_path
from mas_eval.storage.outputs import check_target

__all__ = ["view_command"]

#: The defaults of :func:`mas_eval.report.case_viewer`'s and :meth:`~mas_eval.report.CaseViewer.write`'s parameters.
_VIEWER = defaults_of(case_viewer)
_WRITE = defaults_of(CaseViewer.write)


def view_command(
    scores: Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The page (.html): one self-contained file.")],
    dataset: Annotated[
        Path | None,
        typer.Option(
            help="The scored Dataset: the runs' transcripts, tool calls and scorer results (without it the page "
            "shows the scores only)."
        ),
    ] = _VIEWER["dataset"],
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            "-m",
            help="Run column the cases are compared on (default: the outcomes' first pass/fail score, else a "
            "graded one; the command says which).",
        ),
    ] = _VIEWER["metric"],
    treatment: Annotated[str, typer.Option(help="Treatment system (difference = treatment - control).")] = _VIEWER[
        "treatment"
    ],
    control: Annotated[str, typer.Option(help="Control system.")] = _VIEWER["control"],
    pair_on: Annotated[str, typer.Option("--pair-on", help="Case column both systems ran.")] = _VIEWER["pair_on"],
    title: Annotated[
        str | None, typer.Option(help="The page's title (default: Cases: TREATMENT against CONTROL).")
    ] = _VIEWER["title"],
    overwrite: OverwriteOpt = _WRITE["overwrite"],
) -> None:
    """Write the case viewer: the cases where the systems differ first, their transcripts side by side."""
    inputs = [path for path in (scores, dataset) if path is not None]
    check_viewer_path(out)  # before the work, not after it
    check_target(out, overwrite=overwrite, inputs=inputs)
    with steps() as shown:
        shown.start("reading the scores and the Dataset")
        viewer = case_viewer(scores, dataset, metric, treatment, control, pair_on, title)
        shown.start("writing the page")
        viewer.write(out, overwrite=overwrite, inputs=inputs)
    console.print(literal(viewer.metric_line), highlight=False)
    console.print(literal(viewer.comparison), highlight=False)
    console.print(literal(f"{viewer.frame.height:,} cases ({viewer.described_counts()})"), highlight=False)
    size = out.stat().st_size / 2**20
    console.print(f"wrote the case viewer to {literal(out)} ({size:.1f} MB)", highlight=False)
