"""``mas-eval pass-at-k`` and ``variance``: a Scores folder's epochs, with intervals, and the design they imply.

``pass-at-k`` calls :func:`mas_eval.stats.pass_at_k_intervals` on the runs table; ``variance``
calls :func:`mas_eval.stats.variance_components` and, given ``--mde``, :func:`mas_eval.stats.plan`.
Their options take the functions' defaults, read from the source (the statistics layer loads
SciPy, which ``mas-eval --help`` should not wait for).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mas_eval.cli.common import flag, source_defaults
from mas_eval.cli.terminal import print_frame
from mas_eval.errors import InvalidParameterError

__all__ = ["pass_at_k_command", "variance_command"]

_INTERVALS = source_defaults("mas_eval.stats.epochs", "pass_at_k_intervals")
_COMPONENTS = source_defaults("mas_eval.stats.variance", "variance_components")
_PLAN = source_defaults("mas_eval.stats.planning", "plan")

ScoresArg = Annotated[Path, typer.Argument(help="Scores folder written by `mas-eval score`.")]
MetricOpt = Annotated[str, typer.Option("--metric", "-m", help="The run column: a pass/fail outcome or a score.")]
ByOpt = Annotated[str | None, typer.Option(help="Comma-separated grouping columns, e.g. task.")]


def _ks(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        msg = f"pass-at-k: --k {text!r} is not a comma-separated list of integers, e.g. 1,2,4"
        raise InvalidParameterError(msg) from None


def pass_at_k_command(
    scores: ScoresArg,
    metric: MetricOpt,
    k: Annotated[str, typer.Option("--k", "-k", help="Comma-separated ks, e.g. 1,2,4,8.")] = "1",
    by: ByOpt = _INTERVALS["by"],
    treatment: Annotated[
        str | None, typer.Option(help="With --control: the paired difference treatment - control at each k.")
    ] = _INTERVALS["treatment"],
    control: Annotated[str | None, typer.Option(help="The control system of the difference.")] = _INTERVALS["control"],
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples of the cases (0: none).")] = _INTERVALS[
        "n_boot"
    ],
    seed: Annotated[int | None, typer.Option(help="Seed of the bootstrap.")] = _INTERVALS["seed"],
    resample_epochs: Annotated[
        bool,
        flag("--resample-epochs", help="Also redraw each drawn case's epochs (a conservative two-stage bootstrap)."),
    ] = _INTERVALS["resample_epochs"],
    confidence: Annotated[float, typer.Option(help="Level of the intervals.")] = _INTERVALS["confidence"],
) -> None:
    """pass@k and pass^k per system with intervals over cases (and a paired difference)."""
    from mas_eval.scoring.scores import Scores
    from mas_eval.stats import pass_at_k_intervals
    from mas_eval.storage.inputs import reading

    runs = Scores.scan(scores, "runs")
    with reading(Scores.table_files(scores, "runs")):
        table = pass_at_k_intervals(
            runs, metric, k=_ks(k), by=by, treatment=treatment, control=control, n_boot=n_boot, seed=seed,
            resample_epochs=resample_epochs, confidence=confidence,
        )  # fmt: skip
    print_frame(table, title=f"pass@k and pass^k of {metric} ({confidence:.0%} intervals over cases)")


def variance_command(
    scores: ScoresArg,
    metric: MetricOpt,
    by: ByOpt = _COMPONENTS["by"],
    judge: Annotated[str | None, typer.Option(help="The scorer column, when several score each run.")] = _COMPONENTS[
        "judge"
    ],
    method: Annotated[str, typer.Option(help="anova (with intervals) or reml.")] = _COMPONENTS["method"],
    confidence: Annotated[float, typer.Option(help="Level of the intervals.")] = _COMPONENTS["confidence"],
    paired: Annotated[
        str | None, typer.Option(help="TREATMENT,CONTROL: the components of their paired difference.")
    ] = None,
    mde: Annotated[
        float | None, typer.Option(help="Plan a design: the smallest difference worth detecting (> 0).")
    ] = None,
    power: Annotated[float, typer.Option(help="With --mde: the power to reach.")] = _PLAN["power"],
    alpha: Annotated[float, typer.Option(help="With --mde: two-sided significance level.")] = _PLAN["alpha"],
    cost_per_run: Annotated[float, typer.Option(help="With --mde: the cost of one run.")] = _PLAN["cost_per_run"],
    cost_per_case: Annotated[
        float, typer.Option(help="With --mde: the cost of one more case, whatever its epochs.")
    ] = _PLAN["cost_per_case"],
    max_epochs: Annotated[int, typer.Option(help="With --mde: the most epochs per case.")] = _PLAN["max_epochs"],
    max_cases: Annotated[int, typer.Option(help="With --mde: the most cases there are.")] = _PLAN["max_cases"],
) -> None:
    """Between-case, epoch and judge variance with the ICC and design effect; with --mde, the design to run."""
    from mas_eval.constraints import check_parameter
    from mas_eval.scoring.scores import Scores
    from mas_eval.stats import plan, variance_components
    from mas_eval.storage.inputs import reading

    pair = None
    if paired is not None:
        parts = [part.strip() for part in paired.split(",")]
        if len(parts) != 2 or not all(parts):
            msg = f"variance: --paired {paired!r} must be two systems, TREATMENT,CONTROL (e.g. mas,single)"
            raise InvalidParameterError(msg)
        pair = (parts[0], parts[1])
    if mde is not None:  # the design's options, before the work, not after it
        for name, value in (
            ("mde", mde),
            ("power", power),
            ("alpha", alpha),
            ("cost_per_run", cost_per_run),
            ("cost_per_case", cost_per_case),
            ("max_epochs", max_epochs),
            ("max_cases", max_cases),
        ):
            check_parameter(name, value, plan.__parameter_constraints__[name], where="plan")  # type: ignore[attr-defined]
    runs = Scores.scan(scores, "runs")
    with reading(Scores.table_files(scores, "runs")):
        table = variance_components(
            runs, metric, by=by, judge=judge, method=method, confidence=confidence,  # type: ignore[arg-type]
            paired=pair,
        )  # fmt: skip
    print_frame(table.drop("difference", "method"), title=f"variance components of {metric} ({method})")
    if mde is not None:
        designs = plan(
            table, mde=mde, power=power, alpha=alpha, cost_per_run=cost_per_run, cost_per_case=cost_per_case,
            max_epochs=max_epochs, max_cases=max_cases, paired=pair is not None,
        )  # fmt: skip
        print_frame(designs, title=f"designs reaching power {power:g} for a difference of {mde:g}")
