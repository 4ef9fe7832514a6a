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
from mas_eval.stats._rows import Rows
from mas_eval.stats.effects import observed_power
from mas_eval.stats.summaries import align, metric, to_arrays
from mas_eval.stats.ttests import t_inference

__all__ = ["apply_cluster", "independent_cluster_sums", "paired_cluster_sums"]


def _totals(
    per_cluster: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], cluster: str, m: int
) -> dict[str, np.ndarray]:
    """Per group: ``cluster_ss`` (sum of squared cluster scores) and ``n_clusters`` with any value.

    ``per_cluster`` comes from a group-by, whose rows come in no fixed order; it is sorted by its
    keys (which include the cluster) so that the sum over clusters is the same to the last bit on
    every call.
    """
    ordered = per_cluster.sort([*keys, cluster], nulls_last=True)
    totals = ordered.group_by(list(keys), maintain_order=True).agg(
        [(pl.col(f"u{i}") ** 2).sum().alias(f"S{i}") for i in range(m)]
        + [(pl.col(f"k{i}") > 0).sum().alias(f"G{i}") for i in range(m)]
    )
    arrays = to_arrays(align(groups, totals.collect(engine=ENGINE), keys), {"cluster_ss": "S", "n_clusters": "G"}, m)
    arrays["n_clusters"] = np.nan_to_num(arrays["n_clusters"], nan=0.0)
    return arrays


def independent_cluster_sums(
    runs: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], system: str, treatment: str, cluster: str, m: int
) -> dict[str, np.ndarray]:
    """``cluster_ss`` and ``n_clusters`` per group of an independent design, in one query."""
    within = [*keys, system]
    residuals = [(pl.col(metric(i)) - pl.col(metric(i)).mean().over(within)).alias(f"e{i}") for i in range(m)]
    # Sorted and materialised so that each cluster's runs are contiguous: the sums below then come
    # out the same to the last bit on every call (a group-by merges per-thread partial sums).
    ordered = runs.sort([*keys, cluster, system], nulls_last=True, maintain_order=True).collect(engine=ENGINE)
    sums = (
        ordered.lazy()
        .with_columns(residuals)
        .group_by([*keys, cluster, system])
        .agg(
            [pl.col(f"e{i}").sum().alias(f"E{i}") for i in range(m)]
            + [pl.col(metric(i)).count().alias(f"k{i}") for i in range(m)]
        )
    )
    sign = pl.when(pl.col(system) == treatment).then(1.0).otherwise(-1.0)
    scores = sums.with_columns(
        (sign * pl.col(f"E{i}") / pl.col(f"k{i}").sum().over(within)).alias(f"u{i}") for i in range(m)
    )
    per_cluster = scores.group_by([*keys, cluster]).agg(
        [pl.col(f"u{i}").sum() for i in range(m)] + [pl.col(f"k{i}").sum() for i in range(m)]
    )
    return _totals(per_cluster, groups, keys, cluster, m)


def paired_cluster_sums(
    cases: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], cluster: str, m: int
) -> dict[str, np.ndarray]:
    """``cluster_ss`` (:math:`\\sum_g E_g^2`) and ``n_clusters`` per group from the case-level frame."""
    residuals = [(pl.col(f"d{i}") - pl.col(f"d{i}").mean().over(list(keys))).alias(f"e{i}") for i in range(m)]
    per_cluster = (
        cases.with_columns(residuals)
        .group_by([*keys, cluster])
        .agg(
            [pl.col(f"e{i}").sum().alias(f"u{i}") for i in range(m)]
            + [pl.col(f"d{i}").count().alias(f"k{i}") for i in range(m)]
        )
    )
    return _totals(per_cluster, groups, keys, cluster, m)


def apply_cluster(
    rows: Rows, arrays: dict[str, np.ndarray], *, paired: bool, sd: np.ndarray, confidence: float, alpha: float
) -> None:
    """Replace the rows' test, SE-based inference and d CI by the cluster-robust ones.

    The CI of d is the CI of the difference divided by ``sd`` (the pooled SD, or the SD of the
    differences when paired), which treats the SD as known.
    """
    g, ss = arrays["n_clusters"], arrays["cluster_ss"]
    with np.errstate(all="ignore"):
        if paired:
            n = rows.cols["n_pairs"]
            var = g / (g - 1.0) * ss / n**2
        else:
            n = rows.cols["n_treatment"] + rows.cols["n_control"]
            var = g / (g - 1.0) * (n - 1.0) / (n - 2.0) * ss
        se = np.sqrt(var)
    rows.set("test", "paired_cluster" if paired else "ols_cluster")
    rows.set("n_clusters", g)
    rows.warn((g < 2) & rows.ok, lambda r: f"fewer than 2 clusters (n_clusters={g[r]:.0f})")
    rows.warn(~(se > 0) & rows.ok, "cluster-robust standard error is 0")
    dof = g - 1.0
    inference = t_inference(rows.cols["difference"], se, dof, confidence)
    rows.set("dof", dof)
    for name, values in inference.items():
        rows.set(name, values)
    rows.set("ci_method", "cluster")
    with np.errstate(all="ignore"):
        rows.set("d_ci_low", inference["ci_low"] / sd)
        rows.set("d_ci_high", inference["ci_high"] / sd)
    rows.set("power", observed_power(inference["statistic"], dof, alpha))
