"""The ``mas-eval`` command line.

Every sub-command is a thin shell over a Python function. Errors about the user's input
(:class:`~mas_eval.errors.MasEvalError`, missing files) print one readable line on stderr
and exit with code 2 — never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, get_args

import typer

from mas_eval.dataset import Dataset
from mas_eval.errors import MasEvalError
from mas_eval.metrics.family import parameter_help, parse_override
from mas_eval.output import check_target
from mas_eval.presets import PRESETS
from mas_eval.stats.options import BootCI, Correction, Method, Test
from mas_eval.terminal import console, err_console, print_frame, progress

app = typer.Typer(
    name="mas-eval",
    help="Score logged runs of multi-agent LLM systems against single-agent baselines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _choices(options: Any) -> str:
    """The values of a ``Literal`` type, for help texts (the checks read the same type)."""
    return ", ".join(get_args(options))


DatasetArg = Annotated[Path, typer.Argument(help="Dataset folder (one Parquet file or folder per table).")]
OverwriteOpt = Annotated[bool, typer.Option("--overwrite", help="Replace OUT if it exists.")]


@app.command()
def simulate(
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write.")],
    runs: Annotated[int, typer.Option("--runs", "-n", help="Number of runs (both systems together).")] = 10_000,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same dataset.")] = 0,
    effect: Annotated[float, typer.Option(help="True MAS − single difference in mean DQS.")] = 0.05,
    mas_share: Annotated[float, typer.Option(help="Share of runs made by the MAS.")] = 0.5,
    repeats: Annotated[int, typer.Option(help="Runs per system per case.")] = 1,
    tasks: Annotated[int, typer.Option(help="Number of tasks.")] = 3,
    variants: Annotated[int, typer.Option(help="Number of variants.")] = 2,
    overwrite: OverwriteOpt = False,
) -> None:
    """Write a synthetic dataset of MAS and single-agent runs over shared cases."""
    from mas_eval.simulation import simulate as simulate_dataset

    steps = ["runs", "agents", "beliefs", "criteria", "scores", "alt_scores"]
    with progress() as bar:
        task = bar.add_task("simulating", total=len(steps) + 1)

        def advance(step: str) -> None:
            bar.update(task, advance=1, description=f"simulating {step}")

        ds = simulate_dataset(
            runs,
            seed=seed,
            effect=effect,
            mas_share=mas_share,
            repeats=repeats,
            tasks=tasks,
            variants=variants,
            progress=advance,
        )
        bar.update(task, description="writing")
        # Valid by construction (tests/test_simulate.py validates it); skipping saves ~12 s per 1M runs.
        ds.write(out, overwrite=overwrite, validate=False)
    console.print(f"wrote {runs:,} runs to {out}")


@app.command()
def ingest(
    files: Annotated[list[Path], typer.Argument(help="JSONL files of canonical run records.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write.")],
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Skip malformed lines, writing them to the rejects file.")
    ] = False,
    rejects: Annotated[Path | None, typer.Option(help="Where skipped lines go (default: OUT.rejects.jsonl).")] = None,
    chunk_lines: Annotated[int, typer.Option(help="Lines decoded per chunk (bounds memory).")] = 200_000,
    overwrite: OverwriteOpt = False,
) -> None:
    """Flatten canonical JSONL run records into a Dataset (see run_record.schema.json)."""
    from mas_eval.ingest import ingest_jsonl

    with progress() as bar:
        task = bar.add_task("ingesting lines", total=None)
        result = ingest_jsonl(
            files,
            out,
            overwrite=overwrite,
            skip_invalid=skip_invalid,
            rejects=rejects,
            chunk_lines=chunk_lines,
            progress=lambda n: bar.update(task, advance=n),
        )
    console.print(f"ingested {result.runs:,} runs into {result.out}")
    if result.rejected:
        console.print(f"[yellow]skipped {result.rejected:,} malformed line(s); see {result.rejects}[/]")


@app.command(epilog="Parameters for --set (key=value; none for None):\n\n" + parameter_help().replace("\n", "\n\n"))
def score(
    dataset: DatasetArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Scores folder to write.")],
    preset: Annotated[str, typer.Option(help=f"Parameter preset: {', '.join(PRESETS)}.")] = "spec",
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a parameter, key=value (repeatable), e.g. --set gt_boost=none."),
    ] = None,
    pairwise: Annotated[
        bool, typer.Option("--pairwise", help="Also write pairwise agent similarities (--set pairwise=true).")
    ] = False,
    skip_validation: Annotated[
        bool, typer.Option("--skip-validation", help="Do not validate the Dataset first.")
    ] = False,
    overwrite: OverwriteOpt = False,
) -> None:
    """Score every run with every metric family whose tables the Dataset has."""
    from mas_eval.scoring import score as score_dataset

    overrides = dict(parse_override(item) for item in set_ or [])
    if pairwise:
        overrides["pairwise"] = True
    ds = Dataset.open(dataset)
    with progress() as bar:
        task = bar.add_task("validating", total=2)
        if not skip_validation:
            ds.validate()
        bar.update(task, advance=1, description="scoring")
        scores = score_dataset(ds, preset=preset, **overrides)
        bar.update(task, advance=1, description="writing")
        scores.write(out, overwrite=overwrite)
    tables = ", ".join(f"{name} ({frame.height:,} rows)" for name, frame in scores.items())
    console.print(f"scored {scores.runs.height:,} runs with preset {preset!r} into {out}: {tables}")
    for name, reason in scores.skipped.items():
        console.print(f"[yellow]skipped the {name} family: {reason}[/]")


@app.command()
def compare(
    scores: Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")],
    metrics: Annotated[
        str, typer.Option("--metrics", "-m", help="Comma-separated run metrics, e.g. dqs,decision_confidence.")
    ] = "dqs,decision_confidence",
    by: Annotated[str | None, typer.Option(help="Comma-separated grouping columns, e.g. task.")] = None,
    pair_on: Annotated[
        str | None, typer.Option("--pair-on", help="Case column both systems ran (paired tests), e.g. case_id.")
    ] = None,
    cluster: Annotated[str | None, typer.Option(help="Cluster column: cluster-robust standard errors.")] = None,
    test: Annotated[
        str, typer.Option(help=f"One of {_choices(Test)} (auto: paired with --pair-on, else welch).")
    ] = "auto",
    correction: Annotated[str, typer.Option(help=f"Across all rows: one of {_choices(Correction)}.")] = "holm",
    treatment: Annotated[str, typer.Option(help="Treatment system (difference = treatment - control).")] = "mas",
    control: Annotated[str, typer.Option(help="Control system.")] = "single",
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    confidence: Annotated[float, typer.Option(help="Confidence level of the CIs.")] = 0.95,
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples for the CI (0: t-based CI).")] = 0,
    seed: Annotated[int | None, typer.Option(help="Seed of the bootstrap.")] = None,
    boot_ci: Annotated[str, typer.Option("--boot-ci", help=f"Bootstrap interval: one of {_choices(BootCI)}.")] = "bca",
    method: Annotated[
        str, typer.Option(help=f"One of {_choices(Method)} (mixed: a random intercept per --pair-on case).")
    ] = "default",
    allow_mixed_methods: Annotated[
        bool, typer.Option("--allow-mixed-methods", help="Compare dqs across dqs_method values, with a warning.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the full table (.parquet, .csv or .json).")
    ] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Compare treatment vs control per group and metric: test, CI, effect size, adjusted p."""
    from mas_eval.scoring import Scores
    from mas_eval.stats import compare as compare_runs
    from mas_eval.stats import summary_view, write_comparisons

    if out is not None:
        check_target(out, overwrite=overwrite)  # before the work, not after it
    table = compare_runs(
        Scores.open(scores).runs,
        metrics,
        treatment=treatment,
        control=control,
        by=by.split(",") if by else None,
        pair_on=pair_on,
        cluster=cluster,
        test=test,  # type: ignore[arg-type]
        correction=correction,  # type: ignore[arg-type]
        alpha=alpha,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        method=method,  # type: ignore[arg-type]
        allow_mixed_methods=allow_mixed_methods,
        boot_ci=boot_ci,  # type: ignore[arg-type]
    )
    print_frame(summary_view(table), title=f"{treatment} - {control} ({correction} across {table.height} rows)")
    if out is not None:
        write_comparisons(table, out, overwrite=overwrite)
        console.print(f"wrote {table.height} comparisons to {out}")


@app.command()
def validate(dataset: DatasetArg) -> None:
    """Check a Dataset against the schema; exit 2 with one message if a rule is broken."""
    Dataset.open(dataset).validate()
    console.print(f"{dataset}: valid")


@app.command()
def summary(
    dataset: DatasetArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Rows per table and the systems, cases and tasks they cover."""
    frame = Dataset.open(dataset).summary()
    if as_json:
        console.print_json(json.dumps(frame.to_dicts()))
    else:
        print_frame(frame, title=str(dataset))


@app.command(hidden=True)
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the demo's outputs.")] = Path("reports/demo"),
    data: Annotated[Path, typer.Option(help="Folder holding the bundled sample.")] = Path("data"),
) -> None:
    """Run the main job on the bundled sample (what `make demo` runs)."""
    from mas_eval.demo import run_demo

    run_demo(data, out, console=console)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``mas-eval`` console script."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name="mas-eval")
    except (MasEvalError, FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
