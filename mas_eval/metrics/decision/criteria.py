"""Per-alternative criteria metrics: satisfaction (what DQS averages), weighted sum, TOPSIS.

All three read the same rows of ``scores`` and share one pass per group key: criterion
statistics per ``(run, criterion)``, then every per-alternative sum per ``(run, alternative)``.
"""

from __future__ import annotations

import polars as pl

from mas_eval.metrics.codes import label_of, pack, run_of

__all__ = ["CHECK_COLUMNS", "alternative_criteria"]

#: Columns of :func:`alternative_criteria` that only serve the checks of its inputs (then dropped).
CHECK_COLUMNS = ["_scores_finite", "_satisfaction_low", "_satisfaction_high", "_weight_low"]


def alternative_criteria(scores: pl.LazyFrame, criteria: pl.LazyFrame, *, weighted: bool) -> pl.LazyFrame:
    r"""Criteria satisfaction, weighted sum and TOPSIS of every scored alternative of every run.

    Parameters
    ----------
    scores
        Table ``scores``: ``run_id, alternative, criterion, score``, keyed by codes
        (:mod:`mas_eval.metrics.codes`).
    criteria
        Table ``criteria`` (weights, kinds, scales), keyed by codes; a criterion without a row is a benefit
        on the satisfaction scale without a weight (so the run's weights are equal).
    weighted
        Whether ``criteria_satisfaction`` uses the weights (``weighted_sum`` and TOPSIS
        always do when they are given).

    Notes
    -----
    *Satisfaction* of a score ``x`` (SPEC.md §1): on the ``satisfaction`` scale ``x`` for a
    benefit and ``1 - x`` for a cost criterion; on the ``raw`` scale min–max normalised
    within the run, ``(x - min)/(max - min)`` (benefit) or ``(max - x)/(max - min)``
    (cost), and 1.0 when the column is constant. Weights are used when every scored
    criterion of the run has one and they sum to more than 0; otherwise they are equal.

    .. math:: \text{criteria\_satisfaction}(a) = \frac{\sum_c w_c s_c(a)}{\sum_c w_c}

    over the criteria that alternative ``a`` has a score on (seed 004, "Weighted Version").

    *TOPSIS* (Hwang & Yoon 1981) on the raw scores: :math:`r_{ac} = x_{ac} / \sqrt{\sum_b
    x_{bc}^2}` (0 for an all-zero column), :math:`v_{ac} = \tilde w_c r_{ac}` with weights
    normalised to sum 1, ideal :math:`v_c^+` = max over alternatives for a benefit and min for
    a cost criterion (:math:`v_c^-` the opposite), :math:`d_a^\pm = \sqrt{\sum_c (v_{ac} -
    v_c^\pm)^2}` over the criteria ``a`` is scored on, closeness :math:`d^-/(d^+ + d^-)`
    (0.5 when both are 0).

    Returns one row per ``(run_id, alternative)``: ``criteria_satisfaction,
    weighted_sum, topsis_closeness, topsis_distance_best, topsis_distance_worst`` (the caller
    ranks, once the rows are sorted), and the :data:`CHECK_COLUMNS` from which
    :func:`~mas_eval.validation.check_alternative_inputs` finds scores and weights that break
    the rules these formulas rely on.
    """
    rows = scores.select(
        rc=pack("run_id", "criterion"), ra=pack("run_id", "alternative"), score=pl.col("score").cast(pl.Float64)
    )
    attributes = criteria.select(
        rc=pack("run_id", "criterion"),
        weight="weight",
        cost=(pl.col("kind") == "cost").fill_null(False),
        raw=(pl.col("scale") == "raw").fill_null(False),
    )
    # Criterion attributes join the (run, criterion) summary, not every score row.
    per_criterion = (
        rows.group_by("rc")
        .agg(low=pl.col("score").min(), high=pl.col("score").max(), norm=pl.col("score").pow(2).sum().sqrt())
        .join(attributes, on="rc", how="left")
        .with_columns(pl.col("cost", "raw").fill_null(False), run=run_of("rc"))
    )
    # Weights count only if every scored criterion of the run has one and they sum > 0. Per-run
    # totals by group-by and join: a window over an unsorted frame is several times slower.
    per_run = per_criterion.group_by("run").agg(
        weights_given=~pl.col("weight").is_null().any() & (pl.col("weight").sum() > 0),
        weight_total=pl.col("weight").sum(),
        n_criteria=pl.len(),
    )
    per_criterion = (
        per_criterion.join(per_run, on="run", how="inner")
        .with_columns(
            given_weight=pl.when("weights_given").then("weight").otherwise(1.0),
            share=pl.when("weights_given")
            .then(pl.col("weight") / pl.col("weight_total"))
            .otherwise(1.0 / pl.col("n_criteria")),
        )
        .with_columns(
            scaled_high=pl.when(pl.col("norm") > 0)
            .then(pl.col("share") * pl.col("high") / pl.col("norm"))
            .otherwise(0.0),
            scaled_low=pl.when(pl.col("norm") > 0)
            .then(pl.col("share") * pl.col("low") / pl.col("norm"))
            .otherwise(0.0),
        )
        .select(
            "rc",
            "low",
            "high",
            "norm",
            "cost",
            "raw",
            "share",
            "given_weight",
            "weight",
            best=pl.when("cost").then("scaled_low").otherwise("scaled_high"),
            worst=pl.when("cost").then("scaled_high").otherwise("scaled_low"),
        )
    )

    x, low, high = pl.col("score"), pl.col("low"), pl.col("high")
    satisfaction = (
        pl.when(~pl.col("raw"))
        .then(pl.when("cost").then(1.0 - x).otherwise(x))
        .when(high == low)
        .then(1.0)
        .when("cost")
        .then((high - x) / (high - low))
        .otherwise((x - low) / (high - low))
    )
    v = pl.when(pl.col("norm") > 0).then(pl.col("share") * x / pl.col("norm")).otherwise(0.0)

    per_alternative = (
        rows.join(per_criterion, on="rc", how="inner")
        .with_columns(sat=satisfaction, v=v)
        .group_by("ra")
        .agg(
            weighted_total=(pl.col("given_weight") * pl.col("sat")).sum(),
            weight_total=pl.col("given_weight").sum(),
            sat_total=pl.col("sat").sum(),
            n_scored=pl.len(),
            best_square=(pl.col("v") - pl.col("best")).pow(2).sum(),
            worst_square=(pl.col("v") - pl.col("worst")).pow(2).sum(),
            # For the checks of the rules these formulas rely on (CHECK_COLUMNS): raw-scale
            # satisfactions lie in [0, 1] by construction, so an extreme outside [0, 1] is a
            # satisfaction-scale score out of range.
            _satisfaction_low=pl.col("sat").min(),
            _satisfaction_high=pl.col("sat").max(),
            _weight_low=pl.col("weight").min(),
        )
    )
    d_best, d_worst = pl.col("best_square").sqrt(), pl.col("worst_square").sqrt()
    mean = pl.col("sat_total") / pl.col("n_scored")
    # Present criteria whose weights are all 0 leave the weighted mean undefined: fall back to the mean.
    weighted_sum = pl.when(pl.col("weight_total") > 0).then(pl.col("weighted_total") / pl.col("weight_total"))
    return per_alternative.select(
        run_id=run_of("ra"),
        alternative=label_of("ra"),
        criteria_satisfaction=weighted_sum.otherwise(mean) if weighted else mean,
        weighted_sum=weighted_sum.otherwise(mean),
        topsis_closeness=pl.when(d_best + d_worst > 0).then(d_worst / (d_best + d_worst)).otherwise(0.5),
        topsis_distance_best=d_best,
        topsis_distance_worst=d_worst,
        _scores_finite=pl.col("sat_total").is_finite() & pl.col("best_square").is_finite(),
        _satisfaction_low=pl.col("_satisfaction_low"),
        _satisfaction_high=pl.col("_satisfaction_high"),
        _weight_low=pl.col("_weight_low"),
    )
