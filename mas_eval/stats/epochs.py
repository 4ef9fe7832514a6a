r"""Statistics over epochs (repeats of a case by one system): pass@k, pass^k, majority vote,
cost per correct answer, the compute-matched comparison and the accuracy–cost frontier.

Every function takes one row per run (a Polars frame, or anything with ``.runs``) and the names
of its columns: the outcome ``metric``, ``system``, ``case`` (``case_id``), ``epoch`` (which
repeat, 1 = first), and, where spending matters, ``tokens`` (``run_tokens``) and ``cost``
(``run_cost_usd``). Nothing here depends on a metric family: any per-run frame will do.

Notes
-----
For a system and case with :math:`n` epochs of which :math:`c` passed:

* :math:`\text{pass@}k = 1 - \binom{n-c}{k} / \binom{n}{k}` (Chen et al. 2021, "Evaluating
  Large Language Models Trained on Code": the unbiased estimator of the chance that at least
  one of :math:`k` attempts passes; defined for :math:`k \le n`);
* :math:`\text{pass}^k = \binom{c}{k} / \binom{n}{k}` (Yao et al. 2024, "τ-bench": the chance
  that all :math:`k` of :math:`k` attempts pass);
* the majority vote passes when :math:`2c > n`; a tie (:math:`2c = n`) does not pass and is
  recorded (inspect_ai's ``majority_score`` leaves a tie unscored).

Both ratios are computed as products of :math:`k` exact integer quotients,
:math:`\binom{m}{k}/\binom{n}{k} = \prod_{j=0}^{k-1} (m - j)/(n - j)`, one vector operation
per factor over all cases at once: no factorial is formed, so nothing overflows, and each value
is within a few ulps of the exact rational (tests pin it against ``math.comb`` and against
inspect_ai's ``pass_at`` and ``pass_k`` reducers).

Runs whose ``metric`` is null are left out (as inspect_ai leaves unscored epochs out). Inputs
are sorted by their keys and epoch before any sum, so results do not depend on row order.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any, Literal

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, Options, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError, SchemaError, format_keys
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    GROUP,
    PROBABILITY,
    SYSTEM_NAME,
    as_lazy,
    check_columns,
    check_no_nulls,
    column_list,
    numeric_value,
)
from mas_eval.stats.proportions import mcnemar_p_values
from mas_eval.stats.ttests import t_inference

__all__ = [
    "MAX_K",
    "Budget",
    "CaseLevel",
    "MatchedLevel",
    "Rule",
    "TreatmentRuns",
    "accuracy_cost_frontier",
    "compute_matched",
    "cost_per_correct",
    "pass_at_k",
]

#: What :func:`pass_at_k` returns: one row per (system, case) or per system.
CaseLevel = Literal["case", "system"]
#: What :func:`compute_matched` returns: one row per case, or the summary rows.
MatchedLevel = Literal["case", "summary"]
#: The spending :func:`compute_matched` matches on.
Budget = Literal["tokens", "cost"]
#: How the control's first k epochs give one answer: majority vote, or the run best by ``score``.
Rule = Literal["majority", "best"]
#: Which of the treatment's runs on a case it is judged by: its first epoch, or its mean over epochs.
TreatmentRuns = Literal["first", "mean"]

#: Largest k: each k costs k vector products over all cases, and no benchmark repeats a case more.
MAX_K = 10_000

#: Internal names of the outcome, the budget, the best-of score and a run's place among its case's epochs.
VALUE, SPENT, SCORE, POSITION = "_value", "_spent", "_score", "_position"


def _is_k(value: object) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool) and 1 <= int(value) <= MAX_K


def _are_ks(value: object) -> bool:
    if _is_k(value):
        return True
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        return False
    return all(_is_k(v) for v in value) and len(set(value)) == len(value)


#: Constraint of ``k`` and ``ks``: one k, or distinct ks.
K_VALUES = Predicate(_are_ks, f"an integer in [1, {MAX_K}] or a sequence of distinct such integers")

_COLUMNS = {"system": [COLUMN_NAME], "case": [COLUMN_NAME], "epoch": [COLUMN_NAME], "by": [COLUMN_NAMES, NONE]}


def _ks(k: int | Sequence[int]) -> list[int]:
    return [int(k)] if isinstance(k, Integral) else [int(v) for v in k]


# --- preparing the runs ---------------------------------------------------------------------------


def _runs(
    run_metrics: Any,
    metric: str,
    keys: list[str],
    epoch: str,
    where: str,
    *,
    spent: str | None = None,
    score: str | None = None,
    binary: bool = True,
) -> tuple[pl.DataFrame, bool]:
    """The runs with a ``metric`` value, sorted by ``keys`` and ``epoch``, with ``_value`` (Float64),
    ``_position`` (1 for a case's first epoch) and ``_spent``/``_score`` when asked; and whether
    every value is 0 or 1 (an error when ``binary``)."""
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    named = [*keys, epoch, *([spent] if spent else []), *([score] if score else [])]
    check_columns(schema, [metric], f"{where}: metric")
    check_columns(schema, named, f"{where}: run_metrics")
    if not schema[epoch].is_integer():
        # Epochs are counted, and sorted as numbers: as strings "10" would come before "2".
        msg = f"{where}: epoch column {epoch!r} has type {schema[epoch]}; it must hold integers (1 = first)"
        raise SchemaError(msg)
    check_no_nulls(frame, [*keys, epoch], f"{where}: run_metrics")
    extra = []
    if spent:
        extra.append(numeric_value(schema, spent, f"{where}: column").alias(SPENT))
    if score:
        extra.append(numeric_value(schema, score, f"{where}: score").alias(SCORE))
    runs = (
        frame.select(*keys, epoch, numeric_value(schema, metric, f"{where}: metric").alias(VALUE), *extra)
        .filter(pl.col(VALUE).is_not_null())
        .collect(engine=ENGINE)
        # Sorted before anything is summed: the sums then meet the values in one order whatever the input's.
        .sort([*keys, epoch], nulls_last=True)
    )
    repeated = runs.select(*keys, epoch).is_duplicated()
    if repeated.any():
        shown = format_keys(
            runs.filter(repeated).select(*keys, epoch).unique(maintain_order=True).iter_rows(named=True)
        )
        msg = f"{where}: more than one run of the same {', '.join(keys)} and {epoch}: {shown}; keep one run per epoch"
        raise DataError(msg)
    for column, what in ((SPENT, spent), (SCORE, score)):
        if what and runs[column].null_count():
            msg = f"{where}: {runs[column].null_count():,} runs with a {metric!r} have no {what!r}; fill or drop them"
            raise DataError(msg)
    if spent and (runs[SPENT] < 0).any():
        msg = f"{where}: {spent!r} is negative in {int((runs[SPENT] < 0).sum()):,} runs; spending cannot be"
        raise DataError(msg)
    outside = ~runs[VALUE].is_in([0.0, 1.0])
    if binary and outside.any():
        msg = (
            f"{where}: metric {metric!r} must be pass/fail (boolean or 0/1): {int(outside.sum()):,} runs are not "
            f"(e.g. {runs.filter(outside)[VALUE][0]!r})"
        )
        raise DataError(msg)
    runs = runs.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(keys).alias(POSITION))
    return runs, not bool(outside.any())


def draw_ratio(n: np.ndarray, m: np.ndarray, k: np.ndarray) -> np.ndarray:
    r""":math:`\binom{m}{k}/\binom{n}{k} = \prod_{j<k} (m-j)/(n-j)`, elementwise; NaN where :math:`k > n`.

    The chance that :math:`k` draws without replacement from :math:`n` items all fall among
    :math:`m` marked ones; 0 when :math:`m < k` (a factor is then exactly 0).

    >>> draw_ratio(np.array([5, 5, 2]), np.array([3, 1, 2]), np.array([2, 2, 3])).tolist()
    [0.3, 0.0, nan]
    """
    n, m, k = (np.asarray(x, dtype=np.int64) for x in (n, m, k))
    out = np.ones(n.shape)
    # One vector product per factor j, over every case at once; rows with k <= j keep their value.
    for j in range(int(k.max(initial=0))):
        active = j < k
        factor = np.maximum(m - j, 0) / np.maximum(n - j, 1)
        out = np.where(active, out * factor, out)
    return np.where(k > n, np.nan, out)


def _case_table(runs: pl.DataFrame, keys: list[str], binary: bool) -> pl.DataFrame:
    """Per case: ``n`` epochs, ``passed`` (null unless pass/fail), ``mean``, ``majority``, ``majority_tie``."""
    passed = pl.col(VALUE).sum().cast(pl.Int64)
    table = runs.group_by(keys).agg(n=pl.len().cast(pl.Int64), passed=passed, mean=pl.col(VALUE).mean()).sort(keys)
    if not binary:
        return table.with_columns(
            pl.lit(None, pl.Int64).alias("passed"),
            pl.lit(None, pl.Boolean).alias("majority"),
            pl.lit(None, pl.Boolean).alias("majority_tie"),
        )
    twice = 2 * pl.col("passed")
    return table.with_columns(majority=twice > pl.col("n"), majority_tie=twice == pl.col("n"))


def _with_pass_columns(table: pl.DataFrame, ks: list[int]) -> pl.DataFrame:
    """``pass_at_<k>`` and ``pass_hat_<k>`` for each k, and a ``note`` on the cases with fewer than k epochs."""
    n, c = table["n"].to_numpy(), table["passed"].to_numpy()
    columns, notes = [], []
    for k in ks:
        kk = np.full(n.shape, k)
        columns.append(pl.Series(f"pass_at_{k}", 1.0 - draw_ratio(n, n - c, kk), nan_to_null=True))
        columns.append(pl.Series(f"pass_hat_{k}", draw_ratio(n, c, kk), nan_to_null=True))
        notes.append(pl.when(pl.col("n") < k).then(pl.format(f"k={k} > {{}} epochs: pass@{k} undefined", "n")))
    table = table.with_columns(columns)
    note = pl.concat_str(notes, separator="; ", ignore_nulls=True) if notes else pl.lit(None, pl.String)
    return table.with_columns(pl.when(note != "").then(note).alias("note"))


# --- pass@k, pass^k, majority ---------------------------------------------------------------------


@validate_params(
    {"metric": [COLUMN_NAME], "k": [K_VALUES], "level": [Options.of(CaseLevel)], **_COLUMNS}  # type: ignore[dict-item]
)
def pass_at_k(
    run_metrics: Any,
    metric: str,
    k: int | Sequence[int] = (1,),
    by: str | Sequence[str] | None = None,
    *,
    level: CaseLevel = "case",
    system: str = "system",
    case: str = "case_id",
    epoch: str = "epoch",
) -> pl.DataFrame:
    r"""pass@k, pass^k, the mean and the majority vote of each system on each case, over its epochs.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run with ``system``, ``case``, ``epoch``, ``metric`` and ``by``.
    metric : str
        The outcome: boolean or 0/1 for pass@k, pass^k and the vote; any number for the mean
        alone (then pass ``k=()``).
    k : int or sequence of int
        The k of the ``pass_at_<k>`` and ``pass_hat_<k>`` columns, each in [1, 10,000].
    by : str or list of str, optional
        Grouping columns besides ``system`` (a task, a variant).
    level : {"case", "system"}
        One row per (group, system, case), or per (group, system): the means over its cases.
    system, case, epoch : str
        The system, case and epoch columns (epochs are integers; 1 = first).

    Returns
    -------
    polars.DataFrame
        ``level="case"``: the ``by``, ``system`` and ``case`` columns, then

        ============== ===========================================================
        n              epochs with a value
        passed         epochs that passed, c (null when the metric is not 0/1)
        mean           mean value over the epochs
        majority       whether more than half the epochs passed
        majority_tie   exactly half passed (the vote counts as not passed)
        pass_at_<k>    :math:`1 - \binom{n-c}{k}/\binom{n}{k}`; null when k > n
        pass_hat_<k>   pass^k, :math:`\binom{c}{k}/\binom{n}{k}`; null when k > n
        note           why a value is null, or null
        ============== ===========================================================

        ``level="system"``: the ``by`` and ``system`` columns, ``cases``, ``runs``, then the
        means over cases of ``mean``, ``majority`` (as ``majority_rate``), ``pass_at_<k>`` and
        ``pass_hat_<k>`` (over the cases with at least k epochs), ``majority_ties`` (a count),
        and ``note`` saying which means leave cases out.

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above.
    SchemaError
        A named column is missing, the metric is not numeric or boolean, or the epochs not integers.
    DataError
        Null system, case or epoch; two runs of one case and epoch; a metric other than 0/1
        while ``k`` is not empty.

    Notes
    -----
    The formulas are in :mod:`mas_eval.stats.epochs`; pass@k is Chen et al. (2021)'s unbiased
    estimator, pass^k Yao et al. (2024, τ-bench)'s. Every case weighs the same in the
    system-level means, whatever its number of epochs.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 4, "case_id": ["a"] * 4, "epoch": [1, 2, 3, 4],
    ...                      "ok": [True, False, True, False]})
    >>> pass_at_k(runs, "ok", k=[1, 2]).select("n", "passed", "majority", "majority_tie", "pass_at_2", "pass_hat_2").rows()
    [(4, 2, False, True, 0.8333333333333334, 0.16666666666666666)]
    """  # noqa: E501
    ks = _ks(k)
    keys = [*column_list(by, "by"), system, case]
    runs, binary = _runs(run_metrics, metric, keys, epoch, "pass_at_k", binary=bool(ks))
    table = _with_pass_columns(_case_table(runs, keys, binary), ks)
    if level == "case":
        return table
    groups = keys[:-1]
    means = [pl.col(f"{kind}_{k}").mean() for k in ks for kind in ("pass_at", "pass_hat")]
    short = [pl.when(pl.col(f"pass_at_{k}").null_count() > 0).then(
        pl.format(f"pass@{k} and pass^{k} over the {{}} of {{}} cases with at least {k} epochs",
                  pl.col(f"pass_at_{k}").count(), pl.len())
    ) for k in ks]  # fmt: skip
    out = table.group_by(groups, maintain_order=True).agg(
        *means,
        cases=pl.len().cast(pl.Int64),
        runs=pl.col("n").sum(),
        mean=pl.col("mean").mean(),
        majority_rate=pl.col("majority").cast(pl.Float64).mean(),
        majority_ties=pl.col("majority_tie").cast(pl.Int64).sum() if binary else pl.lit(None, pl.Int64),
        note=pl.concat_str(short, separator="; ", ignore_nulls=True) if short else pl.lit(None, pl.String),
    )
    columns = [f"{kind}_{k}" for k in ks for kind in ("pass_at", "pass_hat")]
    note = pl.when(pl.col("note") != "").then(pl.col("note")).alias("note")
    return out.select(*groups, "cases", "runs", "mean", "majority_rate", "majority_ties", *columns, note).sort(groups)


# --- cost per correct answer ----------------------------------------------------------------------


@validate_params(
    {"metric": [COLUMN_NAME], "tokens": [COLUMN_NAME, NONE], "cost": [COLUMN_NAME, NONE], **_COLUMNS}  # type: ignore[dict-item]
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
    r"""What a correct answer costs each system: tokens and cost per correct answer, and per run.

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
        (:math:`T/n`), ``tokens_per_correct`` (:math:`T/c`, null when nothing passed); and
        ``note``.

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
    frame = as_lazy(run_metrics)
    runs, _ = _runs(frame, metric, [*groups, case], epoch, "cost_per_correct")
    schema = frame.collect_schema()
    check_columns(schema, list(spent.values()), "cost_per_correct: run_metrics")
    # The spending columns, read for the same runs in the same order as the outcomes.
    spending = (
        frame.select(*groups, case, epoch, *(numeric_value(schema, c, "cost_per_correct: column").alias(name)
                                             for name, c in spent.items()))
        .collect(engine=ENGINE)
    )  # fmt: skip
    runs = runs.join(spending, on=[*groups, case, epoch], how="left", nulls_equal=True, maintain_order="left")
    for name, column in spent.items():
        bad = runs[name].is_null() | (runs[name] < 0)
        if bad.any():
            msg = f"cost_per_correct: {column!r} is null or negative in {int(bad.sum()):,} runs; fill or drop them"
            raise DataError(msg)
    aggregates = [pl.len().cast(pl.Int64).alias("runs"), pl.col(VALUE).sum().cast(pl.Int64).alias("passed")]
    aggregates += [pl.col(name).sum().cast(pl.Float64).alias(name) for name in spent]
    out = runs.group_by(groups, maintain_order=True).agg(aggregates).sort(groups)
    per = []
    for name in spent:
        per += [
            (pl.col(name) / pl.col("runs")).alias(f"{name}_per_run"),
            pl.when(pl.col("passed") > 0).then(pl.col(name) / pl.col("passed")).alias(f"{name}_per_correct"),
        ]
    out = out.with_columns(*per, pass_rate=pl.col("passed") / pl.col("runs"))
    ordered = [c for name in spent for c in (name, f"{name}_per_run", f"{name}_per_correct")]
    note = pl.when(pl.col("passed") == 0).then(pl.lit("no run passed: the cost per correct answer is undefined"))
    return out.select(*groups, "runs", "passed", "pass_rate", *ordered, note.alias("note"))


# --- compute-matched comparison -------------------------------------------------------------------


@validate_params(
    {
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
        **_COLUMNS,  # type: ignore[dict-item]
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
    r"""The treatment (a MAS) against the control (a single agent) given as much compute on each case.

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
    runs, _ = _runs(
        run_metrics, metric, [*cases, system], epoch, where, spent=spent_column, score=score if rule == "best" else None
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
    table = table.with_columns(note.alias("note"), pl.col("control_epochs").fill_null(0)).select(
        *cases, "k", "treatment_budget", "control_budget", "treatment_outcome", "control_outcome", "control_tie",
        "control_outcome_1", "control_budget_1", "control_epochs", "note",
    )  # fmt: skip
    if rule == "best":
        table = table.with_columns(pl.lit(None, pl.Boolean).alias("control_tie"))
    if level == "case":
        return table
    return _matched_summary(table, groups, treatment_runs == "first", confidence)


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


def _matched_summary(table: pl.DataFrame, groups: list[str], binary: bool, confidence: float) -> pl.DataFrame:
    """The k = 1 and compute-matched rows of each group, over its matched cases."""
    keys = groups or [GROUP]
    if not groups:
        table = table.with_columns(pl.lit(0, pl.Int8).alias(GROUP))
    matched = table.filter(pl.col("k").is_not_null())
    every = table.group_by(keys, maintain_order=True).agg(unmatched=pl.col("k").is_null().sum().cast(pl.Int64))
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
        note=pl.when(pl.col("cases") < 2)
        .then(pl.lit("fewer than 2 matched cases: no paired t"))
        .when(pl.col("_var") == 0)
        .then(pl.lit("every case's difference is equal: no paired t")),
    )
    columns = [
        *groups, "comparison", "cases", "treatment_rate", "control_rate", "difference", "statistic", "dof",
        "p_value", "ci_low", "ci_high", "both", "treatment_only", "control_only", "neither", "mcnemar_p", "mean_k",
        "treatment_budget", "control_budget", "unmatched", "note",
    ]  # fmt: skip
    # "k=1" sorts after "compute-matched": descending puts the unmatched comparison first in each group.
    return out.select(columns).sort([*groups, "comparison"], descending=[False] * len(groups) + [True])


# --- accuracy-cost frontier -----------------------------------------------------------------------


@validate_params(
    {"metric": [COLUMN_NAME], "ks": [K_VALUES, NONE], "tokens": [COLUMN_NAME, NONE], "cost": [COLUMN_NAME, NONE],
     **_COLUMNS}  # type: ignore[dict-item]
)  # fmt: skip
def accuracy_cost_frontier(
    run_metrics: Any,
    metric: str,
    ks: int | Sequence[int] | None = None,
    by: str | Sequence[str] | None = None,
    *,
    tokens: str | None = "run_tokens",
    cost: str | None = "run_cost_usd",
    system: str = "system",
    case: str = "case_id",
    epoch: str = "epoch",
) -> pl.DataFrame:
    r"""The points of each system's accuracy–cost frontier: pass rate of majority-of-k against spending.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run.
    metric : str
        The pass/fail outcome (boolean or 0/1).
    ks : int or sequence of int, optional
        The k of the points; by default 1, 2, 4, … up to the most epochs of a case.
    by : str or list of str, optional
        Grouping columns besides ``system``.
    tokens, cost : str or None
        Each run's tokens and cost (not negative); ``None`` leaves that one out.
    system, case, epoch : str
        The system, case and epoch columns.

    Returns
    -------
    polars.DataFrame
        One row per (``by`` group, ``system``, k) with at least one case of k epochs, sorted:

        ================== ========================================================
        k                  epochs spent per case
        cases              cases with at least k epochs (the others are left out)
        majority_rate      mean over cases of the majority vote of the first k epochs (a tie fails)
        majority_ties      cases whose vote over k epochs was a tie
        pass_at_k          mean over cases of pass@k (over all the case's epochs)
        pass_hat_k         mean over cases of pass^k
        tokens_per_case    mean over cases of the tokens of the first k epochs
        cost_per_case      likewise for the cost
        note               the cases left out, or null
        ================== ========================================================

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above.
    SchemaError
        A named column is missing, or not numeric or boolean (the epochs: not integers).
    DataError
        A metric other than 0/1; a null or negative spending; two runs of one case and epoch.

    Notes
    -----
    Running a system k times on a case and taking the majority vote spends the first k epochs'
    tokens; each point is that trade, averaged over cases (every case weighs the same). A point
    whose ``cases`` is below the system's total averages over fewer, possibly easier, cases: its
    note says so. pass@k is the chance that one of k attempts passes (Chen et al. 2021), a
    ceiling no voting rule reaches without an oracle to pick the right answer; majority-of-k
    is what a deployment without one gets. An even k loses its ties (half the votes passing
    does not pass), so majority-of-k dips at k = 2, 4, …; odd ks (1, 3, 5, 9) avoid ties.
    pass@1 is the mean over all the case's epochs, majority-of-1 its first epoch alone.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": "single", "case_id": "a", "epoch": [1, 2, 3, 4],
    ...                      "ok": [0, 1, 1, 0], "run_tokens": [100, 120, 80, 100]})
    >>> accuracy_cost_frontier(runs, "ok", cost=None).select("k", "majority_rate", "pass_at_k", "tokens_per_case").rows()
    [(1, 0.0, 0.5, 100.0), (2, 0.0, 0.8333333333333334, 220.0), (4, 0.0, 1.0, 400.0)]
    """  # noqa: E501
    where = "accuracy_cost_frontier"
    groups = [*column_list(by, "by"), system]
    frame = as_lazy(run_metrics)
    runs, _ = _runs(frame, metric, [*groups, case], epoch, where)
    spent = {name: column for name, column in (("tokens", tokens), ("cost", cost)) if column is not None}
    schema = frame.collect_schema()
    check_columns(schema, list(spent.values()), f"{where}: run_metrics")
    if spent:
        spending = frame.select(
            *groups, case, epoch, *(numeric_value(schema, c, f"{where}: column").alias(n) for n, c in spent.items())
        ).collect(engine=ENGINE)
        runs = runs.join(spending, on=[*groups, case, epoch], how="left", nulls_equal=True, maintain_order="left")
    for name, column in spent.items():
        bad = runs[name].is_null() | (runs[name] < 0)
        if bad.any():
            msg = f"{where}: {column!r} is null or negative in {int(bad.sum()):,} runs; fill or drop them"
            raise DataError(msg)
    cases = [*groups, case]
    most = int(runs.group_by(cases).len()["len"].max() or 0)
    chosen = _ks(ks) if ks is not None else [2**i for i in range(most.bit_length())]
    totals = runs.group_by(cases).agg(n=pl.len().cast(pl.Int64), c=pl.col(VALUE).sum().cast(pl.Int64))
    running = runs.with_columns(
        _passed=pl.col(VALUE).cum_sum().over(cases),
        **{f"_{name}": pl.col(name).cum_sum().over(cases).cast(pl.Float64) for name in spent},
    )
    points = (
        running.filter(pl.col(POSITION).is_in(chosen))
        .join(totals, on=cases, how="left", nulls_equal=True, maintain_order="left")
        .rename({POSITION: "k"})
    )
    n, c, k = (points[name].to_numpy() for name in ("n", "c", "k"))
    points = points.with_columns(
        _majority=(2 * pl.col("_passed") > pl.col("k")).cast(pl.Float64),
        _tie=(2 * pl.col("_passed") == pl.col("k")).cast(pl.Int64),
        _pass_at=pl.Series(1.0 - draw_ratio(n, n - c, k)),
        _pass_hat=pl.Series(draw_ratio(n, c, k)),
    ).sort([*groups, "k", case], nulls_last=True)
    total_cases = totals.group_by(groups).agg(_total=pl.len().cast(pl.Int64))
    out = (
        points.group_by([*groups, "k"], maintain_order=True)
        .agg(
            cases=pl.len().cast(pl.Int64),
            majority_rate=pl.col("_majority").mean(),
            majority_ties=pl.col("_tie").sum(),
            pass_at_k=pl.col("_pass_at").mean(),
            pass_hat_k=pl.col("_pass_hat").mean(),
            **{f"{name}_per_case": pl.col(f"_{name}").mean() for name in spent},
        )
        .join(total_cases, on=groups, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(
            note=pl.when(pl.col("cases") < pl.col("_total")).then(
                pl.format("{} of {} cases have at least k epochs; the others are left out", "cases", "_total")
            )
        )
        .drop("_total")
        .sort([*groups, "k"], nulls_last=True)
    )
    return out
