"""The report's "Outcomes" section: each logged score per system, compared, over epochs, and against compute.

:func:`outcomes_section` is what :func:`mas_eval.report.build` adds when the scores have run
columns the ``outcomes`` family named from the data (a Dataset with an ``outcomes`` table was
scored, e.g. ingested from inspect_ai or lm-evaluation-harness logs); other scores get no such
section. It holds:

* each pass/fail score's pass rate per system (and task) with Wilson and Clopper–Pearson
  intervals (:func:`~mas_eval.stats.pass_rates`);
* every score compared between the two systems, paired on the case
  (:func:`~mas_eval.stats.compare`: McNemar's exact test and Newcombe's interval for a pass/fail
  score run once per case, the paired t on case means when cases have several epochs);
* with epochs: pass@k, pass^k and majority vote per system (:func:`~mas_eval.stats.pass_at_k`),
  the compute-matched comparison (:func:`~mas_eval.stats.compute_matched`: the control's
  majority over as many epochs as match the treatment's tokens) and the accuracy–cost frontier
  (:func:`~mas_eval.stats.accuracy_cost_frontier`, drawn by
  :func:`~mas_eval.plots.accuracy_cost_frontier`);
* tokens and cost per correct answer (:func:`~mas_eval.stats.cost_per_correct`): the system's
  own (``run_tokens``, ``run_cost_usd``), a judge's calls grading the runs apart (``evaluator_tokens``).

A part whose inputs are absent (no epochs, no tokens, one system) is a line saying so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from mas_eval.errors import MasEvalError
from mas_eval.report.findings import findings
from mas_eval.report.parts import ReportFigure, ReportTable, Section
from mas_eval.report.tables import has_values

if TYPE_CHECKING:
    from mas_eval.scoring.scores import Scores

__all__ = ["FAMILY", "has_outcomes", "outcome_columns", "outcomes_section"]

#: The metric family whose named run columns the section reports.
FAMILY = "outcomes"
#: The run columns of a run's tokens and cost (the outcomes family's), read by the epoch statistics.
TOKENS, COST = "run_tokens", "run_cost_usd"

KEY, TITLE = "outcomes", "Outcomes"

_ABOUT = (
    "Each score the evaluation logged for a run (the outcomes table), as a run column of its own name. A "
    "pass/fail score's pass rate has Wilson and Clopper–Pearson intervals; the two systems are compared on the "
    "cases both ran: McNemar's exact test with Newcombe's interval of the paired difference when each case was "
    "run once, the paired t on case means when cases have several epochs."
)


def has_outcomes(scores: Scores) -> bool:
    """Whether ``scores`` hold run columns the ``outcomes`` family named from the data."""
    return bool(scores.named.get(FAMILY))


def outcome_columns(scores: Scores) -> tuple[list[str], list[str]]:
    """The outcome columns of ``scores.runs`` that have values: the pass/fail ones (Boolean), then the others."""
    runs = scores.runs
    names = [name for name in scores.named.get(FAMILY, []) if has_values(runs, name)]
    pass_fail = [name for name in names if runs.schema[name] == pl.Boolean]
    return pass_fail, [name for name in names if name not in pass_fail]


def _by(runs: pl.DataFrame) -> str | None:
    return "task" if has_values(runs, "task") else None


def _has_epochs(runs: pl.DataFrame) -> bool:
    """Whether some system ran some case more than once, numbered by ``epoch``."""
    if not has_values(runs, "epoch"):
        return False
    return bool(runs.group_by("system", "case_id").agg(pl.col("epoch").n_unique()).get_column("epoch").max() > 1)


def outcomes_section(scores: Scores, treatment: str, control: str) -> Section:
    """The "Outcomes" section of ``scores``: omitted, with why, when no outcome has a value."""
    runs = scores.runs
    pass_fail, numeric = outcome_columns(scores)
    if not pass_fail and not numeric:
        return Section(KEY, TITLE, omitted="the outcomes have no values")
    from mas_eval import stats

    by = _by(runs)
    epochs = _has_epochs(runs)
    per = f" per {'task and ' if by else ''}system"
    text, tables, figures = [_ABOUT], [], []
    if pass_fail:
        # A case's epochs are a cluster (Miller 2024): the cluster-robust interval beside the binomial ones.
        cluster = "case_id" if epochs else None
        rates = pl.concat([stats.pass_rates(runs, name, by=by, cluster=cluster) for name in pass_fail])
        if cluster is None:
            rates = rates.drop("n_clusters", "cluster_se", "cluster_low", "cluster_high")
        if rates["note"].null_count() == rates.height:  # nothing set aside: no column of nothing
            rates = rates.drop("note")
        clustered = ", and the cluster-robust one over cases (their epochs a cluster)" if cluster else ""
        caption = f"Pass rate{per}, with 95% Wilson and Clopper–Pearson intervals{clustered}"
        tables.append(ReportTable("outcome_pass_rates", caption, rates))
    _comparison(runs, [*pass_fail, *numeric], treatment, control, text, tables)
    for name in pass_fail:
        _epochs(runs, name, epochs, treatment, control, text, tables, figures)
    return Section(KEY, TITLE, text=text, tables=tables, figures=figures)


def _comparison(
    runs: pl.DataFrame, names: list[str], treatment: str, control: str, text: list[str], tables: list[ReportTable]
) -> None:
    from mas_eval import stats

    systems = set(runs["system"].unique().to_list())
    if not {treatment, control} <= systems:
        text.append(f"No comparison of the outcomes: the runs have no {treatment} or no {control} runs.")
        return
    both = (
        runs.filter(pl.col("system").is_in([treatment, control]))
        .group_by("case_id")
        .agg(pl.col("system").n_unique())
        .filter(pl.col("system") == 2)
        .height
    )
    pair_on = "case_id" if both >= 2 else None
    try:
        table = stats.compare(runs, names, treatment=treatment, control=control, by=_by(runs), pair_on=pair_on)
    except MasEvalError as exc:
        text.append(f"No comparison of the outcomes: {exc}.")
        return
    text += findings(table, treatment)
    design = "paired on the case both ran" if pair_on else "unpaired (no case was run by both)"
    caption = f"{treatment} − {control} on each outcome, {design}, Holm-adjusted across these rows"
    tables.append(ReportTable("outcome_comparison", caption, table))


def _epochs(
    runs: pl.DataFrame,
    name: str,
    epochs: bool,
    treatment: str,
    control: str,
    text: list[str],
    tables: list[ReportTable],
    figures: list[ReportFigure],
) -> None:
    """pass@k, cost per correct answer, the compute-matched comparison and the frontier of pass/fail ``name``."""
    from mas_eval import plots, stats

    tokens = TOKENS if has_values(runs, TOKENS) else None
    cost = COST if has_values(runs, COST) else None
    if tokens is not None or cost is not None:
        spent = runs.filter(pl.col(name).is_not_null())
        try:
            table = stats.cost_per_correct(spent, name, tokens=tokens, cost=cost)
        except MasEvalError as exc:
            text.append(f"No cost per correct answer of {name}: {exc}.")
        else:
            caption = (
                f"{name}: tokens and cost per run and per correct answer, per system; the system's own calls "
                f"({', '.join(c for c in (tokens, cost) if c)}), a judge's calls grading the runs left out"
            )
            tables.append(ReportTable(f"outcome_cost_{name}", caption, table))
    if not epochs:
        return
    ks = _powers_of_two(int(runs.group_by("system", "case_id").len().get_column("len").max()))
    try:
        table = stats.pass_at_k(runs, name, k=ks, by=_by(runs), level="system")
    except MasEvalError as exc:
        text.append(f"No pass@k of {name}: {exc}.")
        return
    caption = f"{name} over each case's epochs: mean, majority vote, pass@k and pass^k, averaged over cases"
    tables.append(ReportTable(f"outcome_pass_at_k_{name}", caption, table))
    if tokens is None:
        text.append(f"No compute-matched comparison of {name}: the runs record no tokens.")
        return
    try:
        matched = stats.compute_matched(runs, name, treatment=treatment, control=control, level="summary")
        # Odd k only: a majority of an even k can tie, and a tie counts as failed, so even k dip.
        odd = list(range(1, ks[-1] + 1, 2))
        frontier = stats.accuracy_cost_frontier(runs, name, ks=odd, tokens=tokens, cost=cost)
    except MasEvalError as exc:
        text.append(f"No compute-matched comparison of {name}: {exc}.")
        return
    caption = (
        f"{name}: {treatment} against {control} with one run each (k=1) and with {control}'s majority vote over "
        f"as many epochs as match {treatment}'s tokens on the case (compute-matched)"
    )
    tables.append(ReportTable(f"outcome_compute_matched_{name}", caption, matched))
    figures.append(
        ReportFigure(
            f"outcome_frontier_{name}",
            f"{name}: pass rate of the majority of k epochs against tokens per case, k = {', '.join(map(str, odd))} "
            "(odd k: an even k can tie).",
            plots.accuracy_cost_frontier(frontier, x="tokens"),
        )
    )


def _powers_of_two(most: int) -> list[int]:
    """1, 2, 4, … up to ``most`` epochs, and ``most`` itself."""
    ks = [1]
    while ks[-1] * 2 <= most:
        ks.append(ks[-1] * 2)
    return ks if ks[-1] == most else [*ks, most]
