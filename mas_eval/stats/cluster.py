r"""Cluster-robust (CR1) standard errors of the difference, in closed form from group sums.

Notes
-----
Independent design: the OLS fit :math:`y = \alpha + \Delta T + e` has :math:`\hat\Delta = \bar y_T - \bar y_C`
and residuals :math:`e = y - \bar y_s`. Its sandwich with statsmodels' small-sample factor
(``cov_type="cluster"``, CR1) reduces to

.. math:: \widehat{Var}(\hat\Delta) = \frac{G}{G-1}\,\frac{N-1}{N-2} \sum_{g=1}^{G} u_g^2,\qquad
          u_g = \frac{E_{Tg}}{n_T} - \frac{E_{Cg}}{n_C},

with :math:`E_{sg}` the sum of system s's residuals in cluster g and N the runs. Paired design:
the mean of the per-case differences :math:`d_i` (OLS on a constant) gives
:math:`\widehat{Var}(\bar d) = \frac{G}{G-1} \sum_g E_g^2 / n^2`, :math:`E_g = \sum_{i \in g} (d_i - \bar d)`.
The reference distribution is t with :math:`G - 1` df (statsmodels with ``use_t=True``;
Miller 2024, "Adding Error Bars to Evals"). Residuals are centred within group and system before
summing, so there is no cancellation. Tests check both forms against statsmodels to 1e-10.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from mas_eval.stats._common import ENGINE
from mas_eval.stats._rows import Patch, Rows, warnings_on
from mas_eval.stats.designs import zero_sd
from mas_eval.stats.effects import observed_power
from mas_eval.stats.summaries import align, column, metric, to_arrays
from mas_eval.stats.ttests import t_inference

__all__ = ["cluster_step", "independent_cluster_sums", "independent_cluster_sums_from", "paired_cluster_sums"]


def _totals(
    per_cluster: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], cluster: str, m: int
) -> dict[str, np.ndarray]:
    """Per group: ``cluster_ss`` (sum of squared cluster scores) and ``n_clusters`` with any value.

    ``per_cluster`` holds per (group, cluster) each metric's ``score_{i}`` and ``count_{i}`` (its
    values in the cluster). It comes from a group-by, whose rows come in no fixed order; it is
    sorted by its keys (which include the cluster) so that the sum over clusters is the same to the
    last bit on every call.
    """
    ordered = per_cluster.sort([*keys, cluster], nulls_last=True)
    totals = ordered.group_by(list(keys), maintain_order=True).agg(
        [(pl.col(column("score", i)) ** 2).sum().alias(column("cluster_ss", i)) for i in range(m)]
        + [(pl.col(column("count", i)) > 0).sum().alias(column("n_clusters", i)) for i in range(m)]
    )
    arrays = to_arrays(align(groups, totals.collect(engine=ENGINE), keys), ("cluster_ss", "n_clusters"), m)
    arrays["n_clusters"] = np.nan_to_num(arrays["n_clusters"], nan=0.0)
    return arrays


def independent_cluster_sums(
    runs: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], system: str, treatment: str, cluster: str, m: int
) -> dict[str, np.ndarray]:
    """``cluster_ss`` and ``n_clusters`` per group of an independent design, in one query.

    Per (group, cluster, system): ``residual_sum_{i}`` (:math:`E_{sg}`) and ``count_{i}``; then per
    (group, cluster) the score ``score_{i}`` (:math:`u_g`).
    """
    within = [*keys, system]
    residuals = [
        (pl.col(metric(i)) - pl.col(metric(i)).mean().over(within)).alias(column("residual", i)) for i in range(m)
    ]
    # Sorted and materialised so that each cluster's runs are contiguous: the sums below then come
    # out the same to the last bit on every call (a group-by merges per-thread partial sums).
    ordered = runs.sort([*keys, cluster, system], nulls_last=True, maintain_order=True).collect(engine=ENGINE)
    sums = (
        ordered.lazy()
        .with_columns(residuals)
        .group_by([*keys, cluster, system])
        .agg(
            [pl.col(column("residual", i)).sum().alias(column("residual_sum", i)) for i in range(m)]
            + [pl.col(metric(i)).count().alias(column("count", i)) for i in range(m)]
        )
    )
    return independent_cluster_sums_from(sums, groups, keys, system, treatment, cluster, m)


def independent_cluster_sums_from(
    sums: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], system: str, treatment: str, cluster: str, m: int
) -> dict[str, np.ndarray]:
    """Return :func:`independent_cluster_sums` from one row per (group, cluster, system).

    Each row holds ``residual_sum_{i}`` (:math:`E_{sg}`) and ``count_{i}`` (from the runs, or from
    merged sufficient statistics).
    """
    within = [*keys, system]
    sign = pl.when(pl.col(system) == treatment).then(1.0).otherwise(-1.0)
    scores = sums.with_columns(
        (sign * pl.col(column("residual_sum", i)) / pl.col(column("count", i)).sum().over(within)).alias(
            column("score", i)
        )
        for i in range(m)
    )
    per_cluster = scores.group_by([*keys, cluster]).agg(
        [pl.col(column("score", i)).sum() for i in range(m)] + [pl.col(column("count", i)).sum() for i in range(m)]
    )
    return _totals(per_cluster, groups, keys, cluster, m)


def paired_cluster_sums(
    cases: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], cluster: str, m: int
) -> dict[str, np.ndarray]:
    r"""``cluster_ss`` (:math:`\sum_g E_g^2`) and ``n_clusters`` per group from the case-level frame.

    The score of a cluster, ``score_{i}``, is the sum of its cases' ``residual_{i}`` (:math:`d_i - \bar d`).
    """
    residuals = [
        (pl.col(column("difference", i)) - pl.col(column("difference", i)).mean().over(list(keys))).alias(
            column("residual", i)
        )
        for i in range(m)
    ]
    per_cluster = (
        cases.with_columns(residuals)
        .group_by([*keys, cluster])
        .agg(
            [pl.col(column("residual", i)).sum().alias(column("score", i)) for i in range(m)]
            + [pl.col(column("difference", i)).count().alias(column("count", i)) for i in range(m)]
        )
    )
    return _totals(per_cluster, groups, keys, cluster, m)


def cluster_step(
    rows: Rows, sums: dict[str, np.ndarray], *, paired: bool, sd: np.ndarray, confidence: float, alpha: float
) -> Patch:
    """Replace the design's test, SE-based inference and d CI by the cluster-robust ones, for every row.

    ``sums`` are :func:`independent_cluster_sums` or :func:`paired_cluster_sums` as table rows.
    Rows with fewer than 2 clusters, or a zero standard error, become degenerate. The CI of d is
    the CI of the difference divided by ``sd`` (the pooled SD, or the SD of the differences when
    paired), which treats the SD as known.
    """
    g, ss = sums["n_clusters"], sums["cluster_ss"]
    with np.errstate(all="ignore"):
        if paired:
            n = rows.cols["n_pairs"]
            var = g / (g - 1.0) * ss / n**2
        else:
            n = rows.cols["n_treatment"] + rows.cols["n_control"]
            var = g / (g - 1.0) * (n - 1.0) / (n - 2.0) * ss
        se = np.sqrt(var)
    few = (g < 2) & rows.ok
    # An SE at rounding-noise level relative to the means is zero (as designs.zero_sd does for SDs):
    # exactly cancelling cluster scores come out as 0 or 1e-17 depending on the order of the sums.
    zero = (~(se > 0) | zero_sd(var, rows.cols["mean_treatment"], rows.cols["mean_control"])) & rows.ok & ~few
    notes = warnings_on(few, lambda r: f"fewer than 2 clusters (n_clusters={g[r]:.0f})")
    for r, messages in warnings_on(zero, "cluster-robust standard error is 0").items():
        notes.setdefault(r, []).extend(messages)
    dof = g - 1.0
    inference = t_inference(rows.cols["difference"], se, dof, confidence)
    with np.errstate(all="ignore"):
        d_ci_low, d_ci_high = inference["ci_low"] / sd, inference["ci_high"] / sd
    columns = {
        "test": "paired_cluster" if paired else "ols_cluster",
        "n_clusters": g,
        "dof": dof,
        **inference,
        "ci_method": "cluster",
        "standard_error": se,
        "d_ci_low": d_ci_low,
        "d_ci_high": d_ci_high,
        "power": observed_power(inference["statistic"], dof, alpha),
    }
    return Patch(columns=columns, warnings=notes, invalid=few | zero)
