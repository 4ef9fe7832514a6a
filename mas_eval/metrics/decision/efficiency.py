"""Efficiency (the crisis-MAS evaluation methodology, "Efficiency Metrics"): cost and time to a decision, per run."""

from __future__ import annotations

import numpy as np
import polars as pl

from mas_eval.metrics.arrays import nullable

__all__ = ["USAGE", "efficiency"]

#: The usage columns of ``runs`` under the names the methodology prints them.
USAGE = {
    "iterations": "time_to_consensus",
    "api_calls": "api_calls_used",
    "seconds": "processing_time_seconds",
    "tokens": "tokens_used",
    "cost_usd": "cost_usd",
}


def efficiency(
    runs: pl.DataFrame, *, baseline_iterations: float, baseline_api_calls: float, baseline_seconds: float
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    r"""Return the efficiencies of each run of ``runs``: ``(values, valid)`` by name.

    Notes
    -----
    .. math:: Eff = \frac{1}{3}\left(\frac{1}{1 + I/b_I} + \frac{1}{1 + A/b_A} + \frac{1}{1 + T/b_T}\right)

    with baselines :math:`b_I = 1` iteration, :math:`b_A = 3` API calls, :math:`b_T = 5` s
    (the crisis-MAS methodology). The score is null when any of I, A, T is missing. The
    methodology's worked example (I=1, A=4, T=12.4) prints .891; its own formula gives .405.

    Returns ``iteration_efficiency, api_efficiency, time_efficiency, efficiency_score``. In
    numpy, because Polars divides a one-row column by a constant but multiplies a longer one
    by its reciprocal: a run's bits would depend on the size of its shard.
    """

    def share(column: str, baseline: float) -> tuple[np.ndarray, np.ndarray]:
        values, valid = nullable(runs[column].cast(pl.Float64))
        return 1.0 / (1.0 + values / baseline), valid

    parts = {
        "iteration_efficiency": share("iterations", baseline_iterations),
        "api_efficiency": share("api_calls", baseline_api_calls),
        "time_efficiency": share("seconds", baseline_seconds),
    }
    (a, a_valid), (b, b_valid), (c, c_valid) = parts.values()
    return parts | {"efficiency_score": ((a + b + c) / 3.0, a_valid & b_valid & c_valid)}
