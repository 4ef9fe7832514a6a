r"""What a system spends over epochs: the cost per correct answer and the compute-matched comparison.

Every function takes one row per run (a Polars frame, or anything with ``.runs``) and the names
of its columns, as :mod:`~mas_eval.stats.epochs` does: the outcome ``metric``, ``system``, ``case``
(``case_id``), ``epoch`` (which repeat, 1 = first), ``tokens`` (``run_tokens``) and ``cost``
(``run_cost_usd``). Runs whose ``metric`` is null are left out; inputs are sorted by their keys
and epoch before any sum, so results do not depend on row order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, Options, validate_params
from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.stats._common import (
    ASIDE,
    COLUMN_NAME,
    GROUP,
    PROBABILITY,
    SYSTEM_NAME,
    as_lazy,
    aside_note,
    column_list,
    joined_notes,
    set_aside,
    with_aside,
)
from mas_eval.stats._epoch_runs import (
    EPOCH_COLUMNS,
    POSITION,
    SCORE,
    SPENT,
    VALUE,
    epoch_runs,
    join_spending,
    named_columns,
)
from mas_eval.stats.proportions import mcnemar_p_values
from mas_eval.stats.ttests import t_inference

__all__ = [
    "Budget",
    "MatchedLevel",
    "Rule",
    "TreatmentRuns",
    "compute_matched",
    "cost_per_correct",
]

#: What :func:`compute_matched` returns: one row per case, or the summary rows.
MatchedLevel = Literal["case", "summary"]
#: The spending :func:`compute_matched` matches on.
Budget = Literal["tokens", "cost"]
#: How the control's first k epochs give one answer: majority vote, or the run best by ``score``.
Rule = Literal["majority", "best"]
#: Which of the treatment's runs on a case it is judged by: its first epoch, or its mean over epochs.
TreatmentRuns = Literal["first", "mean"]


# --- cost per correct answer ----------------------------------------------------------------------


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "tokens": [COLUMN_NAME, NONE],
        "cost": [COLUMN_NAME, NONE],
        **EPOCH_COLUMNS,
    }  # type: ignore[dict-item]
)
def cost_per_correct(
    run_metrics: Any,
    metric: str,
    by: str | Sequence[str] | None = None,
    *,
    tokens: str | None = "run_tokens",
    cost: str | None = "run_cost_usd",
    system: str = "system",
    case: str = "case_id",
    epoch: str = "epoch",
) -> pl.DataFrame:
    r"""Return what a correct answer costs each system: tokens and cost per correct answer, and per run.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run.
    metric : str
        The pass/fail outcome (boolean or 0/1).
    by : str or list of str, optional
        Grouping columns besides ``system``.
    tokens, cost : str or None
        Each run's tokens and cost (not negative); ``None`` leaves that one out (not both).
    system, case, epoch : str
        The system, case and epoch columns (a case and epoch name one run).

    Returns
    -------
    polars.DataFrame
        The ``by`` and ``system`` columns, then ``runs``, ``passed``, ``pass_rate``, and for
        ``tokens`` (and likewise ``cost``): ``tokens`` (the sum :math:`T`), ``tokens_per_run``
        (:math:`T/n`), ``tokens_per_correct`` (:math:`T/c`, null when nothing passed); when
        ``run_metrics`` has the outcomes family's ``evaluator_tokens`` column (a judge's tokens,
        which its ``run_tokens`` leave out), ``evaluator_tokens``: their sum, the tokens not
        divided; and ``note``, which says so when a judge spent any.

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above, or ``tokens`` and ``cost`` both None.
    SchemaError
        A named column is missing, or not numeric or boolean (the epochs: not integers).
    DataError
        A metric other than 0/1; a null or negative token count or cost; two runs of one case and epoch.

    Notes
    -----
    :math:`T/c` is the expected spending per correct answer when a system is run until it is
    right, the "cost of pass" of Erol et al. (2025, "Cost-of-Pass: An Economic Framework for
    Evaluating Language Models"), estimated by the ratio of sums (not a mean of per-case ratios).

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas", "mas", "single", "single"], "case_id": ["a", "b"] * 2,
    ...                      "epoch": 1, "ok": [1, 1, 1, 0], "run_tokens": [900, 1100, 200, 300]})
    >>> cost_per_correct(runs, "ok", cost=None).select("system", "tokens_per_run", "tokens_per_correct").rows()
    [('mas', 1000.0, 1000.0), ('single', 250.0, 500.0)]
    """
    spent = {name: column for name, column in (("tokens", tokens), ("cost", cost)) if column is not None}
    if not spent:
        msg = "cost_per_correct: tokens and cost are both None; name at least one column to divide"
        raise InvalidParameterError(msg)
    groups = [*column_list(by, "by"), system]
    frame, aside = set_aside(as_lazy(run_metrics), [metric, *spent.values()], groups)
    runs, _ = epoch_runs(frame, metric, [*groups, case], epoch, "cost_per_correct")
    where = "cost_per_correct"
    runs, judged = join_spending(frame, runs, [*groups, case, epoch], spent, judged=tokens is not None, where=where)
    aggregates = [pl.len().cast(pl.Int64).alias("runs"), pl.col(VALUE).sum().cast(pl.Int64).alias("passed")]
    aggregates += [pl.col(name).sum().cast(pl.Float64).alias(name) for name in spent]
    if judged is not None:
        aggregates.append(pl.when(pl.col(judged).count() > 0).then(pl.col(judged).sum()).alias(judged))
    out = runs.group_by(groups, maintain_order=True).agg(aggregates).sort(groups)
    per = []
    for name in spent:
        per += [
            (pl.col(name) / pl.col("runs")).alias(f"{name}_per_run"),
            pl.when(pl.col("passed") > 0).then(pl.col(name) / pl.col("passed")).alias(f"{name}_per_correct"),
        ]
    out = out.with_columns(*per, pass_rate=pl.col("passed") / pl.col("runs"))
    ordered = [c for name in spent for c in (name, f"{name}_per_run", f"{name}_per_correct")]
    notes = [pl.when(pl.col("passed") == 0).then(pl.lit("no run passed: the cost per correct answer is undefined"))]
    if judged is not None:
        ordered.append(judged)
        said = "tokens are the system's: a judge's tokens (evaluator_tokens) are left out"
        notes.append(pl.when(pl.col(judged) > 0).then(pl.lit(said)))
    note = joined_notes(*notes, aside_note(named_columns([metric, *spent.values()])))
    out = with_aside(out, aside, groups)
    return out.select(*groups, "runs", "passed", "pass_rate", *ordered, note.alias("note"))


# --- compute-matched comparison -------------------------------------------------------------------


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "treatment": [SYSTEM_NAME],
        "control": [SYSTEM_NAME],
        "budget": [Options.of(Budget)],
        "rule": [Options.of(Rule)],
        "score": [COLUMN_NAME, NONE],
        "treatment_runs": [Options.of(TreatmentRuns)],
        "level": [Options.of(MatchedLevel)],
        "tokens": [COLUMN_NAME],
        "cost": [COLUMN_NAME],
        "confidence": [PROBABILITY],
        **EPOCH_COLUMNS,  # type: ignore[dict-item]
    }
)
def compute_matched(
    run_metrics: Any,
    metric: str,
    treatment: str = "mas",
    control: str = "single",
    by: str | Sequence[str] | None = None,
    *,
    budget: Budget = "tokens",
    rule: Rule = "majority",
    score: str | None = None,
    treatment_runs: TreatmentRuns = "first",
    level: MatchedLevel = "case",
    tokens: str = "run_tokens",
    cost: str = "run_cost_usd",
    system: str = "system",
    case: str = "case_id",
    epoch: str = "epoch",
    confidence: float = 0.95,
) -> pl.DataFrame:
    r"""Compare the treatment (a MAS) with the control (a single agent) given as much compute on each case.

    On each case the control answers by the majority vote (or the run best by ``score``) over its
    first :math:`k` epochs, :math:`k` the smallest whose cumulative tokens (or cost) reach the
    treatment's on that case. A MAS that spends five times a single agent's tokens is then
    compared with a single agent that gets five tries.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run.
    metric : str
        The pass/fail outcome (boolean or 0/1).
    treatment, control : str
        The two values of ``system`` compared.
    by : str or list of str, optional
        Grouping columns (a task); a case is a (group, case) pair.
    budget : {"tokens", "cost"}
        Match on the ``tokens`` column or on the ``cost`` column.
    rule : {"majority", "best"}
        The control's answer over k epochs: the majority vote (a tie does not pass), or the
        outcome of its run with the highest ``score`` (the earliest epoch among equals).
    score : str, optional
        The column ``rule="best"`` ranks the control's runs by (higher is better); required then.
    treatment_runs : {"first", "mean"}
        ``"first"``: the treatment's first epoch on the case, its outcome and its spending.
        ``"mean"``: its mean outcome and mean spending per run over all its epochs (the
        outcome is then a pass rate, and the pass/fail counts of the summary are null).
    level : {"case", "summary"}
        One row per case, or the summary rows.
    tokens, cost : str
        Each run's tokens and cost (not negative); only the one ``budget`` names is read.
    system, case, epoch : str
        The system, case and epoch columns.
    confidence : float
        Level of the paired t interval of the summary, in (0, 1).

    Returns
    -------
    polars.DataFrame
        ``level="case"``: the ``by`` and ``case`` columns, then

        ====================== =====================================================
        k                      control epochs matched (null when unmatched)
        treatment_budget       the treatment's spending on the case
        control_budget         the control's cumulative spending over its k epochs
        treatment_outcome      1/0 (a pass rate when ``treatment_runs="mean"``)
        control_outcome        the control's answer over k epochs, 1/0
        control_tie            its vote over k epochs was a tie (null for ``"best"``)
        control_outcome_1      the control's first epoch, 1/0: the comparison at k = 1
        control_budget_1       the control's spending on its first epoch
        control_epochs         the control's epochs on the case
        note                   why a case is unmatched, or null
        ====================== =====================================================

        ``level="summary"``: per ``by`` group, a row with ``comparison = "k=1"`` (one control
        run against the treatment) and one with ``"compute-matched"`` (k runs), over the
        matched cases: ``cases``, ``treatment_rate``, ``control_rate``, ``difference``
        (treatment − control), the paired t on the cases' differences (``statistic``, ``dof``,
        ``p_value``, ``ci_low``, ``ci_high``), the pass/fail counts ``both``,
        ``treatment_only``, ``control_only``, ``neither`` (McNemar's table) and ``mcnemar_p``
        (McNemar's exact test of ``treatment_only`` against ``control_only``,
        :func:`~mas_eval.stats.proportions.mcnemar_exact`; null unless both outcomes are 0/1), ``mean_k``,
        ``treatment_budget`` and ``control_budget`` (means per case), ``unmatched`` (cases left
        out) and ``note``.

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above; ``rule="best"`` without ``score``; equal systems.
    SchemaError
        A named column is missing, or not numeric or boolean (the epochs: not integers).
    DataError
        A metric other than 0/1, a null or negative spending, a null score, two runs of one
        case and epoch, or no case of the treatment.

    Notes
    -----
    The control's epochs are taken in epoch order, so the matched answer is what the control
    would have given had it been stopped once it had spent the treatment's budget (the
    specification's "Outcomes of any benchmark"; the "compute-matched" baselines of Kapoor et
    al. 2024, "AI Agents That Matter"). Since
    spending is not negative, the cumulative spending rises with k and the smallest k is
    well defined. A case where all the control's epochs together spend less than the
    treatment is kept with a note and left out of the summary; so are cases either system
    lacks.

    The paired t is :math:`t = \bar d / (s_d/\sqrt{m})` with :math:`m - 1` degrees of freedom
    over the :math:`m` matched cases' differences :math:`d_i` (the paired t of
    :func:`~mas_eval.stats.compare`, whose inference it reuses).

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] + ["single"] * 3, "case_id": "a", "epoch": [1, 1, 2, 3],
    ...                      "ok": [1, 0, 1, 1], "run_tokens": [250, 100, 100, 100]})
    >>> compute_matched(runs, "ok").select("k", "treatment_budget", "control_budget", "control_outcome").rows()
    [(3, 250.0, 300.0, 1)]
    """
    where = "compute_matched"
    if treatment == control:
        msg = f"{where}: treatment and control are both {treatment!r}; name two systems"
        raise InvalidParameterError(msg)
    if rule == "best" and score is None:
        msg = f"{where}: rule='best' ranks the control's runs by a score; name its column with score=..."
        raise InvalidParameterError(msg)
    groups = column_list(by, "by")
    cases = [*groups, case]
    spent_column = tokens if budget == "tokens" else cost
    used = [metric, spent_column, *([score] if rule == "best" and score else [])]
    frame, aside = set_aside(as_lazy(run_metrics), used, [*cases, system])
    runs, _ = epoch_runs(
        frame, metric, [*cases, system], epoch, where, spent=spent_column, score=score if rule == "best" else None
    )
    mine = runs.filter(pl.col(system) == treatment)
    if mine.height == 0:
        msg = f"{where}: no run of the treatment {treatment!r} has a {metric!r}; the systems are: " + ", ".join(
            map(repr, runs[system].unique().sort().to_list())
        )
        raise DataError(msg)
    if treatment_runs == "first":
        treated = mine.filter(pl.col(POSITION) == 1).select(
            *cases, treatment_outcome=pl.col(VALUE), treatment_budget=pl.col(SPENT).cast(pl.Float64)
        )
    else:
        treated = mine.group_by(cases, maintain_order=True).agg(
            treatment_outcome=pl.col(VALUE).mean(), treatment_budget=pl.col(SPENT).mean()
        )
    answers = _control_answers(runs.filter(pl.col(system) == control), cases, rule)
    matched = (
        answers.join(treated.select(*cases, "treatment_budget"), on=cases, how="inner", nulls_equal=True)
        .filter(pl.col("control_budget") >= pl.col("treatment_budget"))
        .filter(pl.col("k") == pl.col("k").min().over(cases))
        .select(*cases, "k", "control_budget", "control_outcome", "control_tie")
    )
    firsts = answers.filter(pl.col("k") == 1).select(
        *cases, control_outcome_1=pl.col("control_outcome"), control_budget_1=pl.col("control_budget")
    )
    available = answers.group_by(cases).agg(
        control_epochs=pl.len().cast(pl.Int64), _control_total=pl.col("control_budget").max()
    )
    all_cases = pl.concat([treated.select(cases), available.select(cases)]).unique().sort(cases, nulls_last=True)
    table = (
        all_cases.join(treated, on=cases, how="left", nulls_equal=True)
        .join(matched, on=cases, how="left", nulls_equal=True)
        .join(firsts, on=cases, how="left", nulls_equal=True)
        .join(available, on=cases, how="left", nulls_equal=True)
        .sort(cases, nulls_last=True)
    )
    note = (
        pl.when(pl.col("treatment_outcome").is_null())
        .then(pl.lit(f"no run of {treatment!r} on this case"))
        .when(pl.col("control_epochs").is_null())
        .then(pl.lit(f"no run of {control!r} on this case"))
        .when(pl.col("k").is_null())
        .then(
            pl.format(
                f"{control!r}'s {{}} epochs spend {{}} {budget}, less than {treatment!r}'s {{}}: not matched",
                "control_epochs", "_control_total", "treatment_budget",
            )
        )
    )  # fmt: skip
    table = with_aside(table, aside, cases)
    note = joined_notes(note, aside_note(named_columns(used)))
    table = table.with_columns(note.alias("note"), pl.col("control_epochs").fill_null(0)).select(
        *cases, "k", "treatment_budget", "control_budget", "treatment_outcome", "control_outcome", "control_tie",
        "control_outcome_1", "control_budget_1", "control_epochs", "note", ASIDE,
    )  # fmt: skip
    if rule == "best":
        table = table.with_columns(pl.lit(None, pl.Boolean).alias("control_tie"))
    if level == "case":
        return table.drop(ASIDE)
    return _matched_summary(table, groups, treatment_runs == "first", confidence, aside_note(named_columns(used)))


def _control_answers(control: pl.DataFrame, cases: list[str], rule: str) -> pl.DataFrame:
    """Per case and k = 1..n: the control's cumulative spending over its first k epochs and its answer."""
    k = pl.col(POSITION)
    if rule == "majority":
        passed = pl.col(VALUE).cum_sum().over(cases)
        answer, tie = (2 * passed > k).cast(pl.Int64), 2 * passed == k
    else:
        # The best run so far changes only at a strictly higher score: among equal scores the earliest epoch wins.
        earlier = pl.col(SCORE).cum_max().shift(1).over(cases)
        new_best = earlier.is_null() | (pl.col(SCORE) > earlier)
        answer = pl.when(new_best).then(pl.col(VALUE)).otherwise(None).forward_fill().over(cases).cast(pl.Int64)
        tie = pl.lit(None, pl.Boolean)
    return control.select(
        *cases,
        k.alias("k"),
        pl.col(SPENT).cum_sum().over(cases).cast(pl.Float64).alias("control_budget"),
        answer.alias("control_outcome"),
        tie.alias("control_tie"),
    )


def _matched_summary(
    table: pl.DataFrame, groups: list[str], binary: bool, confidence: float, said: pl.Expr
) -> pl.DataFrame:
    """Return the k = 1 and compute-matched rows of each group, over its matched cases.

    ``said`` is the note on the runs set aside, from the cases' :data:`ASIDE` counts.
    """
    keys = groups or [GROUP]
    if not groups:
        table = table.with_columns(pl.lit(0, pl.Int8).alias(GROUP))
    matched = table.filter(pl.col("k").is_not_null())
    every = table.group_by(keys, maintain_order=True).agg(
        unmatched=pl.col("k").is_null().sum().cast(pl.Int64), _aside=pl.col(ASIDE).sum()
    )
    t = pl.col("treatment_outcome").cast(pl.Float64)
    parts = []
    for label, answer, spent in (
        ("k=1", "control_outcome_1", "control_budget_1"),
        ("compute-matched", "control_outcome", "control_budget"),
    ):
        c = pl.col(answer).cast(pl.Float64)
        d = t - c

        def count(condition: pl.Expr) -> pl.Expr:
            return condition.sum().cast(pl.Int64) if binary else pl.lit(None, pl.Int64)

        agg = matched.group_by(keys, maintain_order=True).agg(
            cases=pl.len().cast(pl.Int64),
            treatment_rate=t.mean(),
            control_rate=c.mean(),
            difference=d.mean(),
            _var=d.var(ddof=1),
            both=count((t == 1) & (c == 1)),
            treatment_only=count((t == 1) & (c == 0)),
            control_only=count((t == 0) & (c == 1)),
            neither=count((t == 0) & (c == 0)),
            mean_k=pl.col("k").cast(pl.Float64).mean() if answer == "control_outcome" else pl.lit(1.0),
            treatment_budget=pl.col("treatment_budget").mean(),
            control_budget=pl.col(spent).mean(),
        )
        # Every group has its two rows, a group without a matched case too (with cases = 0).
        rows = every.join(agg, on=keys, how="left", nulls_equal=True, maintain_order="left")
        counts = ["cases", *(["both", "treatment_only", "control_only", "neither"] if binary else [])]
        parts.append(rows.with_columns(pl.col(counts).fill_null(0), comparison=pl.lit(label)))
    out = pl.concat(parts)
    n = out["cases"].to_numpy().astype(float)
    mean = out["difference"].fill_null(np.nan).to_numpy()
    var = out["_var"].fill_null(np.nan).to_numpy()
    with np.errstate(all="ignore"):
        se = np.sqrt(var / n)
    # A zero SE (every difference equal) has no t: NaN in, NaN out, and a note says why.
    inference = t_inference(mean, np.where(se > 0, se, np.nan), n - 1.0, confidence)
    out = out.with_columns(
        statistic=pl.Series(inference["statistic"], nan_to_null=True),
        dof=pl.Series(np.where(np.isfinite(inference["statistic"]), n - 1.0, np.nan), nan_to_null=True),
        p_value=pl.Series(inference["p_value"], nan_to_null=True),
        ci_low=pl.Series(inference["ci_low"], nan_to_null=True),
        ci_high=pl.Series(inference["ci_high"], nan_to_null=True),
        # McNemar's exact p on the discordant cases, beside the paired t, when both outcomes are pass/fail.
        mcnemar_p=pl.Series(
            mcnemar_p_values(out["treatment_only"].fill_null(0), out["control_only"].fill_null(0))
            if binary
            else np.full(out.height, np.nan),
            nan_to_null=True,
        ).zip_with(out["cases"] > 0, pl.Series([None], dtype=pl.Float64)),
        note=joined_notes(
            pl.when(pl.col("cases") < 2)
            .then(pl.lit("fewer than 2 matched cases: no paired t"))
            .when(pl.col("_var") == 0)
            .then(pl.lit("every case's difference is equal: no paired t")),
            said,
        ),
    )
    columns = [
        *groups, "comparison", "cases", "treatment_rate", "control_rate", "difference", "statistic", "dof",
        "p_value", "ci_low", "ci_high", "both", "treatment_only", "control_only", "neither", "mcnemar_p", "mean_k",
        "treatment_budget", "control_budget", "unmatched", "note",
    ]  # fmt: skip
    # "k=1" sorts after "compute-matched": descending puts the unmatched comparison first in each group.
    return out.select(columns).sort([*groups, "comparison"], descending=[False] * len(groups) + [True])
