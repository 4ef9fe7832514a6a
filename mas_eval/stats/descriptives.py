"""Each system's mean of each metric with its interval: what a report's headline table shows.

:func:`describe` gives, per group and system, the mean of every metric with a confidence interval
chosen by the metric's kind and the design: Wilson's score interval for a pass/fail metric whose
runs are independent, the t interval for a graded one, and the cluster-robust (CR1) interval of
the mean when runs repeat a case (epochs), which the other two would make too narrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy.special import stdtrit

from mas_eval.constraints import (
    COLUMN_NAME,
    COLUMN_NAMES,
    NONE,
    PROBABILITY,
    RUN_METRICS,
    check_columns,
    validate_params,
)
from mas_eval.errors import SchemaError
from mas_eval.stats._common import ENGINE, as_lazy, check_no_nulls, column_list
from mas_eval.stats.proportions import proportion_interval

__all__ = ["DESCRIBE_COLUMNS", "describe"]

#: The columns :func:`describe` returns after the ``by`` columns and ``system``.
DESCRIBE_COLUMNS = ("metric", "kind", "n", "clusters", "mean", "sd", "ci_low", "ci_high", "interval")

_VALUE, _METRIC, _CLUSTER = "__value", "__metric", "__cluster"


def _finite(value: pl.Expr) -> pl.Expr:
    """``value`` where finite, else null: NaN and infinities are left out like nulls."""
    return pl.when(value.is_finite()).then(value)


_EMPTY = {
    "metric": pl.String, "kind": pl.String, "n": pl.Int64, "clusters": pl.Int64, "mean": pl.Float64,
    "sd": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "interval": pl.String,
}  # fmt: skip


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metrics": [COLUMN_NAMES],
        "by": [COLUMN_NAMES, NONE],
        "cluster": [COLUMN_NAME, NONE],
        "confidence": [PROBABILITY],
        "system": [COLUMN_NAME],
    }
)
def describe(
    run_metrics: Any,
    metrics: str | Sequence[str],
    by: str | Sequence[str] | None = None,
    *,
    cluster: str | None = None,
    confidence: float = 0.95,
    system: str = "system",
) -> pl.DataFrame:
    r"""Return the mean of each metric per system (and group), with a confidence interval fit for its kind.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run, with ``system``, the metrics and any ``by`` / ``cluster`` column.
    metrics : str or list of str
        Boolean (pass/fail) or numeric columns; nulls and NaN are left out.
    by : str or list of str, optional
        Grouping columns besides ``system``.
    cluster : str, optional
        Column whose values are clusters of correlated runs (the case, when runs repeat it). Given,
        every interval is cluster-robust.
    confidence : float
        Level of the intervals, in (0, 1).
    system : str
        The column naming each run's system.

    Returns
    -------
    polars.DataFrame
        One row per group, system and metric, sorted by group, metric (in the order given) and system:

        ============ ==============================================================
        (``by``)     the group
        system       the system
        metric       the metric
        kind         ``"pass/fail"`` (Boolean) or ``"graded"``
        n            runs with a value
        clusters     clusters with a value (null without ``cluster``)
        mean         :math:`\bar y`: the pass rate of a pass/fail metric
        sd           the sample standard deviation (null below 2 runs)
        ci_low/_high the interval; null where undefined (see ``interval``)
        interval     ``"wilson"``, ``"t"`` or ``"cluster"``
        ============ ==============================================================

    Notes
    -----
    Without ``cluster``: a pass/fail metric gets Wilson's (1927) score interval of :math:`c/n`
    (:func:`~mas_eval.stats.proportion_interval`, as R's ``prop.test(c, n, correct = FALSE)``), a
    graded one :math:`\bar y \pm t_{n-1}\, s/\sqrt n` (R's ``t.test``). With ``cluster``, both get the
    CR1 interval :math:`\bar y \pm t_{G-1}\,SE`,
    :math:`SE = \sqrt{\tfrac{G}{G-1}\sum_g e_g^2}\,/\,n` with :math:`e_g = \sum_{i \in g}(y_i - \bar y)`
    over the :math:`G` clusters (Miller 2024, "Adding Error Bars to Evals"; the interval
    :func:`~mas_eval.stats.pass_rates` gives as ``cluster_low``/``cluster_high``), a pass rate's clipped to
    [0, 1]; null below 2 clusters. Every sum is taken over sorted rows, so equal inputs give equal bits.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4,
    ...                      "solved": [True, True, True, False, True, False, False, False],
    ...                      "tokens": [900.0, 1100.0, 1000.0, 1000.0, 200.0, 300.0, 250.0, 250.0]})
    >>> table = describe(runs, ["solved", "tokens"])
    >>> table.select("system", "metric", "mean", "interval").rows()
    [('mas', 'solved', 0.75, 'wilson'), ('single', 'solved', 0.25, 'wilson'), ('mas', 'tokens', 1000.0, 't'), ('single', 'tokens', 250.0, 't')]
    >>> [round(v, 4) for v in table.row(0, named=True).values() if isinstance(v, float)][2:]
    [0.3006, 0.9544]
    """  # noqa: E501
    names = column_list(metrics, "metrics", required=True)
    groups = column_list(by, "by")
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    _check_describe_columns(schema, frame, names, [system, *groups], cluster)
    keys = [*groups, system]
    base, wide, sums = _sums(frame, keys, names, cluster)
    if sums.height == 0:  # no metric has a value: no row
        return pl.DataFrame(schema={**{c: sums.schema[c] for c in [*groups, system]}, **_EMPTY})
    n = sums["n"].to_numpy().astype(float)
    sd = sums["sd"].fill_null(np.nan).to_numpy()
    binary = np.array([schema[m] == pl.Boolean for m in names], dtype=bool)[sums[_METRIC].to_numpy()]
    if cluster is None:
        low, high, clusters, interval = _plain_intervals(sums, n, sd, binary, confidence)
    else:
        low, high, clusters, interval = _cluster_intervals(base, wide, sums, keys, len(names), binary, confidence)
    out = sums.select(
        *groups,
        system,
        pl.col(_METRIC).replace_strict(dict(enumerate(names)), return_dtype=pl.String).alias("metric"),
        pl.Series("kind", np.where(binary, "pass/fail", "graded")),
        pl.col("n").cast(pl.Int64),
        clusters,
        pl.col("mean"),
        pl.Series("sd", sd, nan_to_null=True),
        pl.Series("ci_low", low, nan_to_null=True),
        pl.Series("ci_high", high, nan_to_null=True),
        pl.Series("interval", interval),
    )
    return out


def _check_describe_columns(
    schema: pl.Schema, frame: pl.LazyFrame, names: list[str], keys: list[str], cluster: str | None
) -> None:
    """Check that the runs have the key, metric and cluster columns :func:`describe` reads, of usable types."""
    where = "describe"
    check_columns(schema, keys, f"{where}: run_metrics")
    check_columns(schema, names, f"{where}: metrics")
    for name in names:
        if not (schema[name].is_numeric() or schema[name] == pl.Boolean):
            msg = f"{where}: metric {name!r} is {schema[name]}; a mean needs a Boolean (pass/fail) or numeric column"
            raise SchemaError(msg)
    if cluster is not None:
        check_columns(schema, [cluster], f"{where}: cluster")
        check_no_nulls(frame, [cluster], f"{where}: cluster")


def _sums(
    frame: pl.LazyFrame, keys: list[str], names: list[str], cluster: str | None
) -> tuple[pl.LazyFrame, pl.DataFrame, pl.DataFrame]:
    """Return the sorted runs, the per-key wide sums, and the long sums: one row per group, metric, system."""
    # One pass over the runs, every metric a column (not one frame per metric): sorted before any sum, so that
    # the means and the cluster sums add their terms in one order.
    values = [_finite(pl.col(metric).cast(pl.Float64)).alias(f"{_VALUE}{i}") for i, metric in enumerate(names)]
    base = frame.select(*keys, *([pl.col(cluster).alias(_CLUSTER)] if cluster else []), *values).sort(
        [*keys, *([_CLUSTER] if cluster else [])], nulls_last=True
    )
    columns = [f"{_VALUE}{i}" for i in range(len(names))]
    wide = (
        base.group_by(keys, maintain_order=True)
        .agg(
            *(pl.col(c).count().alias(f"n{i}") for i, c in enumerate(columns)),
            *(pl.col(c).sum().alias(f"total{i}") for i, c in enumerate(columns)),
            *(pl.col(c).mean().alias(f"mean{i}") for i, c in enumerate(columns)),
            *(pl.col(c).std().alias(f"sd{i}") for i, c in enumerate(columns)),
        )
        .collect(engine=ENGINE)
    )
    cell = [*keys[:-1], _METRIC, keys[-1]]
    parts = [
        wide.select(
            *keys,
            pl.lit(i, pl.Int32).alias(_METRIC),
            pl.col(f"n{i}").cast(pl.UInt32).alias("n"),
            pl.col(f"total{i}").alias("total"),
            pl.col(f"mean{i}").alias("mean"),
            pl.col(f"sd{i}").alias("sd"),
        )
        for i in range(len(names))
    ]
    sums = (
        pl.concat(parts).filter(pl.col("n") > 0).sort(cell, nulls_last=True).select(*cell, "n", "total", "mean", "sd")
    )
    return base, wide, sums


def _plain_intervals(
    sums: pl.DataFrame, n: np.ndarray, sd: np.ndarray, binary: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray, pl.Series, np.ndarray]:
    """Return Wilson's interval of the pass/fail rows and the t interval of the graded ones (no clusters)."""
    mean = sums["mean"].to_numpy()
    # Wilson's interval of the pass/fail rows (a graded row's sum is no count of passes).
    passes = np.where(binary, sums["total"].to_numpy(), 0.0)
    wilson = proportion_interval(passes, n, "wilson", confidence)
    with np.errstate(all="ignore"):
        half = stdtrit(np.maximum(n - 1, 1), 0.5 + confidence / 2) * sd / np.sqrt(n)
    low = np.where(binary, wilson[0], np.where(n >= 2, mean - half, np.nan))
    high = np.where(binary, wilson[1], np.where(n >= 2, mean + half, np.nan))
    clusters = pl.Series("clusters", [None] * sums.height, dtype=pl.Int64)
    return low, high, clusters, np.where(binary, "wilson", "t")


def _cluster_intervals(
    base: pl.LazyFrame,
    wide: pl.DataFrame,
    sums: pl.DataFrame,
    keys: list[str],
    m: int,
    binary: np.ndarray,
    confidence: float,
) -> tuple[np.ndarray, np.ndarray, pl.Series, np.ndarray]:
    """Return the CR1 interval of every row, from its clusters' sums (a pass rate's clipped to [0, 1])."""
    n = sums["n"].to_numpy().astype(float)
    mean = sums["mean"].to_numpy()
    cell = [*keys[:-1], _METRIC, keys[-1]]
    # e_g = sum over cluster g of (y - mean) = s_g - n_g mean, from each cluster's sum and count.
    columns = [f"{_VALUE}{i}" for i in range(m)]
    per_cluster = (
        base.group_by([*keys, _CLUSTER], maintain_order=True)
        .agg(
            *(pl.col(c).sum().alias(f"s{i}") for i, c in enumerate(columns)),
            *(pl.col(c).count().alias(f"c{i}") for i, c in enumerate(columns)),
        )
        .join(wide.lazy().select(*keys, *(f"mean{i}" for i in range(m))), on=keys, how="left",
              nulls_equal=True, maintain_order="left")
        .group_by(keys, maintain_order=True)
        .agg(
            *(((pl.col(f"s{i}") - pl.col(f"c{i}") * pl.col(f"mean{i}")) ** 2).sum().alias(f"ss{i}")
              for i in range(m)),
            *((pl.col(f"c{i}") > 0).sum().alias(f"g{i}") for i in range(m)),
        )
        .collect(engine=ENGINE)
    )  # fmt: skip
    scores = pl.concat(
        [
            per_cluster.select(*keys, pl.lit(i, pl.Int32).alias(_METRIC), pl.col(f"ss{i}").alias("ss"),
                               pl.col(f"g{i}").cast(pl.UInt32).alias("g"))
            for i in range(m)
        ]
    )  # fmt: skip
    aligned = sums.select(cell).join(scores, on=cell, how="left", nulls_equal=True, maintain_order="left")
    g = aligned["g"].fill_null(0).to_numpy().astype(float)
    with np.errstate(all="ignore"):
        se = np.sqrt(g / (g - 1.0) * aligned["ss"].to_numpy()) / n
        half = stdtrit(np.maximum(g - 1, 1), 0.5 + confidence / 2) * se
    ok = g >= 2
    low = np.where(ok, np.where(binary, np.clip(mean - half, 0, 1), mean - half), np.nan)
    high = np.where(ok, np.where(binary, np.clip(mean + half, 0, 1), mean + half), np.nan)
    clusters = pl.Series("clusters", g.astype(np.int64))
    return low, high, clusters, np.full(n.shape, "cluster")
