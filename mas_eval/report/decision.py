"""The decision family's report sections: distributions, paired differences, calibration, cost, consensus.

They show the decision family's run columns (``dqs``, ``decision_confidence``, ``gt_match``,
the usage columns, ``consensus_reached``, ``num_conflicts``, ``ranking_stability``,
``num_winner_changes``) and its ``conflicts`` table; each section says why it is omitted when
the scores lack them. Scores in which the decision family found nothing to score (logs of another
tool: no beliefs, no DQS) get one line for all five.
"""

from __future__ import annotations

import polars as pl

from mas_eval.report.document import ReportFigure, ReportTable, Section
from mas_eval.report.tables import has_values, system_means

__all__ = ["decision_sections"]

#: What a cost-quality plot can put on its x axis, in order of preference.
_COSTS = ("cost_usd", "tokens_used", "processing_time_seconds")


def decision_sections(
    runs: pl.DataFrame, treatment: str, control: str, both: int, conflicts: pl.DataFrame | None = None
) -> list[Section]:
    """Make the five sections, in the report's order; ``both`` is the number of cases both systems ran.

    One omitted section (``decision``) instead when no run has a DQS, a decision confidence or a consensus.
    """
    if not any(has_values(runs, name) for name in ("dqs", "decision_confidence", "consensus_reached")):
        return [
            Section(
                "decision",
                "Decision quality",
                omitted="no run has a DQS, a decision confidence or a consensus (the decision family scores a run's "
                "alternatives and its agents' beliefs); its distributions, paired differences, calibration, "
                "efficiency and consensus sections need them",
            )
        ]
    return [
        _distributions_section(runs),
        _paired_section(runs, treatment, control, both),
        _calibration_section(runs),
        _efficiency_section(runs),
        _consensus_section(runs, conflicts),
    ]


def _distributions_section(runs: pl.DataFrame) -> Section:
    from mas_eval import plots

    title = "Distributions"
    metrics = [name for name in ("dqs", "decision_confidence") if has_values(runs, name)]
    if not metrics:
        return Section("distributions", title, omitted="the scores have no dqs or decision_confidence values")
    by = "task" if has_values(runs, "task") else None
    figures = [
        ReportFigure(
            f"distribution_{name}",
            f"{name} per system{' and task' if by else ''}: boxes, jittered runs, means with 95% CIs.",
            plots.distributions(runs, name, by=by),
        )
        for name in metrics
    ]
    return Section("distributions", title, figures=figures)


def _paired_section(runs: pl.DataFrame, treatment: str, control: str, both: int) -> Section:
    from mas_eval import plots

    title = "Paired differences"
    if not has_values(runs, "dqs"):
        return Section("paired", title, omitted="the scores have no dqs values")
    if both < 2:
        return Section("paired", title, omitted=f"fewer than 2 cases were run by both {treatment} and {control}")
    figure = plots.paired(runs, "dqs", pair_on="case_id", treatment=treatment, control=control)
    caption = f"Per-case dqs differences {treatment} − {control} over {both:,} cases; mean and its 95% CI marked."
    return Section("paired", title, figures=[ReportFigure("paired_dqs", caption, figure)])


def _calibration_section(runs: pl.DataFrame) -> Section:
    from mas_eval import plots
    from mas_eval.stats import calibration

    title = "Calibration"
    if not has_values(runs, "gt_match"):
        return Section(
            "calibration", title, omitted="no ground truth: gt_match is null in every run, so calibration is undefined"
        )
    if not has_values(runs, "decision_confidence"):
        return Section("calibration", title, omitted="no decision_confidence values to calibrate")
    summary = calibration(runs)
    text = [
        "Is the stated confidence (decision_confidence) the probability of matching the ground truth? "
        "ECE is the run-weighted mean gap between confidence and accuracy over 10 equal-width bins; "
        "Brier the mean squared error of the confidence as a forecast."
    ]
    figure = plots.reliability(runs)
    return Section(
        "calibration",
        title,
        text=text,
        tables=[ReportTable("calibration", "Calibration per system", summary)],
        figures=[ReportFigure("reliability", "Reliability diagram: accuracy per confidence bin.", figure)],
    )


def _efficiency_section(runs: pl.DataFrame) -> Section:
    from mas_eval import plots

    title = "Efficiency and cost"
    cost = next((name for name in _COSTS if has_values(runs, name)), None)
    if cost is None:
        return Section("efficiency", title, omitted="the runs record no cost, tokens or seconds")
    if not has_values(runs, "dqs"):
        return Section("efficiency", title, omitted="the scores have no dqs values to set against cost")
    usage = [name for name in (*_COSTS, "efficiency_score") if name in runs.columns]
    means = system_means(runs, usage)
    by = "variant" if has_values(runs, "variant") else None
    figure = plots.cost_quality(runs, quality="dqs", cost=cost, by=by)
    caption = f"Mean dqs against mean {cost} per system{' and variant' if by else ''}, 95% CIs, Pareto front."
    return Section(
        "efficiency",
        title,
        tables=[ReportTable("usage", "Mean usage per system", means)],
        figures=[ReportFigure("cost_quality", caption, figure)],
    )


#: Severity levels of a conflict, from the mildest (:mod:`mas_eval.metrics.decision.conflicts`).
_LEVELS = ("low", "moderate", "high")


def _consensus_section(runs: pl.DataFrame, conflicts: pl.DataFrame | None) -> Section:
    title = "Consensus and conflicts"
    if not has_values(runs, "consensus_reached"):
        return Section("consensus", title, omitted="no run has two agents with beliefs: consensus is undefined")
    per_run = runs.group_by("system").agg(
        # The runs the decision family scored: another family's runs have no conflict count.
        pl.col("num_conflicts").is_not_null().sum().alias("runs"),
        pl.col("consensus_reached").cast(pl.Float64).mean().alias("consensus_reached"),
        pl.col("num_conflicts").cast(pl.Float64).mean().alias("conflicts_per_run"),
        *([pl.col("ranking_stability").mean()] if has_values(runs, "ranking_stability") else []),
        *(
            [pl.col("num_winner_changes").cast(pl.Float64).mean().alias("winner_changes_per_run")]
            if has_values(runs, "num_winner_changes")
            else []
        ),
    )
    if conflicts is not None and conflicts.height:
        levels = conflicts.group_by("system").agg(
            (pl.col("severity_level") == level).sum().alias(f"{level}_conflicts") for level in _LEVELS
        )
        per_run = per_run.join(levels, on="system", how="left").with_columns(
            pl.col(f"{level}_conflicts").fill_null(0) for level in _LEVELS
        )
    text = [
        "consensus_reached: share of runs whose consensus level reaches the threshold; conflicts: pairs of "
        "agents whose top choices differ and who each prefer their own by enough (crisis_mas_poc's consensus "
        "model), counted per severity (1 − cosine of their beliefs: low < 0.3 ≤ moderate < 0.6 ≤ high)."
    ]
    if has_values(runs, "ranking_stability"):
        text.append("ranking_stability: share of weight perturbations that keep the MCDA top alternative.")
    if has_values(runs, "num_winner_changes"):
        text.append(
            "winner_changes_per_run: steps of the one-criterion weight sweep whose MCDA winner differs from the "
            "step before (crisis_mas_poc's num_winner_changes), per run."
        )
    table = ReportTable("consensus", "Consensus and conflicts per system", per_run.sort("system"))
    return Section("consensus", title, text=text, tables=[table])
