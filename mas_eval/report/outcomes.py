"""The report's "Outcomes" section: each logged score per system, over epochs, and what a correct answer costs.

:func:`outcomes_section` is what :func:`mas_eval.report.build` adds when the scores have run
columns the ``outcomes`` family named from the data (a Dataset with an ``outcomes`` table was
scored, e.g. ingested from inspect_ai or lm-evaluation-harness logs); other scores get no such
section. It leads with its figures, in the paper style of the rest, one colour per system:

* each pass/fail score's pass rate per system and task with its Wilson interval (the
  cluster-robust one when runs repeat a case) (:func:`~mas_eval.stats.pass_rates`,
  :func:`~mas_eval.plots.pass_rates`);
* with epochs: pass@k and pass^k against k per system with bootstrap bands over cases
  (:func:`~mas_eval.stats.pass_at_k_intervals`, :func:`~mas_eval.plots.pass_at_k`), and the
  accuracy–cost frontier (:func:`~mas_eval.stats.accuracy_cost_frontier`,
  :func:`~mas_eval.plots.frontier_curve`) beside the compute-matched comparison
  (:func:`~mas_eval.stats.compute_matched`);
* tokens and cost per correct answer (:func:`~mas_eval.stats.cost_per_correct`,
  :func:`~mas_eval.plots.cost_per_correct`): the system's own spending, the evaluator's calls left out;

then their tables, and the paired comparison of every score when the report's comparison does not
hold it already (:func:`~mas_eval.stats.compare`: McNemar's exact test and Newcombe's interval for a
pass/fail score run once per case, the paired t on case means when cases have several epochs). A
part whose inputs are absent (no epochs, no tokens, one system) is a line of "Not in this data".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from mas_eval.errors import MasEvalError
from mas_eval.report.findings import findings
from mas_eval.report.parts import ReportFigure, ReportTable, Section
from mas_eval.report.tables import has_values, repeats_cases

if TYPE_CHECKING:
    from mas_eval.scoring.scores import Scores
    from mas_eval.storage.dataset import Dataset

__all__ = [
    "BOOTSTRAP",
    "FAMILY",
    "evaluator_note",
    "figure_name",
    "has_outcomes",
    "outcome_columns",
    "outcomes_section",
]

#: The metric family whose named run columns the section reports.
FAMILY = "outcomes"
#: The run columns of a run's tokens and cost (the outcomes family's), read by the epoch statistics.
TOKENS, COST = "run_tokens", "run_cost_usd"
#: Bootstrap resamples (and seed) of the section's intervals over cases: the same report, bit for bit.
BOOTSTRAP = {"n_boot": 1000, "seed": 0}
#: Up to this many cases pass@k's bands are the bootstrap's; past it, the t interval over cases: with thousands
#: of independent cases the mean of per-case estimates is normal to well within the bands' width (Miller 2024,
#: "Adding Error Bars to Evals", §2), and the bootstrap's resamples cost seconds.
BOOTSTRAP_CASES = 2000

KEY, TITLE = "outcomes", "Outcomes"

_ABOUT = (
    "Each score the evaluation logged for a run (the outcomes table) is a run column of its own name. A pass/fail "
    "score's pass rate has Wilson and Clopper–Pearson intervals, and the cluster-robust one over cases when a "
    "system ran a case more than once (its epochs are not independent)."
)


def has_outcomes(scores: Scores) -> bool:
    """Check whether ``scores`` hold run columns the ``outcomes`` family named from the data.

    >>> import mas_eval
    >>> has_outcomes(mas_eval.score(mas_eval.simulate_outcomes(20, seed=1)))
    True
    """
    return bool(scores.named.get(FAMILY))


def outcome_columns(scores: Scores) -> tuple[list[str], list[str]]:
    """Return the outcome columns of ``scores.runs`` that have values: the pass/fail ones (Boolean), then the others.

    >>> import mas_eval
    >>> outcome_columns(mas_eval.score(mas_eval.simulate_outcomes(20, seed=1)))
    (['match'], ['f1'])
    """
    runs = scores.runs
    names = [name for name in scores.named.get(FAMILY, []) if has_values(runs, name)]
    pass_fail = [name for name in names if runs.schema[name] == pl.Boolean]
    return pass_fail, [name for name in names if name not in pass_fail]


def figure_name(prefix: str, name: str) -> str:
    """Make a figure's file name from a score's name: letters, digits and ``-`` kept, anything else ``-``.

    A score's name comes from the logs (``shape/short``) and names the figure's files in the Markdown and
    LaTeX reports, where a ``/`` would be a folder.

    >>> figure_name("outcome_pass_at_k", "shape/short")
    'outcome_pass_at_k_shape-short'
    """
    return f"{prefix}_{''.join(c if c.isascii() and (c.isalnum() or c == '-') else '-' for c in name)}"


def evaluator_note(dataset: Dataset | None) -> str:
    """Say what the tokens and cost count: the system's calls; the evaluator's, when the Dataset records any, apart."""
    note = (
        "Tokens and cost are what the system spent (run_tokens, run_cost_usd): a scorer's or judge's model calls, "
        "which the log adapters record apart (usage.evaluator), are not included (a Dataset ingested with "
        "--count-evaluator counts them in the runs' totals)."
    )
    if dataset is None or "usage" not in dataset.table_names:
        return note
    usage = dataset.scan("usage")
    if "evaluator" not in usage.collect_schema().names():
        return note
    judged = (
        usage.filter(pl.col("evaluator").fill_null(False))
        .select(
            pl.col("run_id").n_unique().alias("runs"),
            (pl.col("input_tokens").fill_null(0) + pl.col("output_tokens").fill_null(0)).sum().alias("tokens"),
        )
        .collect()
    )
    runs, tokens = judged.row(0)
    if not runs:
        return note + " The logs record no evaluator calls."
    return note + f" The logs record {tokens:,} tokens of evaluator calls in {runs:,} runs, left out here."


def outcomes_section(
    scores: Scores,
    treatment: str,
    control: str,
    comparisons: pl.DataFrame | None = None,
    dataset: Dataset | None = None,
) -> Section:
    """Make the "Outcomes" section of ``scores``: omitted, with why, when no outcome has a value.

    ``comparisons`` is the report's comparison: the scores it compares already are not compared again
    here. ``dataset``, when given, tells whether its logs recorded an evaluator's calls.
    """
    runs = scores.runs
    pass_fail, numeric = outcome_columns(scores)
    if not pass_fail and not numeric:
        return Section(KEY, TITLE, omitted="the outcomes have no values")
    from mas_eval import plots, stats

    by = _by(runs)
    epochs = repeats_cases(runs)
    text, tables, figures, missing = [_ABOUT], [], [], []
    if pass_fail:
        cluster = "case_id" if epochs else None
        rates = pl.concat([stats.pass_rates(runs, name, by=by, cluster=cluster) for name in pass_fail])
        if cluster is None:
            rates = rates.drop("n_clusters", "cluster_se", "cluster_low", "cluster_high")
        if rates["note"].null_count() == rates.height:  # nothing set aside: no column of nothing
            rates = rates.drop("note")
        interval = "cluster" if cluster else "wilson"
        how = (
            "cluster-robust over cases (a case's epochs are not independent)" if cluster else "Wilson's score interval"
        )
        per = f" per {'task and ' if by else ''}system"
        figures.append(
            ReportFigure(
                "outcome_pass_rates",
                f"Pass rate{per} of each pass/fail score, with its 95% {how}.",
                plots.pass_rates(rates, interval=interval),
            )
        )
        clustered = ", and the cluster-robust one over cases (their epochs a cluster)" if cluster else ""
        caption = f"Pass rate{per}, with 95% Wilson and Clopper–Pearson intervals{clustered}"
        tables.append(ReportTable("outcome_pass_rates", caption, rates))
    _comparison(runs, [*pass_fail, *numeric], treatment, control, comparisons, text, tables, missing)
    for index, name in enumerate(pass_fail):
        _epochs(runs, name, epochs, treatment, control, tables, figures, missing)
        _costs(runs, name, index == 0, dataset, text, tables, figures, missing)
    # Figures first, in the order a reader asks: how often, how consistently, at what cost.
    return Section(KEY, TITLE, text=text, tables=tables, figures=figures, missing=missing)


def _by(runs: pl.DataFrame) -> str | None:
    return "task" if has_values(runs, "task") else None


def _comparison(
    runs: pl.DataFrame,
    names: list[str],
    treatment: str,
    control: str,
    comparisons: pl.DataFrame | None,
    text: list[str],
    tables: list[ReportTable],
    missing: list[str],
) -> None:
    from mas_eval import stats

    systems = set(runs["system"].unique().to_list())
    if not {treatment, control} <= systems:
        missing.append(f"no comparison of the outcomes: the runs have no {treatment} or no {control} runs")
        return
    if comparisons is not None and "metric" in comparisons.columns and set(names) <= set(comparisons["metric"]):
        text.append(f"The scores are compared in the section {treatment} vs {control}, and drawn in its forest plot.")
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
        missing.append(f"no comparison of the outcomes: {exc}")
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
    tables: list[ReportTable],
    figures: list[ReportFigure],
    missing: list[str],
) -> None:
    """pass@k and pass^k, the compute-matched comparison and the frontier of pass/fail ``name``."""
    from mas_eval import plots, stats

    if not epochs:
        missing.append(f"no pass@k, pass^k or accuracy–cost frontier of {name}: each system ran each case once")
        return
    most = int(runs.filter(pl.col(name).is_not_null()).group_by("system", "case_id").len().get_column("len").max())
    ks = _powers_of_two(most)
    systems = set(runs["system"].unique().to_list())
    pair = {"treatment": treatment, "control": control} if {treatment, control} <= systems else {}
    cases = runs.filter(pl.col(name).is_not_null()).group_by("system").agg(pl.col("case_id").n_unique())
    few = int(cases["case_id"].max()) <= BOOTSTRAP_CASES  # type: ignore[arg-type]
    boot = BOOTSTRAP if few else {**BOOTSTRAP, "n_boot": 0}
    try:
        intervals = stats.pass_at_k_intervals(runs, name, k=ks, **pair, **boot)
    except MasEvalError as exc:
        missing.append(f"no pass@k of {name}: {exc}")
        return
    band = (
        f"95% bootstrap bands over cases ({BOOTSTRAP['n_boot']:,} resamples)"
        if few
        else f"95% t bands over cases (past {BOOTSTRAP_CASES:,} cases the bootstrap's agree with them)"
    )
    figures.append(
        ReportFigure(
            figure_name("outcome_pass_at_k", name),
            f"{name}: pass@k (solid: at least one of k epochs passes) and pass^k (dashed: all k pass) against k, per "
            f"system, with {band}.",
            plots.pass_at_k(intervals, band="boot" if few else "t"),
        )
    )
    caption = (
        f"{name}: pass@k and pass^k per system over cases with at least k epochs, the t and bootstrap 95% intervals, "
        f"and the paired difference {treatment} − {control}"
        if pair
        else f"{name}: pass@k and pass^k per system over cases with at least k epochs, the t and bootstrap intervals"
    )
    # A k above a system's epochs has no case to estimate from: those rows say so in their note, not in the report.
    estimated = intervals.filter(pl.col("cases") > 0)
    tables.append(ReportTable(figure_name("outcome_pass_at_k", name).replace("-", "_"), caption, estimated))
    tokens, cost = _spending(runs, name)
    if tokens is None:
        missing.append(f"no compute-matched comparison or frontier of {name}: some runs record no tokens")
        return
    try:
        matched = stats.compute_matched(runs, name, treatment=treatment, control=control, level="summary")
        # Odd k only: a majority of an even k can tie, and a tie counts as failed, so even k dip.
        odd = list(range(1, ks[-1] + 1, 2))
        frontier = stats.accuracy_cost_frontier(runs, name, ks=odd, tokens=tokens, cost=cost)
    except MasEvalError as exc:
        missing.append(f"no compute-matched comparison of {name}: {exc}")
        return
    figures.append(
        ReportFigure(
            figure_name("outcome_frontier", name),
            f"{name}: pass rate of the majority of k epochs against tokens per case, k = {', '.join(map(str, odd))} "
            "(odd k: an even k can tie). A control's curve above the treatment's point is a compute-matched win.",
            plots.frontier_curve(frontier, x="tokens"),
            data=frontier,
        )
    )
    caption = (
        f"{name}: {treatment} against {control} with one run each (k=1) and with {control}'s majority vote over "
        f"as many epochs as match {treatment}'s tokens on the case (compute-matched)"
    )
    tables.append(ReportTable(figure_name("outcome_compute_matched", name).replace("-", "_"), caption, matched))


def _costs(
    runs: pl.DataFrame,
    name: str,
    drawn: bool,
    dataset: Dataset | None,
    text: list[str],
    tables: list[ReportTable],
    figures: list[ReportFigure],
    missing: list[str],
) -> None:
    """Tokens and cost per correct answer of pass/fail ``name`` (its figure when ``drawn``)."""
    from mas_eval import plots, stats

    tokens, cost = _spending(runs, name)
    if tokens is None and cost is None:
        missing.append(f"no tokens or cost per correct answer of {name}: no spending is recorded for every run")
        return
    if cost is None and has_values(runs, COST):
        missing.append(f"no cost per correct answer of {name}: some runs record no cost (a model without a price)")
    try:
        table = stats.cost_per_correct(runs.filter(pl.col(name).is_not_null()), name, tokens=tokens, cost=cost)
    except MasEvalError as exc:
        missing.append(f"no cost per correct answer of {name}: {exc}")
        return
    what = " and ".join(w for w, c in (("tokens", tokens), ("cost", cost)) if c is not None)
    tables.append(
        ReportTable(figure_name("outcome_cost", name).replace("-", "_"), f"{name}: {what} per run and per correct "
                    "answer, per system", table)
    )  # fmt: skip
    if drawn:
        text.append(evaluator_note(dataset))
        figures.append(
            ReportFigure(
                figure_name("outcome_cost", name),
                f"{name}: {what} per correct answer (bars: what all the runs spent over the number that passed) and "
                "per run (white ticks), per system; the evaluator's calls are not included.",
                plots.cost_per_correct(table),
            )
        )


def _spending(runs: pl.DataFrame, name: str) -> tuple[str | None, str | None]:
    """Return the tokens and cost columns recorded for every run with a value of ``name`` (None: not all are)."""
    scored = runs.filter(pl.col(name).is_not_null())
    recorded = [c for c in (TOKENS, COST) if c in scored.columns and scored.height and scored[c].null_count() == 0]
    return (TOKENS if TOKENS in recorded else None), (COST if COST in recorded else None)


def _powers_of_two(most: int) -> list[int]:
    """1, 2, 4, … up to ``most`` epochs, and ``most`` itself."""
    ks = [1]
    while ks[-1] * 2 <= most:
        ks.append(ks[-1] * 2)
    return ks if ks[-1] == most else [*ks, most]
