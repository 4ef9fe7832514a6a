"""Efficiency (seed 004, "Efficiency Metrics"): cost and time to a decision, per run."""

from __future__ import annotations

import polars as pl

__all__ = ["efficiency"]


def efficiency(*, baseline_iterations: float, baseline_api_calls: float, baseline_seconds: float) -> list[pl.Expr]:
    r"""Usage columns renamed as the seed prints them, and the efficiency score, as expressions on ``runs``.

    Notes
    -----
    .. math:: Eff = \frac{1}{3}\left(\frac{1}{1 + I/b_I} + \frac{1}{1 + A/b_A} + \frac{1}{1 + T/b_T}\right)

    with baselines :math:`b_I = 1` iteration, :math:`b_A = 3` API calls, :math:`b_T = 5` s
    (seed 004). The score is null when any of I, A, T is missing. The seed's worked example
    (I=1, A=4, T=12.4) prints .891; the formula gives .405 (SPEC.md §4).

    Returns the expressions of ``time_to_consensus, api_calls_used, processing_time_seconds,
    tokens_used, cost_usd, iteration_efficiency, api_efficiency, time_efficiency,
    efficiency_score``, to be selected from the ``runs`` table (one row per run).
    """

    def share(column: str, baseline: float) -> pl.Expr:
        return 1.0 / (1.0 + pl.col(column).cast(pl.Float64) / baseline)

    parts = {
        "iteration_efficiency": share("iterations", baseline_iterations),
        "api_efficiency": share("api_calls", baseline_api_calls),
        "time_efficiency": share("seconds", baseline_seconds),
    }
    return [
        pl.col("iterations").alias("time_to_consensus"),
        pl.col("api_calls").alias("api_calls_used"),
        pl.col("seconds").alias("processing_time_seconds"),
        pl.col("tokens").alias("tokens_used"),
        pl.col("cost_usd"),
        *(expr.alias(name) for name, expr in parts.items()),
        pl.when(pl.all_horizontal(e.is_not_null() for e in parts.values()))
        .then(pl.sum_horizontal(parts.values()) / 3.0)
        .alias("efficiency_score"),
    ]
