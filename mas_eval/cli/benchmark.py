"""``mas-eval benchmark-report`` and ``combined-score``: a benchmark report in MedAISure's schema.

Both read a ``BenchmarkReport`` JSON (:func:`~mas_eval.report.read_medaisure_report`: MedAISure's
own file, or one these commands wrote) and write it as ``.json``, ``.md``, ``.html`` or ``.csv``
(MedAISure's CSV tables, with ``--tables``, into a folder);
``combined-score`` first adds the weighted combined score of its categories (the MedAISure
metrics overview's, :meth:`~mas_eval.report.BenchmarkReport.add_combined_score`). A benchmark
report holds one model's scores per task, not runs: it is no Dataset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mas_eval.cli.common import OverwriteOpt, defaults_of, flag
from mas_eval.cli.terminal import console, literal, print_frame
from mas_eval.report.benchmark import BenchmarkReport, check_benchmark_path, read_medaisure_report
from mas_eval.storage.outputs import check_target

__all__ = ["benchmark_report_command", "combined_score_command"]

#: The defaults of the methods the commands call.
_WRITE = defaults_of(BenchmarkReport.write)
_COMBINED = defaults_of(BenchmarkReport.add_combined_score)

ReportArg = Annotated[
    Path,
    typer.Argument(
        help="A BenchmarkReport JSON: MedAISure's, or one written by mas-eval benchmark-report/combined-score."
    ),
]


def _warn_placeholders(report: BenchmarkReport) -> None:
    """Name the tasks whose scores are MedAISure's stand-ins for a failed evaluation."""
    if report.flagged_results:
        tasks = ", ".join(report.placeholder_tasks) or "none"
        line = (
            f"{len(report.flagged_results):,} placeholder result(s) kept and flagged (the evaluation failed); "
            f"tasks with only placeholders, whose scores are stand-ins: {tasks}"
        )
        console.print(f"[yellow]warning: {literal(line)}[/]", highlight=False, soft_wrap=True)


def benchmark_report_command(
    report: ReportArg,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The report to write: .json, .md, .html or .csv (the task scores)."),
    ],
    tables: Annotated[
        Path | None,
        typer.Option(
            "--tables",
            help="Also write MedAISure's CSV tables (overall_scores.csv, task_scores.csv, detailed_*.csv, "
            "combined_sources.csv) into this folder.",
        ),
    ] = None,
    overwrite: OverwriteOpt = _WRITE["overwrite"],
) -> None:
    """Write a benchmark report (MedAISure's report JSON) as .json, .md, .html or .csv, placeholders flagged."""
    check_benchmark_path(out)  # before the work, not after it
    check_target(out, overwrite=overwrite, inputs=[report])
    if tables is not None:
        check_target(tables, overwrite=overwrite, inputs=[report, out])
    document = read_medaisure_report(report)
    document.write(out, overwrite=overwrite, inputs=[report])
    line = (
        f"wrote the benchmark report of {document.model_id} ({len(document.task_scores):,} task(s), "
        f"{len(document.detailed_results):,} detailed result(s)) to {out}"
    )
    console.print(literal(line), highlight=False, soft_wrap=True)
    if tables is not None:
        document.write_csv_tables(tables, overwrite=overwrite, inputs=[report, out])
        console.print(f"wrote its CSV tables to {literal(tables)}", highlight=False)
    _warn_placeholders(document)


def combined_score_command(
    report: ReportArg,
    weights: Annotated[
        str,
        typer.Option(
            help="Weight per category (or metric), key=value,...: e.g. "
            "diagnostics=0.4,safety=0.3,communication=0.2,summarization=0.1. Finite, >= 0, positive sum."
        ),
    ],
    no_renormalize: Annotated[
        bool,
        flag(
            "--no-renormalize",
            help="Divide by the sum of all weights, so a category missing from a task counts 0 "
            "(default: renormalise over the task's present categories).",
        ),
    ] = not _COMBINED["renormalize_missing"],
    name: Annotated[str, typer.Option(help="Metric name of the combined score.")] = _COMBINED["metric_name"],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the report with the combined score added (.json, .md, .html, .csv)."),
    ] = None,
    overwrite: OverwriteOpt = _WRITE["overwrite"],
) -> None:
    """Print the weighted combined score of a report's categories, per task and overall (MedAISure's overview)."""
    from mas_eval.report.combined import format_weights, parse_weights

    parsed = parse_weights(weights)
    if out is not None:  # before the work, not after it
        check_benchmark_path(out)
        check_target(out, overwrite=overwrite, inputs=[report])
    document = read_medaisure_report(report)
    result = document.add_combined_score(parsed, name, renormalize_missing=not no_renormalize)
    how = "renormalised over present categories" if not no_renormalize else "missing categories count 0"
    table = result.table(name)
    # Categories no task has take width from the ones it has; they are named below the table instead.
    absent = [c for c in result.weights if table.height and table[c].null_count() == table.height]
    print_frame(
        table.drop(*absent, *(f"{c} source" for c in absent)), title=f"{name} ({format_weights(result.weights)}; {how})"
    )
    if absent:
        console.print(f"no task has a value of: {literal(', '.join(absent))}", highlight=False, soft_wrap=True)
    overall = "none (no task has a weighted category)" if result.overall is None else f"{result.overall:.4f}"
    console.print(f"{literal(name)} overall: {overall} over {len(result.per_task):,} task(s)", highlight=False)
    if result.missing:
        line = f"no weighted category, so no {name}, in task(s): {', '.join(result.missing)}"
        console.print(f"[yellow]warning: {literal(line)}[/]", highlight=False, soft_wrap=True)
    _warn_placeholders(document)
    if out is not None:
        document.write(out, overwrite=overwrite, inputs=[report])
        console.print(f"wrote the report to {literal(out)}", highlight=False)
