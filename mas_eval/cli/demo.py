"""``mas-eval demo``, what `make demo` runs: the main job on the bundled sample, printed and written out."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import polars as pl
import typer
from rich.console import Console

from mas_eval.cli.common import defaults_of
from mas_eval.cli.terminal import console as terminal
from mas_eval.cli.terminal import literal, print_comparisons, print_frame, print_system_means
from mas_eval.ingest import ingest_jsonl
from mas_eval.report.answer_quality import OVERALL, answer_comparisons, answer_means, combined_scores
from mas_eval.report.content import default_comparisons
from mas_eval.report.diagnosis import label_counts_per_system
from mas_eval.report.findings import findings
from mas_eval.report.tables import system_means
from mas_eval.report.viewer import viewer_link, write_cases
from mas_eval.scoring import Scores, score
from mas_eval.storage.dataset import Dataset
from mas_eval.storage.outputs import atomic_directory

__all__ = ["INSPECT_SYSTEMS", "REPORTS", "answers_table", "demo_command", "headline", "run_demo"]

#: The report formats the demo writes, as ``report<suffix>``.
REPORTS = (".html", ".md", ".json", ".tex")


def headline(run_metrics: pl.DataFrame) -> pl.DataFrame:
    """Mean of the registered families' headline metrics per system, with the number of runs."""
    return system_means(run_metrics)


def answers_table(items: pl.DataFrame) -> pl.DataFrame:
    """Per task and system: answers (n), mean clinical accuracy and reasoning quality, combined score.

    The columns are named short (``accuracy``, ``reasoning``, ``combined``) to fit 80 columns.
    """
    combined = combined_scores(items).filter(pl.col("task") != OVERALL).select("task", "system", "combined_score")
    return (
        answer_means(items)
        .join(combined, on=["task", "system"], how="left")
        .rename({"clinical_accuracy": "accuracy", "reasoning_quality": "reasoning", "combined_score": "combined"})
    )


def run_demo(data: Path = Path("data"), out: Path = Path("reports/demo"), *, console: Console) -> Path:
    """Validate and score ``data/sample``, compare, draw, report; ingest ``data/sample.jsonl`` and ``data/inspect``.

    Outputs in ``out`` (replacing an earlier demo as a whole): ``report.html`` (one
    self-contained page, linking to ``cases.html``: the case viewer of the sample's cases),
    ``report.md`` with ``report_figures/``, ``report.json`` (every table
    in full precision and the provenance), ``report.tex`` (booktabs tables), ``figures/`` (every
    figure as PNG), ``scores/`` (the sample's Scores), ``comparisons.parquet`` (MAS vs single by
    task, paired on case, Holm), ``ingested/`` (the Dataset ingested from the JSONL), and from
    the inspect_ai logs in ``data/inspect`` (when inspect_ai is installed): ``inspect/`` (their
    Dataset), ``inspect_report.html`` and ``inspect_cases.html`` (their case viewer, linked from it).
    """
    sample, records, logs = data / "sample", data / "sample.jsonl", data / "inspect"
    with atomic_directory(out, overwrite=True, inputs=[sample, records, logs]) as staging:
        ds, scores = _sample_scored(sample, staging, console)
        comparison = _sample_compared(scores, staging, console)
        _sample_reported(ds, scores, comparison, staging, out, console)
        _ingested(records, logs, staging, console)
    console.print(
        f"\n[green]demo outputs written to {literal(out)}/[/]; open the report: [bold]{literal(out / 'report.html')}[/]"
    )
    return out


def _sample_scored(sample: Path, staging: Path, console: Console) -> tuple[Dataset, Scores]:
    """Validate and score the bundled sample, write its Scores, and print each family's headline."""
    # File names, not paths: a rule title is one line, and a long checkout path would be cut.
    console.rule(f"[bold]Bundled sample dataset[/] {literal(sample.name)}/")
    ds = Dataset.open(sample).validate()
    print_frame(ds.summary(), title="rows per table; the runs, systems, cases, tasks they cover", out=console)
    console.print(literal(_systems(ds)))

    console.rule("[bold]Decision metrics[/] (crisis-MAS evaluation methodology), preset 'spec'")
    scores = score(ds)
    scores.write(staging / "scores")
    print_system_means(
        headline(scores.runs), title="mean per system (gt_match: share of runs matching ground truth)", out=console
    )

    console.rule("[bold]Differential diagnosis[/]: labels per system (LDDx v6 metrics guide)")
    counts = label_counts_per_system(scores.runs)
    if counts is not None:
        print_frame(counts, title="TP/FP/FN/CAA/AE/TM-SM summed over each system's diagnostic runs", out=console)

    console.rule("[bold]Answer quality[/]: MAS vs single (MedAISure metrics overview)")
    if "items" in scores:
        title = "clinical accuracy, reasoning quality and combined score: means over n answers"
        print_frame(answers_table(scores.items), title=title, out=console)
        answers_comparison, why_not = answer_comparisons(scores.items)
        lines = findings(answers_comparison, "mas") if answers_comparison is not None else [why_not]
        console.print("mas - single, paired on item, per task:\n" + "\n".join(map(literal, lines)), highlight=False)
    return ds, scores


def _sample_compared(scores: Scores, staging: Path, console: Console) -> pl.DataFrame:
    """Compare MAS against single by task, paired on case; write and print the comparisons."""
    from mas_eval.stats import write_comparisons

    console.rule("[bold]MAS vs single-agent[/] by task, paired on case_id")
    comparison, why_not = default_comparisons(scores.runs)
    if comparison is None:
        msg = f"the bundled sample gives no comparison: {why_not}"
        raise RuntimeError(msg)
    write_comparisons(comparison, staging / "comparisons.parquet")
    print_comparisons(
        comparison,
        title="mas - single: paired t on per-case differences, Holm-adjusted across the table (* p_adj <= 0.05)",
        out=console,
    )  # fmt: skip
    return comparison


def _sample_reported(
    ds: Dataset, scores: Scores, comparison: pl.DataFrame, staging: Path, out: Path, console: Console
) -> None:
    """Draw the sample's figures and write its report in every format, and the case viewer it links to."""
    from mas_eval import plots
    from mas_eval.report import build

    console.rule("[bold]Figures and report[/]")
    report = build(
        scores,
        comparison,
        title="mas_eval demo: a multi-agent system against a single agent",
        dataset=ds,
        command="make demo  # mas-eval demo --out " + str(out),
    )
    figures = staging / "figures"
    figures.mkdir()
    for section in report.sections:
        for figure in section.figures:
            plots.save(figure.figure, figures / f"{figure.name}.png")
    with plots.paper_style(columns=1):
        first_with_beliefs = ds.scan("beliefs").select("run_id").min().collect().item()
        plots.save(plots.beliefs(ds, first_with_beliefs), figures / "beliefs_first_run.png")
        plots.save(plots.consensus_quality(scores.runs), figures / "consensus_quality.png")
    # The case viewer beside the report, which links to it: the sample's cases, MAS and single side by side.
    viewer = write_cases(scores, ds, staging / "cases.html")
    report.cases = viewer_link(staging / "cases.html", staging / "report.html")
    for suffix in REPORTS:
        report.write(staging / f"report{suffix}")
    absent = report.not_in_data
    console.print(
        f"{len(list(figures.iterdir()))} figures as PNG; report as {', '.join(REPORTS)}"
        + (f"; not in this data: {len(absent)} line(s)" if absent else ""),
        highlight=False,
    )
    console.print(f"case viewer: cases.html ({literal(viewer.metric_line)})", highlight=False)


def _ingested(records: Path, logs: Path, staging: Path, console: Console) -> None:
    """Ingest the bundled JSONL records, and the inspect_ai logs when inspect_ai is installed."""
    console.rule(f"[bold]Ingest of canonical JSONL records[/] {literal(records.name)}")
    result = ingest_jsonl([records], staging / "ingested")
    print_frame(Dataset.open(staging / "ingested").summary(), title=f"{result.runs} runs ingested", out=console)

    console.rule(f"[bold]inspect_ai logs[/] {literal(logs.name)}/: a two-role debate against a single agent")
    if importlib.util.find_spec("inspect_ai") is None:
        console.print("skipped: inspect_ai is not installed (pip install 'mas_eval[inspect]')")
    else:
        _inspect_logs(logs, staging, console)


#: The defaults of :func:`run_demo`'s parameters.
_DEMO = defaults_of(run_demo)


def demo_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the demo's outputs.")] = _DEMO["out"],
    data: Annotated[Path, typer.Option(help="Folder holding the bundled sample.")] = _DEMO["data"],
) -> None:
    """Run the main job on the bundled sample (what `make demo` runs); replaces OUT."""
    run_demo(data, out, console=terminal)


#: The two systems of the bundled inspect_ai logs (named by the adapter from model and solver).
INSPECT_SYSTEMS = ("mockllm/model debate", "mockllm/single generate")


def _inspect_logs(logs: Path, staging: Path, console: Console) -> None:
    """Ingest the bundled inspect_ai logs, score them, print pass rates, the paired and compute-matched comparisons."""
    from mas_eval.ingest import ingest_inspect
    from mas_eval.report import build
    from mas_eval.stats import compare, compute_matched, pass_rates

    treatment, control = INSPECT_SYSTEMS
    result = ingest_inspect([logs], staging / "inspect")
    scores = score(result.dataset)
    columns = ["system", "n", "passes", "rate", "wilson_low", "wilson_high"]
    rates = pass_rates(scores.runs, "match", cluster="case_id").select(columns)
    title = f"{result.runs} runs ({len(result.files)} logs): pass rate of 'match', 95% Wilson interval"
    print_frame(rates, title=title, out=console)
    comparison = compare(scores, "match", treatment=treatment, control=control, pair_on="case_id")
    lines = [f"{treatment} - {control}, paired on the case:", *findings(comparison, "the debate")]
    matched = compute_matched(scores.runs, "match", treatment=treatment, control=control, level="summary")
    for row in matched.iter_rows(named=True):
        if not row["cases"]:
            lines.append(f"{row['comparison']}: no case matched ({row['unmatched']} cases unmatched)")
            continue
        lines.append(
            f"{row['comparison']}: debate {row['treatment_rate']:.2f} vs single {row['control_rate']:.2f} on "
            f"{row['cases']} cases (single's mean k {row['mean_k']:.1f}; McNemar p {row['mcnemar_p']:.2f}; "
            f"{row['unmatched']} unmatched)"
        )
    console.print("\n".join(map(literal, lines)), highlight=False)
    report = build(
        scores,
        title="mas_eval demo: inspect_ai logs",
        dataset=result.dataset,
        treatment=treatment,
        control=control,
        command="make demo  # mas-eval demo: the inspect_ai logs' part",
    )
    viewer = write_cases(
        scores,
        result.dataset,
        staging / "inspect_cases.html",
        treatment=treatment,
        control=control,
        title="mas_eval demo: the inspect_ai logs' cases, debate and single agent side by side",
    )
    report.cases = viewer_link(staging / "inspect_cases.html", staging / "inspect_report.html")
    report.write(staging / "inspect_report.html")
    drawn = sum(len(section.figures) for section in report.sections)
    console.print(
        f"report of the logs: inspect_report.html ({drawn} figures, led by each system's pass rates with their "
        f"intervals); their cases side by side: inspect_cases.html ({literal(viewer.described_counts())})",
        highlight=False,
    )


def _systems(ds: Dataset) -> str:
    per_system = (
        ds["runs"].group_by("system").agg(runs=pl.len(), cases=pl.col("case_id").n_unique()).sort("system").collect()
    )
    return "; ".join(f"{r['system']}: {r['runs']:,} runs on {r['cases']:,} cases" for r in per_system.to_dicts())
