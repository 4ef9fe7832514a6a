"""Group sufficient statistics in Polars: one pass per design, every metric aggregated at once.

The frames here hold the compared runs with the metrics renamed ``_metric_0``, ``_metric_1``, ...
(so that no metric name can collide with a key or a generated column), cast to Float64 with NaN
as null. A statistic of metric ``i`` is computed into column ``column(stat, i)``, ``f"{stat}_{i}"``
(``n_pairs_3``), and comes back as the ``(G, M)`` numpy array ``stat``, aligned with a sorted
frame of the ``G`` groups; :func:`flat` lays them out as table rows (group-major, metric-minor).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from mas_eval.errors import DataError, format_keys
from mas_eval.stats._common import ENGINE

__all__ = [
    "PAIRED_STATS",
    "Sample",
    "Summary",
    "align",
    "case_table",
    "column",
    "flat",
    "independent_samples",
    "independent_summary",
    "independent_summary_from",
    "metric",
    "paired_samples",
    "paired_summary",
    "paired_summary_from",
    "realign",
    "to_arrays",
]

#: Raw values of one (group, metric) row: (treatment, control), or (differences, None) when paired.
Sample = tuple[np.ndarray, np.ndarray | None] | None


def column(stat: str, i: int) -> str:
    """Return the column of statistic ``stat`` of the i-th metric.

    Examples
    --------
    >>> column("n_pairs", 3)
    'n_pairs_3'
    """
    return f"{stat}_{i}"


def metric(i: int) -> str:
    """Return the internal name of the i-th metric's values.

    Examples
    --------
    >>> metric(0)
    '_metric_0'
    """
    return column("_metric", i)


@dataclass
class Summary:
    """``groups``: the sorted group keys (G rows); ``arrays``: name -> (G, M) arrays; ``cases``: paired only."""

    groups: pl.DataFrame
    arrays: dict[str, np.ndarray]
    cases: pl.LazyFrame | None = None


def flat(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Return ``(G, M)`` arrays as table rows in output order (group-major, metric-minor).

    Examples
    --------
    >>> flat({"mean_t": np.array([[1.0, 2.0], [3.0, 4.0]])})
    {'mean_t': array([1., 2., 3., 4.])}
    """
    return {name: np.asarray(values, dtype=float).reshape(-1) for name, values in arrays.items()}


def align(groups: pl.DataFrame, frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Return ``frame``'s rows in the order of ``groups`` (null keys match null keys; missing groups are null).

    Examples
    --------
    >>> groups = pl.DataFrame({"task": ["a", "b", None]})
    >>> align(groups, pl.DataFrame({"task": [None, "a"], "n": [2, 5]}), ["task"]).rows()
    [('a', 5), ('b', None), (None, 2)]
    """
    return groups.join(frame, on=list(keys), how="left", nulls_equal=True, maintain_order="left")


def to_arrays(frame: pl.DataFrame, stats: Sequence[str], m: int) -> dict[str, np.ndarray]:
    """Return ``{stat: (G, M) float array}`` from the columns ``column(stat, i)``, i < m, of each statistic.

    Examples
    --------
    >>> to_arrays(pl.DataFrame({"n_0": [3, 4], "n_1": [5, 6]}), ["n"], 2)["n"].tolist()
    [[3.0, 5.0], [4.0, 6.0]]
    """
    out = {}
    for stat in stats:
        block = frame.select(pl.col(column(stat, i)).cast(pl.Float64) for i in range(m))
        out[stat] = block.to_numpy().astype(float, copy=False).reshape(frame.height, m)
    return out


def _sorted_groups(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    return frame.select(keys).unique().sort(keys, nulls_last=True)


def realign(summary: Summary, groups: pl.DataFrame, keys: Sequence[str]) -> Summary:
    """``summary`` re-indexed to ``groups`` (groups it lacks get zero counts and NaN statistics)."""
    if summary.groups.equals(groups):
        return summary
    position = align(groups, summary.groups.with_row_index("_position"), keys)["_position"].to_numpy().astype(float)
    found = ~np.isnan(position)
    arrays = {}
    for name, values in summary.arrays.items():
        picked = np.full((groups.height, values.shape[1]), np.nan)
        picked[found] = values[position[found].astype(int)]
        arrays[name] = np.nan_to_num(picked, nan=0.0) if name.startswith("n_") else picked
    return Summary(groups, arrays, summary.cases)


def independent_summary(
    runs: pl.LazyFrame, keys: Sequence[str], system: str, treatment: str, control: str, m: int
) -> Summary:
    """N (non-null), mean and variance (ddof 1) of every metric per group and system: one group-by.

    The arrays are ``n_t``, ``mean_t``, ``var_t`` (treatment) and ``n_c``, ``mean_c``, ``var_c``.

    Examples
    --------
    >>> runs = pl.LazyFrame({"task": ["a"] * 5, "system": ["mas"] * 3 + ["single"] * 2,
    ...                      "_metric_0": [1.0, 2.0, 3.0, 2.0, 4.0]})
    >>> summary = independent_summary(runs, ["task"], "system", "mas", "single", 1)
    >>> {name: values.tolist() for name, values in summary.arrays.items()}
    {'n_t': [[3.0]], 'mean_t': [[2.0]], 'var_t': [[1.0]], 'n_c': [[2.0]], 'mean_c': [[3.0]], 'var_c': [[2.0]]}
    """
    aggs = []
    for i in range(m):
        values = pl.col(metric(i))
        aggs += [
            values.count().alias(column("n", i)),
            values.mean().alias(column("mean", i)),
            values.var(ddof=1).alias(column("var", i)),
        ]
    wide = runs.group_by([*keys, system]).agg(aggs).collect(engine=ENGINE)
    return independent_summary_from(wide, keys, system, treatment, control, m)


def independent_summary_from(
    wide: pl.DataFrame, keys: Sequence[str], system: str, treatment: str, control: str, m: int
) -> Summary:
    """Return :func:`independent_summary` from its group-by.

    The group-by has one row per (group, system) with ``n_{i}``, ``mean_{i}`` and ``var_{i}`` (also
    what merged sufficient statistics give).
    """
    groups = _sorted_groups(wide, keys)
    arrays: dict[str, np.ndarray] = {}
    for side, name in (("t", treatment), ("c", control)):
        aligned = align(groups, wide.filter(pl.col(system) == name).drop(system), keys)
        part = to_arrays(aligned, ("n", "mean", "var"), m)
        part["n"] = np.nan_to_num(part["n"], nan=0.0)
        arrays.update({f"{stat}_{side}": values for stat, values in part.items()})
    return Summary(groups, arrays)


#: The statistics :func:`paired_summary` returns per (group, metric).
PAIRED_STATS = (
    "n_pairs", "mean_d", "var_d", "mean_t", "var_t", "mean_c", "var_c",
    "runs_t", "runs_c", "unpaired", "cases_t", "cases_c",
)  # fmt: skip
#: Those of :data:`PAIRED_STATS` that count something (0, not null, in a group without values).
_PAIRED_COUNTS = ("n_pairs", "runs_t", "runs_c", "unpaired", "cases_t", "cases_c")


def _case_level(
    runs: pl.LazyFrame,
    keys: Sequence[str],
    system: str,
    names: tuple[str, str],
    pair_on: str,
    m: int,
    cluster: str | None,
) -> pl.LazyFrame:
    """Return one row per (group, case) with each system's case means and their differences.

    Per system s (``t``, ``c``) the case mean ``case_mean_{s}_{i}`` and the runs it averages
    ``case_runs_{s}_{i}``, and their ``difference_{i}``; with ``cluster``, each system's first
    cluster ``case_cluster_{s}`` and distinct clusters ``n_case_clusters_{s}``, and the case's ``cluster``.
    """
    aggs = []
    for i in range(m):
        aggs += [
            pl.col(metric(i)).mean().alias(column("case_mean", i)),
            pl.col(metric(i)).count().alias(column("case_runs", i)),
        ]
    if cluster is not None:
        aggs += [pl.col(cluster).first().alias("case_cluster"), pl.col(cluster).n_unique().alias("n_case_clusters")]
    per_case = runs.group_by([*keys, pair_on, system]).agg(aggs)
    return case_table(per_case, keys, system, names, pair_on, m, cluster)


def case_table(
    per_case: pl.LazyFrame,
    keys: Sequence[str],
    system: str,
    names: tuple[str, str],
    pair_on: str,
    m: int,
    cluster: str | None,
) -> pl.LazyFrame:
    """Return the case table of :func:`_case_level` from one row per (group, case, system).

    Each row holds ``case_mean_{i}``, ``case_runs_{i}`` and, with ``cluster``, ``case_cluster`` and
    ``n_case_clusters`` (from the runs, or from merged per-case sums).
    """

    def side(name: str, tag: str) -> pl.LazyFrame:
        renames = [pl.col(column("case_mean", i)).alias(column(f"case_mean_{tag}", i)) for i in range(m)]
        renames += [pl.col(column("case_runs", i)).alias(column(f"case_runs_{tag}", i)) for i in range(m)]
        if cluster is not None:
            renames += [pl.col("case_cluster").alias(f"case_cluster_{tag}"),
                        pl.col("n_case_clusters").alias(f"n_case_clusters_{tag}")]  # fmt: skip
        return per_case.filter(pl.col(system) == name).select(*keys, pair_on, *renames)

    wide = side(names[0], "t").join(side(names[1], "c"), on=[*keys, pair_on], how="full", coalesce=True,
                                    nulls_equal=True)  # fmt: skip
    columns = [
        (pl.col(column("case_mean_t", i)) - pl.col(column("case_mean_c", i))).alias(column("difference", i))
        for i in range(m)
    ]
    if cluster is not None:
        columns.append(pl.coalesce("case_cluster_t", "case_cluster_c").alias(cluster))
    # Group-by and join outputs come in no fixed order; sorted cases make every later sum (and so
    # every result, to the last bit) the same from call to call and independent of the input order.
    return wide.with_columns(columns).sort([*keys, pair_on], nulls_last=True, maintain_order=True)


def _check_case_clusters(cases: pl.LazyFrame, pair_on: str, label: str) -> None:
    spanning = (
        (pl.col("n_case_clusters_t") > 1)
        | (pl.col("n_case_clusters_c") > 1)
        | (pl.col("case_cluster_t") != pl.col("case_cluster_c")).fill_null(False)
    )
    bad = cases.filter(spanning).select(pair_on).head(5).collect(engine=ENGINE)
    if bad.height:
        msg = (
            f"cluster={label!r} is not constant within {pair_on!r}: cases {format_keys(bad.to_dicts())} span "
            f"several clusters; a paired design needs every case inside one cluster"
        )
        raise DataError(msg)


def paired_summary(
    runs: pl.LazyFrame,
    keys: Sequence[str],
    system: str,
    names: tuple[str, str],
    pair_on: str,
    m: int,
    cluster: tuple[str, str] | None = None,
) -> Summary:
    r"""Per-case means first (repeated runs averaged), then per group the differences' statistics.

    Two passes: group-by (group, case, system) and a full join of the two systems give the
    case table (materialised, sorted by case), then one group-by group. Per metric
    (:data:`PAIRED_STATS`): ``n_pairs`` (cases where both systems have a value), mean and
    variance of the differences (``mean_d``, ``var_d``), mean and variance of each system's case
    means over those cases (``mean_t``, ``var_t``, ``mean_c``, ``var_c``), the runs they average
    (``runs_t``, ``runs_c``), ``unpaired`` cases (one system only), and the cases with any value
    per system (``cases_t``, ``cases_c``). ``cluster`` is (internal column, user's name); every
    case must lie in one cluster.
    """
    cases = _case_level(runs, keys, system, names, pair_on, m, cluster[0] if cluster else None)
    return paired_summary_from(cases, keys, pair_on, m, cluster)


def paired_summary_from(
    cases: pl.LazyFrame, keys: Sequence[str], pair_on: str, m: int, cluster: tuple[str, str] | None = None
) -> Summary:
    """:func:`paired_summary` from the case table (:func:`case_table`)."""
    # Materialised and sorted: the optimiser would drop a sort that only feeds a group-by, and the
    # join's row order varies from call to call (so would the last bits of every sum).
    cases = cases.collect(engine=ENGINE).lazy()
    if cluster is not None:
        _check_case_clusters(cases, pair_on, cluster[1])
    aggs = []
    for i in range(m):
        d, t, c = pl.col(column("difference", i)), pl.col(column("case_mean_t", i)), pl.col(column("case_mean_c", i))
        paired = d.is_not_null()
        aggs += [
            d.count().alias(column("n_pairs", i)),
            d.mean().alias(column("mean_d", i)),
            d.var(ddof=1).alias(column("var_d", i)),
            t.filter(paired).mean().alias(column("mean_t", i)),
            t.filter(paired).var(ddof=1).alias(column("var_t", i)),
            c.filter(paired).mean().alias(column("mean_c", i)),
            c.filter(paired).var(ddof=1).alias(column("var_c", i)),
            pl.col(column("case_runs_t", i)).filter(paired).sum().alias(column("runs_t", i)),
            pl.col(column("case_runs_c", i)).filter(paired).sum().alias(column("runs_c", i)),
            (t.is_not_null() != c.is_not_null()).sum().alias(column("unpaired", i)),
            t.count().alias(column("cases_t", i)),
            c.count().alias(column("cases_c", i)),
        ]
    wide = cases.group_by(list(keys)).agg(aggs).collect(engine=ENGINE)
    groups = _sorted_groups(wide, keys)
    arrays = to_arrays(align(groups, wide, keys), PAIRED_STATS, m)
    for count in _PAIRED_COUNTS:
        arrays[count] = np.nan_to_num(arrays[count], nan=0.0)
    return Summary(groups, arrays, cases=cases)


def _partitions(frame: pl.DataFrame, keys: Sequence[str]) -> dict[tuple[Any, ...], pl.DataFrame]:
    return frame.partition_by(list(keys), as_dict=True, maintain_order=True)


def independent_samples(
    runs: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], system: str, names: tuple[str, str], m: int
) -> list[Sample]:
    """Each row's raw (treatment, control) values, in input order (for rank tests and the bootstrap)."""
    raw = runs.select(*keys, system, *(metric(i) for i in range(m))).collect(engine=ENGINE)
    parts = _partitions(raw, keys)
    out: list[Sample] = []
    # A loop over (group, metric) rows, not runs: rank tests and the bootstrap take each row's arrays.
    for key in groups.iter_rows():
        part = parts.get(key)
        for i in range(m):
            if part is None:
                out.append(None)
                continue
            t = part.filter(pl.col(system) == names[0])[metric(i)].drop_nulls().to_numpy().astype(float)
            c = part.filter(pl.col(system) == names[1])[metric(i)].drop_nulls().to_numpy().astype(float)
            out.append((t, c))
    return out


def paired_samples(
    cases: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], pair_on: str, m: int
) -> list[Sample]:
    """Each row's per-case differences, sorted by case (a deterministic order for the bootstrap)."""
    differences = [column("difference", i) for i in range(m)]
    frame = cases.select(*keys, pair_on, *differences).sort([*keys, pair_on]).collect(engine=ENGINE)
    parts = _partitions(frame, keys)
    out: list[Sample] = []
    # A loop over (group, metric) rows, not runs: the bootstrap takes each row's differences.
    for key in groups.iter_rows():
        part = parts.get(key)
        for i in range(m):
            out.append(None if part is None else (part[differences[i]].drop_nulls().to_numpy().astype(float), None))
    return out
