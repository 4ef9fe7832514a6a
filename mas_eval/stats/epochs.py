r"""Statistics over epochs (repeats of a case by one system): pass@k, pass^k and majority vote, with intervals.

The cost per correct answer and the compute-matched comparison live in :mod:`~mas_eval.stats.compute`,
the accuracy–cost frontier in :mod:`~mas_eval.stats.frontier`; this module hands them on, so
``from mas_eval.stats.epochs import compute_matched`` keeps working.

Every function takes one row per run (a Polars frame, or anything with ``.runs``) and the names
of its columns: the outcome ``metric``, ``system``, ``case`` (``case_id``), ``epoch`` (which
repeat, 1 = first). Nothing here depends on a metric family: any per-run frame will do.

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
from typing import Any, Literal

import numpy as np
import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, Boolean, Interval, Options, validate_params
from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.metrics.outcomes.epochs import draw_ratio
from mas_eval.stats._common import (
    ASIDE,
    COLUMN_NAME,
    PROBABILITY,
    SYSTEM_NAME,
    as_lazy,
    aside_note,
    check_columns,
    column_list,
    joined_notes,
    set_aside,
    with_aside,
)
from mas_eval.stats._epoch_runs import EPOCH_COLUMNS, K_VALUES, MAX_K, VALUE, epoch_runs, k_list
from mas_eval.stats.comparison import MAX_BOOT
from mas_eval.stats.compute import Budget, MatchedLevel, Rule, TreatmentRuns, compute_matched, cost_per_correct
from mas_eval.stats.frontier import accuracy_cost_frontier
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
        **EPOCH_COLUMNS,
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
    ks = k_list(k)
    keys = [*column_list(by, "by"), system, case]
    frame, aside = set_aside(as_lazy(run_metrics), [metric], keys)
    runs, binary = epoch_runs(frame, metric, keys, epoch, "pass_at_k", binary=bool(ks))
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
        **EPOCH_COLUMNS,
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
    ks = k_list(k)
    groups = column_list(by, "by")
    keys = [*groups, system, case]
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    check_columns(schema, [metric], f"{where}: metric")
    check_columns(schema, [*groups, system], f"{where}: run_metrics")
    # NaN and ±inf cannot be a run's pass or fail: set aside, and counted.
    frame, set_aside_runs = set_aside(frame, [metric], [*groups, system])
    runs, _ = epoch_runs(frame, metric, keys, epoch, where)
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
