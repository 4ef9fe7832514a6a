r"""Statistics over epochs (repeats of a case by one system).

The statistics: pass@k, pass^k, majority vote, cost per correct answer, the compute-matched
comparison and the accuracy–cost frontier.

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
:math:`\binom{m}{k}/\binom{n}{k} = \prod_{j=0}^{k-1} (m - j)/(n - j)`
(:func:`mas_eval.metrics.outcomes.epochs.draw_ratio`), one vector operation per factor over all
cases at once: no factorial is formed, so nothing overflows, and each value
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

from mas_eval.constraints import NONE, RUN_METRICS, Boolean, Interval, Options, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError, SchemaError, format_keys
from mas_eval.metrics.outcomes.epochs import draw_ratio
from mas_eval.stats._common import (
    ASIDE,
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    GROUP,
    PROBABILITY,
    SYSTEM_NAME,
    as_lazy,
    aside_note,
    check_columns,
    check_no_nulls,
    column_list,
    joined_notes,
    numeric_value,
    set_aside,
    with_aside,
)
from mas_eval.stats.comparison import MAX_BOOT
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
    "pass_at_k_intervals",
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

#: The outcomes family's run column of a judge's tokens, left out of its ``run_tokens``.
EVALUATOR_TOKENS = "evaluator_tokens"
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


def _named(columns: Sequence[str | None]) -> str:
    """Columns as a note names them: ``'ok' or 'run_tokens'``."""
    return " or ".join(repr(name) for name in dict.fromkeys(columns) if name is not None)


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
    """Return the runs with a ``metric`` value, sorted by ``keys`` and ``epoch``, and whether all are 0 or 1.

    The runs have ``_value`` (Float64), ``_position`` (1 for a case's first epoch) and
    ``_spent``/``_score`` when asked; a value other than 0 or 1 is an error when ``binary``.
    """
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
    {
        "run_metrics": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "k": [K_VALUES],
        "level": [Options.of(CaseLevel)],
        **_COLUMNS,
    }  # type: ignore[dict-item]
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
    frame, aside = set_aside(as_lazy(run_metrics), [metric], keys)
    runs, binary = _runs(frame, metric, keys, epoch, "pass_at_k", binary=bool(ks))
    table = _with_pass_columns(_case_table(runs, keys, binary), ks)
    said = aside_note(f"{metric!r}")
    if level == "case":
        # A case whose every run was set aside has no row: its count is said at level="system".
        table = with_aside(table, aside, keys)
        return table.with_columns(joined_notes(pl.col("note"), said).alias("note")).drop(ASIDE)
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
    out = with_aside(out, aside, groups)
    note = joined_notes(pl.when(pl.col("note") != "").then(pl.col("note")), said).alias("note")
    return out.select(*groups, "cases", "runs", "mean", "majority_rate", "majority_ties", *columns, note).sort(groups)


# --- pass@k and pass^k with intervals ---------------------------------------------------------------

#: The two measures of :func:`pass_at_k_intervals`, as its ``measure`` column names them.
MEASURES = ("pass@k", "pass^k")
#: Largest bootstrap index matrix drawn at once (elements); more resamples are drawn in row chunks.
MAX_ELEMENTS = 1 << 22


def per_case_pass(n: np.ndarray, c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Each case's unbiased pass@k and pass^k from its ``n`` epochs and ``c`` passes (NaN where k > n).

    >>> at, hat = per_case_pass(np.array([4, 10]), np.array([2, 3]), 2)
    >>> at.round(4).tolist(), hat.round(4).tolist()
    ([0.8333, 0.5333], [0.1667, 0.0667])
    """
    kk = np.full(np.shape(n), k)
    return 1.0 - draw_ratio(n, n - c, kk), draw_ratio(n, c, kk)


def _replicates(
    systems: list[tuple[np.ndarray, np.ndarray, float]],
    k: int,
    n_boot: int,
    rng: np.random.Generator,
    resample_epochs: bool,
) -> np.ndarray:
    """``(n_boot, 2)`` bootstrap means of pass@k and pass^k over resampled cases.

    ``systems`` holds, per system, its cases' epochs ``n`` and passes ``c`` (aligned: the same
    case at the same place) and a sign: one system gives its own measures, two with signs +1 and
    -1 their paired difference. A resample draws the cases once for every system (an index
    matrix, chunked); with ``resample_epochs`` each drawn case's passes are drawn again from its
    epochs, ``Binomial(n, c/n)`` (the count of passes among ``n`` epochs drawn with replacement),
    and the draw's estimate is centred on the case's own.
    """
    cases = systems[0][0].size
    rows = max(1, min(n_boot, MAX_ELEMENTS // max(cases, 1)))
    out = np.zeros((n_boot, 2))
    fixed = [per_case_pass(n, c, k) for n, c, _ in systems]
    # Under the second stage a case's estimate has mean 1 - (1 - c/n)^k (pass^k: (c/n)^k), the
    # measure of its resampled epochs, not its unbiased estimate: each draw is moved by the difference.
    shift = [
        (at - (1.0 - (1.0 - c / n) ** k), hat - (c / n) ** k)
        for (n, c, _), (at, hat) in zip(systems, fixed, strict=True)
    ]
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        index = rng.integers(0, cases, (stop - start, cases))
        for (n, c, sign), (at, hat), (at_shift, hat_shift) in zip(systems, fixed, shift, strict=True):
            if resample_epochs:
                drawn_n = n[index]
                drawn_at, drawn_hat = per_case_pass(drawn_n, rng.binomial(drawn_n, c[index] / drawn_n), k)
                drawn_at, drawn_hat = drawn_at + at_shift[index], drawn_hat + hat_shift[index]
            else:
                drawn_at, drawn_hat = at[index], hat[index]
            out[start:stop, 0] += sign * drawn_at.mean(axis=1)
            out[start:stop, 1] += sign * drawn_hat.mean(axis=1)
    return out


def _interval_rows(
    key: dict[str, Any],
    systems: list[tuple[np.ndarray, np.ndarray, float]],
    k: int,
    *,
    n_boot: int,
    rng: np.random.Generator,
    resample_epochs: bool,
    confidence: float,
    bounds: tuple[float, float],
    note: str | None,
) -> list[dict[str, Any]]:
    """Return the pass@k and pass^k rows of one group (a system, or a paired difference) at one k."""
    n_all = systems[0][0]
    eligible = np.logical_and.reduce([n >= k for n, _, _ in systems])
    chosen = [(n[eligible], c[eligible], sign) for n, c, sign in systems]
    cases = int(eligible.sum())
    at = sum(sign * per_case_pass(n, c, k)[0] for n, c, sign in chosen) if cases else np.empty(0)
    hat = sum(sign * per_case_pass(n, c, k)[1] for n, c, sign in chosen) if cases else np.empty(0)
    notes = [note] if note else []
    if cases < n_all.size:
        notes.append(f"{n_all.size - cases} of {n_all.size} cases have fewer than {k} epochs and are left out")
    if cases < 2:
        notes.append(f"{cases} case(s) with at least {k} epochs: no interval over cases")
    replicates = (
        _replicates(chosen, k, n_boot, rng, resample_epochs) if cases >= 2 and n_boot else np.full((0, 2), np.nan)
    )
    tail = (1.0 - confidence) / 2.0
    rows = []
    for j, (measure, per_case) in enumerate(zip(MEASURES, (at, hat), strict=True)):
        estimate = float(per_case.mean()) if cases else np.nan
        se = float(per_case.std(ddof=1) / np.sqrt(cases)) if cases >= 2 else np.nan
        inference = t_inference(estimate, se, cases - 1.0 if cases >= 2 else np.nan, confidence)
        boot = np.quantile(replicates[:, j], [tail, 1.0 - tail]) if replicates.shape[0] else [np.nan, np.nan]
        extra = list(notes)
        if cases >= 2 and se == 0.0:
            extra.append("every case has the same value: the interval over cases is the point itself")
        rows.append({
            **key, "k": k, "measure": measure, "cases": cases, "estimate": estimate, "se": se,
            "ci_low": float(np.clip(inference["ci_low"][0], *bounds)),
            "ci_high": float(np.clip(inference["ci_high"][0], *bounds)),
            "boot_low": float(boot[0]), "boot_high": float(boot[1]),
            "note": "; ".join(extra) or None,
        })  # fmt: skip
    return rows


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "k": [K_VALUES],
        "treatment": [SYSTEM_NAME, NONE],
        "control": [SYSTEM_NAME, NONE],
        "n_boot": [Interval(int, 0, MAX_BOOT)],
        "seed": [Interval(int, 0), NONE],
        "resample_epochs": [Boolean()],
        "confidence": [PROBABILITY],
        **_COLUMNS,
    }  # type: ignore[dict-item]
)
def pass_at_k_intervals(
    run_metrics: Any,
    metric: str,
    k: int | Sequence[int] = (1,),
    by: str | Sequence[str] | None = None,
    *,
    treatment: str | None = None,
    control: str | None = None,
    n_boot: int = 2000,
    seed: int | None = 0,
    resample_epochs: bool = False,
    confidence: float = 0.95,
    system: str = "system",
    case: str = "case_id",
    epoch: str = "epoch",
) -> pl.DataFrame:
    r"""pass@k and pass^k of each system with intervals over cases, and the paired difference of two systems.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run with ``system``, ``case``, ``epoch``, ``metric`` and ``by``.
    metric : str
        The pass/fail outcome (boolean or 0/1).
    k : int or sequence of int
        The ks, each in [1, 10,000] and at most the most epochs of a case.
    by : str or list of str, optional
        Grouping columns besides ``system``.
    treatment, control : str, optional
        Two systems: adds the paired difference ``treatment - control`` at each k, over the cases
        both ran with at least k epochs (give both or neither).
    n_boot : int
        Bootstrap resamples of the cases (0: no bootstrap interval).
    seed : int, optional
        Seed of the bootstrap: the same seed and data give the same intervals, bit for bit
        (``None``: fresh entropy).
    resample_epochs : bool
        Also resample each drawn case's epochs (a two-stage bootstrap); see Notes.
    confidence : float
        Level of the intervals, in (0, 1).
    system, case, epoch : str
        The system, case and epoch columns (epochs are integers).

    Returns
    -------
    polars.DataFrame
        One row per (``by`` group, system or difference, k, measure), sorted; the ``by`` columns, then

        =================== =============================================================
        system              the system (the treatment, on a difference's rows)
        control             null on a system's rows; the control on a difference's rows
        k                   the k
        measure             ``"pass@k"`` or ``"pass^k"``
        cases               cases in the estimate: those with at least k epochs (of both
                            systems, for a difference)
        estimate            mean over those cases of the per-case unbiased estimate (or
                            of its paired difference)
        se                  standard error of that mean over cases, :math:`s/\sqrt{N}`
        ci_low, ci_high     :math:`\text{estimate} \pm t_{N-1}\,\text{se}`, clipped to
                            [0, 1] (a difference: [-1, 1])
        boot_low, boot_high percentile bootstrap interval over resampled cases
        note                cases left out, values set aside, or why an interval is null
        =================== =============================================================

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above, or only one of ``treatment`` and ``control``.
    SchemaError
        A named column is missing, or of the wrong type.
    DataError
        A metric other than 0/1; fewer than 2 cases in all; a k above the most epochs of every
        case; a ``treatment`` or ``control`` with no run; two runs of one case and epoch.

    Notes
    -----
    For a case with :math:`n` epochs of which :math:`c` passed, :math:`\hat p_i = 1 -
    \binom{n-c}{k}/\binom{n}{k}` (pass@k, Chen et al. 2021) and :math:`\hat q_i =
    \binom{c}{k}/\binom{n}{k}` (pass^k, Yao et al. 2024, τ-bench) are unbiased for that case's
    chance; the system's estimate is their mean over its :math:`N` cases, the same number
    :func:`pass_at_k` gives at ``level="system"``. Its analytic standard error is the standard
    error of a mean over cases, :math:`s/\sqrt N` with :math:`s` the sample SD of the per-case
    estimates: cases are the independent units, and the spread of :math:`\hat p_i` holds both the
    cases' differences and each case's own epoch noise (Miller 2024, "Adding Error Bars to Evals",
    §2–3: the central-limit SE over questions, clustered by question when answers repeat).
    The paired difference takes :math:`d_i = \hat p_{T,i} - \hat p_{C,i}` on the cases both
    systems ran and the SE of its mean (Miller 2024, §4, paired differences).

    The bootstrap resamples cases with replacement (the same draw for both systems of a pair),
    ``n_boot`` times, and reports the percentile interval; resamples are index matrices, one
    array operation per factor of the ratio, not a loop per resample. ``resample_epochs=True``
    also redraws each drawn case's passes from its own epochs, :math:`c^* \sim \mathrm{Bin}(n, c/n)`,
    and centres each draw on the case's estimate (under that draw the estimator's mean is the
    plug-in :math:`1-(1-c/n)^k`, or :math:`(c/n)^k` for pass^k, not :math:`\hat p_i`; the
    difference, known in closed form, is added back). Since resampling cases already carries
    the epoch noise, this adds it a second time and widens the interval (Davison &
    Hinkley 1997, *Bootstrap Methods and their Application*, §3.8, recommend resampling the top
    level only): a conservative check, not the default.

    Non-finite values (NaN, ±inf) of the metric are set aside like nulls, and the rows' note
    counts them. A group with fewer than 2 cases with at least k epochs keeps its estimate, with
    null intervals and a note.

    Examples
    --------
    Eight cases of three epochs; the passes per case are 3, 3, 2, 2, 1, 1, 0 and 0:

    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": "mas", "case_id": [c for c in "abcdefgh" for _ in range(3)],
    ...                      "epoch": [1, 2, 3] * 8, "ok": [1, 1, 1] * 2 + [1, 0, 1] * 2 + [0, 0, 1] * 2 + [0] * 6})
    >>> table = pass_at_k_intervals(runs, "ok", k=[1, 3], n_boot=1000, seed=1)
    >>> with pl.Config(tbl_cols=9, float_precision=3, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
    ...     print(table.select("k", "measure", "cases", "estimate", "se", "ci_low", "ci_high", "boot_low", "boot_high"))
    ┌───┬─────────┬───────┬──────────┬───────┬────────┬─────────┬──────────┬───────────┐
    │ k ┆ measure ┆ cases ┆ estimate ┆ se    ┆ ci_low ┆ ci_high ┆ boot_low ┆ boot_high │
    ╞═══╪═════════╪═══════╪══════════╪═══════╪════════╪═════════╪══════════╪═══════════╡
    │ 1 ┆ pass@k  ┆ 8     ┆ 0.500    ┆ 0.141 ┆ 0.167  ┆ 0.833   ┆ 0.250    ┆ 0.750     │
    │ 1 ┆ pass^k  ┆ 8     ┆ 0.500    ┆ 0.141 ┆ 0.167  ┆ 0.833   ┆ 0.250    ┆ 0.750     │
    │ 3 ┆ pass@k  ┆ 8     ┆ 0.750    ┆ 0.164 ┆ 0.363  ┆ 1.000   ┆ 0.375    ┆ 1.000     │
    │ 3 ┆ pass^k  ┆ 8     ┆ 0.250    ┆ 0.164 ┆ 0.000  ┆ 0.637   ┆ 0.000    ┆ 0.625     │
    └───┴─────────┴───────┴──────────┴───────┴────────┴─────────┴──────────┴───────────┘
    """
    where = "pass_at_k_intervals"
    if (treatment is None) != (control is None):
        msg = f"{where}: give both treatment and control (for their paired difference) or neither"
        raise InvalidParameterError(msg)
    if treatment is not None and treatment == control:
        msg = f"{where}: treatment and control are both {treatment!r}; name two systems"
        raise InvalidParameterError(msg)
    ks = _ks(k)
    groups = column_list(by, "by")
    keys = [*groups, system, case]
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    check_columns(schema, [metric], f"{where}: metric")
    check_columns(schema, [*groups, system], f"{where}: run_metrics")
    # NaN and ±inf cannot be a run's pass or fail: set aside, and counted.
    frame, set_aside_runs = set_aside(frame, [metric], [*groups, system])
    runs, _ = _runs(frame, metric, keys, epoch, where)
    table = _case_table(runs, keys, binary=True)
    every_case = table.select(*groups, case).unique()
    if every_case.height < 2:
        msg = (
            f"{where}: {every_case.height} case(s) with a {metric!r}; an interval over cases needs at least 2 "
            "(run more cases)"
        )
        raise DataError(msg)
    most = int(table["n"].max())  # type: ignore[arg-type]
    if max(ks) > most:
        msg = (
            f"{where}: k={max(ks)} is more than the most epochs of any case ({most}); pass@k needs at least k "
            f"epochs of a case: ask for k <= {most}, or run more epochs"
        )
        raise DataError(msg)
    present = set(table[system].unique().to_list())
    for role, name in (("treatment", treatment), ("control", control)):
        if name is not None and name not in present:
            shown = ", ".join(map(repr, sorted(present, key=str)))
            msg = f"{where}: no run of the {role} {name!r} has a {metric!r}; the systems are: {shown}"
            raise DataError(msg)
    aside = {tuple(row[:-1]): row[-1] for row in set_aside_runs.iter_rows()}
    bounds = (0.0, 1.0)
    rows: list[dict[str, Any]] = []
    # One bootstrap per (group, k) over its cases' small per-case summaries, never a loop over runs.
    parts = table.partition_by([*groups, system], as_dict=True, maintain_order=True)
    for g, (values, part) in enumerate(sorted(parts.items(), key=lambda item: _sort_key(item[0]))):
        key = {**dict(zip(groups, values[:-1], strict=True)), system: values[-1], "control": None}
        count = aside.get(values, 0)
        note = pl.select(aside_note(f"{metric!r}", pl.lit(count))).item()
        n, c = part["n"].to_numpy(), part["passed"].to_numpy()
        for kk in ks:
            rng = np.random.default_rng(None if seed is None else [seed, g, kk, 0])
            rows += _interval_rows(
                key, [(n, c, 1.0)], kk, n_boot=n_boot, rng=rng, resample_epochs=resample_epochs,
                confidence=confidence, bounds=bounds, note=note,
            )  # fmt: skip
    if treatment is not None:
        rows += _difference_rows(
            table, groups, system, case, treatment, control, ks, aside, metric,  # type: ignore[arg-type]
            n_boot=n_boot, seed=seed, resample_epochs=resample_epochs, confidence=confidence,
        )  # fmt: skip
    out_schema = {
        **{c: schema[c] for c in groups}, system: table.schema[system], "control": table.schema[system],
        "k": pl.Int64, "measure": pl.String, "cases": pl.Int64, "estimate": pl.Float64, "se": pl.Float64,
        "ci_low": pl.Float64, "ci_high": pl.Float64, "boot_low": pl.Float64, "boot_high": pl.Float64,
        "note": pl.String,
    }  # fmt: skip
    out = pl.DataFrame(rows, schema=out_schema, orient="row" if not rows else None)
    floats = ["estimate", "se", "ci_low", "ci_high", "boot_low", "boot_high"]
    return out.with_columns(pl.col(floats).fill_nan(None)).sort(
        [*groups, system, "control", "k", "measure"], nulls_last=False
    )


def _sort_key(values: tuple[object, ...]) -> tuple[tuple[bool, str], ...]:
    """Group keys in a total order (nulls first), whatever their types."""
    return tuple((v is not None, str(v)) for v in values)


def _difference_rows(
    table: pl.DataFrame,
    groups: list[str],
    system: str,
    case: str,
    treatment: str,
    control: str,
    ks: list[int],
    aside: dict[tuple[object, ...], int],
    metric: str,
    *,
    n_boot: int,
    seed: int | None,
    resample_epochs: bool,
    confidence: float,
) -> list[dict[str, Any]]:
    """Return the paired difference ``treatment - control`` of each ``by`` group at each k, on the cases both ran."""
    cases = [*groups, case]
    mine = table.filter(pl.col(system) == treatment).select(*cases, n_t="n", c_t="passed")
    theirs = table.filter(pl.col(system) == control).select(*cases, n_c="n", c_c="passed")
    full = mine.join(theirs, on=cases, how="full", nulls_equal=True, coalesce=True).sort(cases, nulls_last=True)
    parts = full.partition_by(groups, as_dict=True, maintain_order=True) if groups else {(): full}
    rows: list[dict[str, Any]] = []
    for g, (values, part) in enumerate(sorted(parts.items(), key=lambda item: _sort_key(item[0]))):
        paired = part.filter(pl.col("n_t").is_not_null() & pl.col("n_c").is_not_null())
        unpaired = part.height - paired.height
        notes = [f"{unpaired} case(s) run by only one of the two are left out"] if unpaired else []
        count = aside.get((*values, treatment), 0) + aside.get((*values, control), 0)
        if count:
            notes.append(pl.select(aside_note(f"{metric!r}", pl.lit(count))).item())
        key = {**dict(zip(groups, values, strict=True)), system: treatment, "control": control}
        n_t, c_t = paired["n_t"].to_numpy(), paired["c_t"].to_numpy()
        n_c, c_c = paired["n_c"].to_numpy(), paired["c_c"].to_numpy()
        for kk in ks:
            rng = np.random.default_rng(None if seed is None else [seed, g, kk, 1])
            rows += _interval_rows(
                key, [(n_t, c_t, 1.0), (n_c, c_c, -1.0)], kk, n_boot=n_boot, rng=rng,
                resample_epochs=resample_epochs, confidence=confidence, bounds=(-1.0, 1.0),
                note="; ".join(notes) or None,
            )  # fmt: skip
    return rows


# --- cost per correct answer ----------------------------------------------------------------------


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "tokens": [COLUMN_NAME, NONE],
        "cost": [COLUMN_NAME, NONE],
        **_COLUMNS,
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
    runs, _ = _runs(frame, metric, [*groups, case], epoch, "cost_per_correct")
    schema = frame.collect_schema()
    check_columns(schema, list(spent.values()), "cost_per_correct: run_metrics")
    # The spending columns, read for the same runs in the same order as the outcomes.
    spending = (
        frame.select(*groups, case, epoch, *(numeric_value(schema, c, "cost_per_correct: column").alias(name)
                                             for name, c in spent.items()))
        .collect(engine=ENGINE)
    )  # fmt: skip
    judged = EVALUATOR_TOKENS if tokens is not None and EVALUATOR_TOKENS in schema else None
    if judged is not None:
        spending = spending.join(
            frame.select(*groups, case, epoch, pl.col(judged).cast(pl.Float64)).collect(engine=ENGINE),
            on=[*groups, case, epoch],
            how="left",
            nulls_equal=True,
        )
    runs = runs.join(spending, on=[*groups, case, epoch], how="left", nulls_equal=True, maintain_order="left")
    for name, column in spent.items():
        bad = runs[name].is_null() | (runs[name] < 0)
        if bad.any():
            msg = f"cost_per_correct: {column!r} is null or negative in {int(bad.sum()):,} runs; fill or drop them"
            raise DataError(msg)
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
    note = joined_notes(*notes, aside_note(_named([metric, *spent.values()])))
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
    runs, _ = _runs(
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
    note = joined_notes(note, aside_note(_named(used)))
    table = table.with_columns(note.alias("note"), pl.col("control_epochs").fill_null(0)).select(
        *cases, "k", "treatment_budget", "control_budget", "treatment_outcome", "control_outcome", "control_tie",
        "control_outcome_1", "control_budget_1", "control_epochs", "note", ASIDE,
    )  # fmt: skip
    if rule == "best":
        table = table.with_columns(pl.lit(None, pl.Boolean).alias("control_tie"))
    if level == "case":
        return table.drop(ASIDE)
    return _matched_summary(table, groups, treatment_runs == "first", confidence, aside_note(_named(used)))


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


# --- accuracy-cost frontier -----------------------------------------------------------------------


@validate_params(
    {"run_metrics": [RUN_METRICS], "metric": [COLUMN_NAME], "ks": [K_VALUES, NONE], "tokens": [COLUMN_NAME, NONE],
     "cost": [COLUMN_NAME, NONE], **_COLUMNS}  # type: ignore[dict-item]
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
    r"""Return the points of each system's accuracy–cost frontier: pass rate of majority-of-k against spending.

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
    spent = {name: column for name, column in (("tokens", tokens), ("cost", cost)) if column is not None}
    frame, aside = set_aside(as_lazy(run_metrics), [metric, *spent.values()], groups)
    runs, _ = _runs(frame, metric, [*groups, case], epoch, where)
    schema = frame.collect_schema()
    check_columns(schema, list(spent.values()), f"{where}: run_metrics")
    if spent:
        spending = frame.select(
            *groups, case, epoch, *(numeric_value(schema, c, f"{where}: column").alias(n) for n, c in spent.items())
        ).collect(engine=ENGINE)
        judged = EVALUATOR_TOKENS if tokens is not None and EVALUATOR_TOKENS in schema else None
    if judged is not None:
        spending = spending.join(
            frame.select(*groups, case, epoch, pl.col(judged).cast(pl.Float64)).collect(engine=ENGINE),
            on=[*groups, case, epoch],
            how="left",
            nulls_equal=True,
        )
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
    )
    out = (
        with_aside(out, aside, groups)
        .with_columns(joined_notes(pl.col("note"), aside_note(_named([metric, *spent.values()]))).alias("note"))
        .drop(ASIDE)
        .sort([*groups, "k"], nulls_last=True)
    )
    return out
