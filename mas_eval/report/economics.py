"""The report's "Is the extra cost worth it?" section: the cost-effectiveness of the treatment against the control.

:func:`cost_section` weighs the report's main score (the first pass/fail outcome, else the first
column compared) against what the runs cost: :func:`~mas_eval.stats.cost_effectiveness`, paired on
the case both systems ran, gives the incremental cost per extra unit of the score (per extra correct
answer: the ICER) with Fieller's and a paired-bootstrap interval, which quadrant it falls in and what
the intervals show; :func:`~mas_eval.plots.cost_effectiveness_plane` draws the bootstrap cloud on the
plane and :func:`~mas_eval.plots.acceptability_curve` how likely the treatment is worth its cost at
each price. The cost is the runs' USD cost when they record one, else their tokens (the system's,
the evaluator's calls left out). One line of "Not in this data" when the runs record neither or one
system is missing.
"""

from __future__ import annotations

import polars as pl

from mas_eval.errors import MasEvalError
from mas_eval.formatting import format_ci, format_number
from mas_eval.report.parts import ReportFigure, ReportTable, Section
from mas_eval.report.tables import has_values

__all__ = ["COSTS", "cost_section"]

#: The run columns a cost can be read from, in order of preference, and how a sentence names their unit.
COSTS = {
    "run_cost_usd": "USD",
    "cost_usd": "USD",
    "system_cost_usd": "USD",
    "run_tokens": "tokens",
    "system_tokens": "tokens",
    "tokens_used": "tokens",
}
#: The bootstrap of the section: resamples and seed (the same report, bit for bit).
BOOTSTRAP = {"n_boot": 1000, "seed": 0}

KEY, TITLE = "cost", "Is the extra cost worth it?"


def _cost_column(runs: pl.DataFrame, treatment: str, control: str) -> str | None:
    """Return the first of :data:`COSTS` recorded for runs of both systems."""
    both = runs.filter(pl.col("system").is_in([treatment, control]))
    for name in COSTS:
        if has_values(both, name) and both.filter(pl.col(name).is_not_null())["system"].n_unique() == 2:
            return name
    return None


def _ratio_text(row: dict[str, object], unit: str, effect: str) -> str:
    """Write the ICER with its intervals as a reader reads it."""
    icer = row["icer"]
    if icer is None:
        return f"The ICER is undefined: the difference in {effect} is 0."
    fieller = row["fieller"]
    if fieller == "bounded":
        fieller_text = f"Fieller's 95% interval {format_ci(row['fieller_low'], row['fieller_high'])}"  # type: ignore[arg-type]
    elif fieller == "exclusive":
        fieller_text = (
            f"Fieller's 95% set: below {format_number(row['fieller_low'])} or above "  # type: ignore[arg-type]
            f"{format_number(row['fieller_high'])} (the difference in effect is not shown)"  # type: ignore[arg-type]
        )
    else:
        fieller_text = "Fieller's 95% set: any ratio (neither difference is shown)"
    boot = (
        f"; bootstrap {format_ci(row['bootstrap_low'], row['bootstrap_high'])}"  # type: ignore[arg-type]
        if row["bootstrap_low"] is not None
        else ""
    )
    return (
        f"ICER: {format_number(icer)} {unit} per unit of {effect} (per extra correct answer for a pass/fail score); "  # type: ignore[arg-type]
        f"{fieller_text}{boot}. Verdict: {row['verdict']}."
    )


def cost_section(runs: pl.DataFrame, metric: str, treatment: str, control: str, paired_cases: int) -> Section:
    """Make the section on the cost-effectiveness of ``treatment`` against ``control`` on ``metric``.

    Without costs the section is omitted, saying why.

    Paired on ``case_id`` when at least two cases were run by both systems (``paired_cases``), else
    two independent samples of runs.
    """
    from mas_eval import plots, stats

    systems = set(runs["system"].unique().to_list())
    if not {treatment, control} <= systems:
        return Section(KEY, TITLE, omitted=f"the runs have no {treatment} or no {control} runs to weigh")
    cost = _cost_column(runs, treatment, control)
    if cost is None:
        return Section(KEY, TITLE, omitted="the runs record no cost or tokens")
    pair_on = "case_id" if paired_cases >= 2 else None
    common = {"cost": cost, "treatment": treatment, "control": control, "pair_on": pair_on, **BOOTSTRAP}
    try:
        summary = stats.cost_effectiveness(runs, metric, **common)
        cloud = stats.cost_effectiveness(runs, metric, level="replicates", **common)
        curve = stats.cost_effectiveness(runs, metric, level="acceptability", **common)
    except MasEvalError as exc:
        return Section(KEY, TITLE, omitted=f"no cost-effectiveness of {metric} against {cost}: {exc}")
    row = summary.row(0, named=True)
    if row["delta_effect"] is None or row["delta_cost"] is None:
        why = row["warning"] or "no case or run of both systems has both values"
        return Section(KEY, TITLE, omitted=f"no cost-effectiveness of {metric} against {cost}: {why}")
    unit = COSTS[cost]
    own = "; the system's own, an evaluator's calls not included" if cost.startswith(("run_", "system_")) else ""
    design = f"paired on the {row['n_pairs']:,} cases both ran" if pair_on else "two independent samples of runs"
    text = [
        f"{metric} against {cost} ({unit}{own}), {treatment} − "
        f"{control}, {design}: {treatment} changes {metric} by {format_number(row['delta_effect'])} "
        f"{format_ci(row['delta_effect_low'], row['delta_effect_high'])} at {format_number(row['delta_cost'])} "
        f"{format_ci(row['delta_cost_low'], row['delta_cost_high'])} {unit} more per case.",
        _ratio_text(row, unit, metric),
        "The plane shows where the bootstrap's replicates of the two differences fall: right of the vertical axis "
        f"{treatment} is better, above the horizontal one dearer. The acceptability curve is the share of them in "
        f"which {treatment} is worth its cost at each price per unit of {metric}.",
    ]
    if row["warning"]:
        text.append(f"Note: {row['warning']}.")
    figures = [
        ReportFigure(
            "cost_plane",
            f"Cost-effectiveness plane of {treatment} against {control}: the difference in {cost} against the "
            f"difference in {metric}, the estimate with its 95% intervals and {BOOTSTRAP['n_boot']:,} bootstrap "
            "replicates.",
            plots.cost_effectiveness_plane(summary, cloud, treatment=treatment, control=control),
            data=cloud,
        ),
        ReportFigure(
            "cost_acceptability",
            f"Acceptability curve: the probability that {treatment} is worth its extra cost against the price of one "
            f"unit of {metric} ({unit}).",
            plots.acceptability_curve(curve, treatment=treatment),
            data=curve,
        ),
    ]
    caption = f"{treatment} − {control}: {metric} against {cost}, the ICER with Fieller's and the bootstrap's intervals"
    return Section(KEY, TITLE, text=text, tables=[ReportTable("cost_effectiveness", caption, summary)], figures=figures)
