"""Per-alternative criteria metrics: satisfaction (what DQS averages), weighted sum, TOPSIS.

All three read the same rows of ``scores`` and share one pass per group key: criterion
statistics per ``(run, criterion)``, then every per-alternative sum per ``(run, alternative)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from mas_eval.metrics.arrays import locate, nullable, take
from mas_eval.metrics.segments import Groups, label_of, pack, run_of

__all__ = ["CHECK_COLUMNS", "CriteriaRows", "alternative_criteria", "criteria_rows"]

#: Columns of :func:`alternative_criteria` that only serve the checks of its inputs (then dropped).
CHECK_COLUMNS = ["_scores_finite", "_satisfaction_low", "_satisfaction_high"]


def _attributes(criteria: pl.DataFrame, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Look up ``weight, weight_valid, cost, raw`` of the (run, criterion) ``keys`` in ``criteria``.

    A left join on sorted keys: a criterion without a row has none of them.
    """
    listed = pack(criteria["run_id"].to_numpy(), criteria["criterion"].to_numpy())
    at, found = locate(listed, keys)
    weight, weight_valid = nullable(criteria["weight"].cast(pl.Float64))
    cost, raw = criteria["cost"].to_numpy(), criteria["raw"].to_numpy()
    return tuple(take(values, at, found) for values in (weight, weight_valid, cost, raw))  # type: ignore[return-value]


@dataclass(frozen=True)
class CriteriaRows:
    """The ``scores`` rows with what every criteria metric reads of them (see :func:`alternative_criteria`).

    Per row: ``x`` (the raw score), ``sat`` (its satisfaction), ``v`` (its TOPSIS weighted,
    normalised value) and ``c`` (its criterion group). Per (run, criterion) group of
    ``by_criterion``: ``given`` (whether the run's weights count), ``weight``, ``share`` (the
    weight normalised over the run's criteria, or equal shares), ``norm``, ``low``, ``high``
    (the column's norm and extremes), ``cost``, and the ideal and anti-ideal ``best``, ``worst`` of ``v``.
    """

    by_criterion: Groups
    by_alternative: Groups
    c: np.ndarray
    x: np.ndarray
    sat: np.ndarray
    v: np.ndarray
    given: np.ndarray
    weight: np.ndarray
    share: np.ndarray
    norm: np.ndarray
    low: np.ndarray
    high: np.ndarray
    cost: np.ndarray
    best: np.ndarray
    worst: np.ndarray


def criteria_rows(scores: pl.DataFrame, criteria: pl.DataFrame) -> CriteriaRows:
    """Return the per-row and per-criterion terms of table ``scores`` that :func:`alternative_criteria` sums.

    Parameters
    ----------
    scores
        Table ``scores``: ``run_id, alternative, criterion, score``, keyed by codes
        (:mod:`mas_eval.metrics.codes`) and sorted by that key.
    criteria
        Table ``criteria`` keyed by codes and sorted: ``weight``, and ``cost`` and ``raw`` as
        booleans; a criterion without a row is a benefit on the satisfaction scale without a
        weight (so the run's weights are equal).
    """
    run = scores["run_id"].to_numpy()
    x = scores["score"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    by_criterion = Groups.of(pack(run, scores["criterion"].to_numpy()))
    by_alternative = Groups.of(pack(run, scores["alternative"].to_numpy()))

    # Per (run, criterion): the column's extremes and norm, and the criterion's attributes.
    low, high = by_criterion.min(x), by_criterion.max(x)
    norm = np.sqrt(by_criterion.sum(x * x))
    weight, weight_valid, cost, raw = _attributes(criteria, by_criterion.keys)
    # Weights count only if every scored criterion of the run has one and they sum > 0.
    criterion_run = Groups.of(run_of(by_criterion.keys))
    weight_total = criterion_run.sum(np.where(weight_valid, weight, 0.0))
    given = criterion_run.spread(~criterion_run.any(~weight_valid) & (weight_total > 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(
            given, weight / criterion_run.spread(weight_total), 1.0 / criterion_run.spread(criterion_run.count())
        )
        scale = np.where(norm > 0, share / norm, 0.0)
    # The extremes of v = x * scale, by the same product, so that the best alternative's
    # distance to the ideal is exactly 0.
    scaled_high, scaled_low = high * scale, low * scale
    best = np.where(cost, scaled_low, scaled_high)
    worst = np.where(cost, scaled_high, scaled_low)

    # Per score row, from its criterion. Branches no criterion takes are skipped: the common
    # case (satisfaction scale, benefit, no weights) costs a few passes over the rows.
    c = by_criterion.index
    row_cost = cost[c]
    sat = np.where(row_cost, 1.0 - x, x) if cost.any() else x
    if raw.any():
        on_raw = raw[c]
        row_low, row_high = low[c][on_raw], high[c][on_raw]
        spread, raw_x = row_high - row_low, x[on_raw]
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = np.where(row_cost[on_raw], (row_high - raw_x) / spread, (raw_x - row_low) / spread)
        sat = sat.copy() if sat is x else sat
        sat[on_raw] = np.where(spread == 0, 1.0, scaled)
    v = x * scale[c]

    return CriteriaRows(
        by_criterion=by_criterion,
        by_alternative=by_alternative,
        c=c,
        x=x,
        sat=sat,
        v=v,
        given=given,
        weight=weight,
        share=share,
        norm=norm,
        low=low,
        high=high,
        cost=cost,
        best=best,
        worst=worst,
    )


def alternative_criteria(rows: CriteriaRows, *, weighted: bool) -> pl.DataFrame:
    r"""Criteria satisfaction, weighted sum and TOPSIS of every scored alternative of every run.

    Parameters
    ----------
    rows
        :func:`criteria_rows` of the tables ``scores`` and ``criteria``.
    weighted
        Whether ``criteria_satisfaction`` uses the weights (``weighted_sum`` and TOPSIS
        always do when they are given).

    Notes
    -----
    *Satisfaction* of a score ``x``: on the ``satisfaction`` scale ``x`` for a
    benefit and ``1 - x`` for a cost criterion; on the ``raw`` scale min–max normalised
    within the run, ``(x - min)/(max - min)`` (benefit) or ``(max - x)/(max - min)``
    (cost), and 1.0 when the column is constant. Weights are used when every scored
    criterion of the run has one and they sum to more than 0; otherwise they are equal.

    .. math:: \text{criteria\_satisfaction}(a) = \frac{\sum_c w_c s_c(a)}{\sum_c w_c}

    over the criteria that alternative ``a`` has a score on (the crisis-MAS evaluation methodology, "Weighted Version").

    *TOPSIS* (Hwang & Yoon 1981) on the raw scores: :math:`r_{ac} = x_{ac} / \sqrt{\sum_b
    x_{bc}^2}` (0 for an all-zero column), :math:`v_{ac} = \tilde w_c r_{ac}` with weights
    normalised to sum 1, ideal :math:`v_c^+` = max over alternatives for a benefit and min for
    a cost criterion (:math:`v_c^-` the opposite), :math:`d_a^\pm = \sqrt{\sum_c (v_{ac} -
    v_c^\pm)^2}` over the criteria ``a`` is scored on, closeness :math:`d^-/(d^+ + d^-)`
    (0.5 when both are 0).

    Returns one row per scored ``(run_id, alternative)``, sorted: ``criteria_satisfaction,
    weighted_sum, topsis_closeness, topsis_distance_best, topsis_distance_worst`` (the caller
    ranks), and the :data:`CHECK_COLUMNS` from which
    :func:`~mas_eval.data.validation.validate` (``"alternative inputs"``) finds scores that break
    the rules these formulas rely on. Every sum is taken in row order over one group.
    """
    c, sat, v = rows.c, rows.sat, rows.v
    given, weight, best, worst = rows.given, rows.weight, rows.best, rows.worst
    # Per (run, alternative).
    a = rows.by_alternative
    n_scored = a.count()
    sat_total = a.sum(sat)
    if given.any():
        row_weight = np.where(given, weight, 1.0)[c]
        weighted_total, weight_sum = a.sum(row_weight * sat), a.sum(row_weight)
    else:  # every weight 1: the same sums, exactly
        weighted_total, weight_sum = sat_total, n_scored.astype(np.float64)
    off_best, off_worst = v - best[c], v - worst[c]
    best_square = a.sum(off_best * off_best)
    worst_square = a.sum(off_worst * off_worst)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = sat_total / n_scored
        weighted_sum = np.where(weight_sum > 0, weighted_total / weight_sum, mean)
        d_best, d_worst = np.sqrt(best_square), np.sqrt(worst_square)
        closeness = np.where(d_best + d_worst > 0, d_worst / (d_best + d_worst), 0.5)
    return pl.DataFrame(
        [
            pl.Series("run_id", run_of(a.keys)),
            pl.Series("alternative", label_of(a.keys)),
            pl.Series("criteria_satisfaction", weighted_sum if weighted else mean),
            pl.Series("weighted_sum", weighted_sum),
            pl.Series("topsis_closeness", closeness),
            pl.Series("topsis_distance_best", d_best),
            pl.Series("topsis_distance_worst", d_worst),
            pl.Series("_scores_finite", np.isfinite(sat_total) & np.isfinite(best_square)),
            # Raw-scale satisfactions lie in [0, 1] by construction, so an extreme outside [0, 1]
            # is a satisfaction-scale score out of range.
            pl.Series("_satisfaction_low", a.min(sat)),
            pl.Series("_satisfaction_high", a.max(sat)),
        ]
    )
