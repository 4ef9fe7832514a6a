"""``mas-eval compare``, ``cost-effectiveness`` and ``report``: what a Scores folder says of the MAS.

Each compares the MAS against its baseline.

``compare`` calls :func:`mas_eval.stats.compare` on the runs table and prints the table;
``cost-effectiveness`` calls :func:`mas_eval.stats.cost_effectiveness` and prints its rows;
``report`` calls :func:`mas_eval.report.build` and writes the report (and with ``--cases`` the case
viewer beside it, :func:`mas_eval.report.case_viewer`, which the HTML report links to). Their options take the
functions' defaults; the statistics' are read from their source (:func:`~mas_eval.cli.common.source_defaults`),
as importing the statistics layer loads SciPy, which ``mas-eval --help`` should not wait for.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from mas_eval.cli.common import OverwriteOpt, RawCsvOpt, choices, defaults_of, flag, source_defaults
from mas_eval.cli.terminal import console, literal, print_comparisons, print_frame, steps
from mas_eval.errors import InvalidParameterError
from mas_eval.formatting import format_ci, format_number
from mas_eval.metrics.family import Chosen, choose_columns, compared_columns, headline_columns
from mas_eval.report.content import build
from mas_eval.report.document import Report
from mas_eval.report.viewer import case_viewer, check_viewer_path, viewer_link
from mas_eval.stats.comparison_table import write_comparisons
from mas_eval.stats.options import BootCI, Correction, Hypothesis, Method, Test
from mas_eval.storage.outputs import atomic_file, check_target, same_path

__all__ = ["compare_command", "cost_effectiveness_command", "default_metrics", "parse_margin", "report_command"]

#: The defaults of :func:`mas_eval.stats.compare`'s parameters.
_COMPARE = source_defaults("mas_eval.stats.comparison", "compare")
_COST = source_defaults("mas_eval.stats.economics", "cost_effectiveness")
_WRITE_COMPARISONS = defaults_of(write_comparisons)
#: The defaults of :func:`mas_eval.report.build`'s and :meth:`~mas_eval.report.Report.write`'s parameters.
_BUILD = defaults_of(build)
_WRITE_REPORT = defaults_of(Report.write)


def compare_command(
    scores: Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")],
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            "-m",
            help="Comma-separated run metrics, e.g. dqs,decision_confidence (default: what the metric families "
            "that have values in these runs compare, as a report does: a log's scores, or DQS and confidence; "
            "the choice is printed).",
        ),
    ] = None,
    by: Annotated[str | None, typer.Option(help="Comma-separated grouping columns, e.g. task.")] = _COMPARE["by"],
    pair_on: Annotated[
        str | None, typer.Option("--pair-on", help="Case column both systems ran (paired tests), e.g. case_id.")
    ] = _COMPARE["pair_on"],
    cluster: Annotated[
        str | None,
        typer.Option(help="Cluster column: cluster-robust standard errors."),
    ] = _COMPARE["cluster"],
    test: Annotated[
        str,
        typer.Option(
            help=(
                f"One of {choices(Test)} (auto: paired with --pair-on, mcnemar for a pass/fail metric with one "
                f"run per case; else welch)."
            )
        ),
    ] = _COMPARE["test"],
    correction: Annotated[
        str,
        typer.Option(help=f"Across all rows: one of {choices(Correction)}."),
    ] = _COMPARE["correction"],
    treatment: Annotated[
        str,
        typer.Option(help="Treatment system (difference = treatment - control)."),
    ] = _COMPARE["treatment"],
    control: Annotated[str, typer.Option(help="Control system.")] = _COMPARE["control"],
    alpha: Annotated[float, typer.Option(help="Significance level.")] = _COMPARE["alpha"],
    confidence: Annotated[float, typer.Option(help="Confidence level of the CIs.")] = _COMPARE["confidence"],
    n_boot: Annotated[
        int,
        typer.Option("--n-boot", help="Bootstrap resamples for the CI (0: t-based CI)."),
    ] = _COMPARE["n_boot"],
    seed: Annotated[int | None, typer.Option(help="Seed of the bootstrap.")] = _COMPARE["seed"],
    boot_ci: Annotated[
        str, typer.Option("--boot-ci", help=f"Bootstrap interval: one of {choices(BootCI)}.")
    ] = _COMPARE["boot_ci"],
    method: Annotated[
        str, typer.Option(help=f"One of {choices(Method)} (mixed: a random intercept per --pair-on case).")
    ] = _COMPARE["method"],
    allow_mixed_methods: Annotated[
        bool, flag("--allow-mixed-methods", help="Compare dqs across dqs_method values, with a warning.")
    ] = _COMPARE["allow_mixed_methods"],
    margin: Annotated[
        str | None,
        typer.Option(
            help="Margin of --hypothesis, in the metric's units: one number (0.05) or one per metric "
            "(dqs=0.02,passed=0.05)."
        ),
    ] = _COMPARE["margin"],
    hypothesis: Annotated[
        str | None,
        typer.Option(
            help=f"One of {choices(Hypothesis)}: noninferior tests difference > -margin, equivalent "
            "|difference| < margin (TOST); default: the two-sided test of no difference."
        ),
    ] = _COMPARE["hypothesis"],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the full table (.parquet, .csv or .json).")
    ] = None,
    overwrite: OverwriteOpt = _WRITE_COMPARISONS["overwrite"],
    raw_csv: RawCsvOpt = _WRITE_COMPARISONS["raw_csv"],
) -> None:
    """Compare treatment vs control per group and metric: test, CI, effect size, adjusted p."""
    from mas_eval.scoring.scores import Scores
    from mas_eval.stats import compare
    from mas_eval.stats.comparison_table import check_comparisons_path
    from mas_eval.storage.inputs import reading

    if raw_csv and (out is None or out.suffix.lower() != ".csv"):
        msg = "compare: --raw-csv applies to a .csv --out only; drop --raw-csv, or pass --out NAME.csv"
        raise InvalidParameterError(msg)
    if out is not None:  # before the work, not after it
        check_comparisons_path(out)
        check_target(out, overwrite=overwrite, inputs=[scores])
    # Only the runs table, lazily: the comparison reads just the columns it needs.
    runs = Scores.scan(scores, "runs")
    if metrics is None:
        with reading(Scores.table_files(scores, "runs")):
            default = default_metrics(runs, Scores.manifest(scores))
        console.print(literal(default.sentence()), highlight=False)
        if not default.columns:
            msg = (
                "compare: none of the columns the metric families compare by default has a value in these scores; "
                "name the columns to compare with --metrics"
            )
            raise InvalidParameterError(msg)
        chosen: str | list[str] = default.columns
    else:
        chosen = metrics
    with reading(Scores.table_files(scores, "runs")):
        table = compare(
            runs,
            chosen,
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
            margin=parse_margin(margin),
            hypothesis=hypothesis,  # type: ignore[arg-type]
        )
    title = f"{treatment} - {control}: {table.height} comparisons, p adjusted by {correction} (* p_adj <= {alpha:g})"
    if "verdict" in table.columns:
        title += f"; {hypothesis} at margin {margin} (p: the one-sided test's, TOST's larger)"
    print_comparisons(table, title=title, confidence=confidence)
    if out is not None:
        write_comparisons(table, out, overwrite=overwrite, raw_csv=raw_csv)
        console.print(f"wrote {table.height} comparisons to {literal(out)}", highlight=False)


def default_metrics(runs: pl.LazyFrame, manifest: dict[str, object]) -> Chosen:
    """Return the columns ``mas-eval compare`` compares when given no ``--metrics``.

    They are those a report compares (:func:`~mas_eval.metrics.family.choose_columns`), judged on one read of the
    candidate columns.

    ``manifest`` is the Scores folder's (:meth:`~mas_eval.scoring.scores.Scores.manifest`): the families that
    ran and the columns they named from the data.

    >>> runs = pl.LazyFrame({"system": ["mas", "single"], "dqs": [None, None], "match": [True, False]})
    >>> default_metrics(runs, {"families": {"ran": ["decision", "outcomes"]}, "named": {"outcomes": ["match"]}}).columns
    ['match']
    """
    families = manifest.get("families")
    ran = families.get("ran") if isinstance(families, dict) else None
    named = manifest.get("named") if isinstance(manifest.get("named"), dict) else {}
    have = runs.collect_schema().names()
    candidates = [n for n in dict.fromkeys([*compared_columns(named), *headline_columns(named)]) if n in have]  # type: ignore[arg-type]
    if candidates:
        row = runs.select(pl.col(name).is_not_null().any() for name in candidates).collect().row(0, named=True)
    else:
        row = {}
    return choose_columns("compared", lambda name: bool(row.get(name)), ran=ran or None, named=named)  # type: ignore[arg-type]


def parse_margin(text: str | None) -> float | dict[str, float] | None:
    """``--margin``: one number, or ``metric=number`` pairs separated by commas; the checks are ``compare``'s.

    >>> parse_margin("0.05"), parse_margin("dqs=0.02, passed=0.05"), parse_margin(None)
    (0.05, {'dqs': 0.02, 'passed': 0.05}, None)
    """
    if text is None:
        return None
    try:
        if "=" not in text:
            return float(text)
        pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
        return {name.strip(): float(value) for name, value in pairs}
    except ValueError:
        msg = f"compare: --margin {text!r} is not a number (0.05) nor metric=number pairs (dqs=0.02,passed=0.05)"
        raise InvalidParameterError(msg) from None


def cost_effectiveness_command(
    scores: Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")],
    metric: Annotated[
        str, typer.Option("--metric", "-m", help="The effect, higher is better: a pass/fail outcome or a score.")
    ],
    cost: Annotated[str, typer.Option(help="Each run's cost (tokens work too).")] = _COST["cost"],
    treatment: Annotated[str, typer.Option(help="Treatment system (differences = treatment - control).")] = _COST[
        "treatment"
    ],
    control: Annotated[str, typer.Option(help="Control system.")] = _COST["control"],
    pair_on: Annotated[
        str, typer.Option("--pair-on", help="Case column both systems ran; none: two independent samples of runs.")
    ] = _COST["pair_on"],
    by: Annotated[str | None, typer.Option(help="Comma-separated grouping columns, e.g. task.")] = _COST["by"],
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples (0: none).")] = _COST["n_boot"],
    seed: Annotated[int | None, typer.Option(help="Seed of the bootstrap.")] = _COST["seed"],
    confidence: Annotated[float, typer.Option(help="Confidence level of the intervals.")] = _COST["confidence"],
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the full table (.parquet, .csv or .json).")
    ] = None,
    overwrite: OverwriteOpt = _WRITE_COMPARISONS["overwrite"],
) -> None:
    """Is the extra cost worth it: the cost per extra unit of quality (ICER) with its intervals, and dominance."""
    from mas_eval.scoring.scores import Scores
    from mas_eval.stats import cost_effectiveness
    from mas_eval.stats.comparison_table import check_comparisons_path
    from mas_eval.storage.inputs import reading

    if out is not None:  # before the work, not after it
        check_comparisons_path(out)
        check_target(out, overwrite=overwrite, inputs=[scores])
    runs = Scores.scan(scores, "runs")
    with reading(Scores.table_files(scores, "runs")):
        table = cost_effectiveness(
            runs, metric, cost=cost, treatment=treatment, control=control,
            pair_on=None if pair_on.strip().lower() in ("", "none") else pair_on,
            by=by.split(",") if by else None, n_boot=n_boot, seed=seed, confidence=confidence,
        )  # fmt: skip
    level = f"{round(confidence * 100):g}%"
    shown = table.select(
        *table.columns[: table.columns.index("metric")],
        "verdict",
        pl.col("delta_effect").alias("effect difference"),
        pl.col("delta_cost").alias("cost difference"),
        pl.col("icer").alias("ICER"),
    ).with_columns(
        pl.Series(f"effect {level} CI", _intervals(table, "delta_effect")),
        pl.Series(f"cost {level} CI", _intervals(table, "delta_cost")),
        pl.Series("Fieller", [_fieller(row) for row in table.iter_rows(named=True)]),
        pl.Series("bootstrap", [format_ci(row["bootstrap_low"], row["bootstrap_high"]) for row in table.iter_rows(
            named=True)]),
    )  # fmt: skip
    print_frame(shown, title=f"{treatment} - {control}: {metric} against {cost} per case, {level} intervals")
    for number, warning in enumerate((w for w in table["warning"].to_list() if w), start=1):
        console.print(literal(f"[{number}] {warning}"), highlight=False)
    if out is not None:
        write_comparisons(table, out, overwrite=overwrite)
        console.print(f"wrote {table.height} row(s) to {literal(out)}", highlight=False)


def _intervals(table: pl.DataFrame, name: str) -> list[str]:
    return [format_ci(low, high) for low, high in zip(table[f"{name}_low"], table[f"{name}_high"], strict=True)]


def _fieller(row: dict[str, object]) -> str:
    """Fieller's set as a reader reads it: an interval, two half-lines, or every ratio."""
    low, high = row["fieller_low"], row["fieller_high"]
    if row["fieller"] == "bounded":
        return format_ci(low, high)  # type: ignore[arg-type]
    if row["fieller"] == "exclusive":
        return f"< {format_number(low)} or > {format_number(high)}"  # type: ignore[arg-type]
    return "any ratio" if row["fieller"] == "unbounded" else ""


def report_command(
    scores: Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="The report: .html (one page), .md (figures beside it), .json or .tex.")
    ],
    comparisons: Annotated[
        Path | None,
        typer.Option(help="A table written by `mas-eval compare --out` (default: by task, paired on case, Holm)."),
    ] = _BUILD["comparisons"],
    dataset: Annotated[
        Path | None, typer.Option(help="The scored Dataset: its summary and files' hashes go in the report.")
    ] = _BUILD["dataset"],
    title: Annotated[str, typer.Option(help="The report's title.")] = _BUILD["title"],
    treatment: Annotated[
        str,
        typer.Option(help="Treatment system (difference = treatment - control)."),
    ] = _BUILD["treatment"],
    control: Annotated[str, typer.Option(help="Control system.")] = _BUILD["control"],
    cases: Annotated[
        Path | None,
        typer.Option(
            help="Also write the case viewer (.html: the cases where the systems differ first, their runs side by "
            "side; the transcripts come from --dataset) to this file, and link the HTML report to it."
        ),
    ] = None,
    overwrite: OverwriteOpt = _WRITE_REPORT["overwrite"],
) -> None:
    """Write the MAS-vs-baseline report: tables, figures, calibration, cost, provenance."""
    import shlex

    from mas_eval.report.document import check_report_path
    from mas_eval.report.writers import check_targets
    from mas_eval.stats.comparison_table import read_comparisons

    inputs = [p for p in (scores, comparisons, dataset) if p is not None]
    check_report_path(out)  # before the work, not after it
    check_targets(out, overwrite=overwrite, inputs=inputs)  # the Markdown's figures folder too
    if cases is not None:
        _check_cases_path(cases, out, overwrite=overwrite, inputs=inputs)
    table = read_comparisons(comparisons) if comparisons is not None else None
    with steps() as shown:
        shown.start("building the report (figures, statistics)")
        document = build(
            scores,
            table,
            title=title,
            dataset=dataset,
            treatment=treatment,
            control=control,
            command=shlex.join(["mas-eval", *sys.argv[1:]]),
        )
        if cases is None:
            shown.start(f"writing {out.suffix.lstrip('.').upper()}")
            document.write(out, overwrite=overwrite, inputs=inputs)
        else:
            shown.start("gathering the case viewer")
            viewer = case_viewer(scores, dataset, treatment=treatment, control=control)
            document.cases = viewer_link(cases, out)
            shown.start(f"writing {out.suffix.lstrip('.').upper()} and the case viewer")
            # The page is staged first and placed only once the report is written: both or neither.
            with atomic_file(cases, overwrite=overwrite, inputs=inputs) as staging:
                with staging.open("w", encoding="utf-8") as page:
                    page.writelines(viewer.parts())
                document.write(out, overwrite=overwrite, inputs=inputs)
    chose = document.section("comparison").text[:1] if table is None and _shown(document, "comparison") else []
    for line in chose:
        console.print(literal(line), highlight=False)
    for line in document.not_in_data:
        console.print(f"[dim]not in this data: {literal(line)}[/]", highlight=False)
    console.print(f"wrote the report to {literal(out)}", highlight=False)
    if cases is not None:
        console.print(f"wrote the case viewer to {literal(cases)} ({literal(viewer.metric_line)})", highlight=False)


def _shown(document: Report, key: str) -> bool:
    return any(section.key == key for section in document.sections)


def _check_cases_path(cases: Path, out: Path, *, overwrite: bool, inputs: list[Path]) -> None:
    """``--cases``: an .html path, not the report's own, that can be written."""
    check_viewer_path(cases)
    if same_path(cases, out):
        msg = f"{cases}: --cases names the report's own file; give the case viewer a path of its own"
        raise InvalidParameterError(msg)
    check_target(cases, overwrite=overwrite, inputs=inputs)
