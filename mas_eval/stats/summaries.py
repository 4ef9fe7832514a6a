"""Group sufficient statistics in Polars: one pass per design, every metric aggregated at once.

The frames here hold the compared runs with the metrics renamed ``_m0``, ``_m1``, ... (so that no
metric name can collide with a key or a generated column), cast to Float64 with NaN as null.
Results come back as ``(G, M)`` numpy arrays aligned with a sorted frame of the ``G`` groups;
:func:`flat` lays them out as table rows (group-major, metric-minor).
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
    "Sample",
    "Summary",
    "align",
    "flat",
    "independent_samples",
    "independent_summary",
    "metric",
    "paired_samples",
    "paired_summary",
    "realign",
    "to_arrays",
]

#: Raw values of one (group, metric) row: (treatment, control), or (differences, None) when paired.
Sample = tuple[np.ndarray, np.ndarray | None] | None


def metric(i: int) -> str:
    """Internal name of the i-th metric column."""
    return f"_m{i}"


@dataclass
class Summary:
    """``groups``: the sorted group keys (G rows); ``arrays``: name -> (G, M) arrays; ``cases``: paired only."""

    groups: pl.DataFrame
    arrays: dict[str, np.ndarray]
    cases: pl.LazyFrame | None = None


def flat(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``(G, M)`` arrays as table rows in output order (group-major, metric-minor)."""
    return {name: np.asarray(values, dtype=float).reshape(-1) for name, values in arrays.items()}


def align(groups: pl.DataFrame, frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """``frame``'s rows in the order of ``groups`` (null keys match null keys; missing groups are null)."""
    return groups.join(frame, on=list(keys), how="left", nulls_equal=True, maintain_order="left")


def to_arrays(frame: pl.DataFrame, names: dict[str, str], m: int) -> dict[str, np.ndarray]:
    """``{out: (G, M) float array}`` from columns ``f"{prefix}{i}"`` for each ``out -> prefix``."""
    out = {}
    for name, prefix in names.items():
        block = frame.select(pl.col(f"{prefix}{i}").cast(pl.Float64) for i in range(m))
        out[name] = block.to_numpy().astype(float, copy=False).reshape(frame.height, m)
    return out


def _sorted_groups(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    return frame.select(keys).unique().sort(keys, nulls_last=True)


def realign(summary: Summary, groups: pl.DataFrame, keys: Sequence[str]) -> Summary:
    """``summary`` re-indexed to ``groups`` (groups it lacks get zero counts and NaN statistics)."""
    if summary.groups.equals(groups):
        return summary
    position = align(groups, summary.groups.with_row_index("_pos"), keys)["_pos"].to_numpy().astype(float)
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
    """n (non-null), mean and variance (ddof 1) of every metric per group and system: one group-by."""
    aggs = []
    for i in range(m):
        col = pl.col(metric(i))
        aggs += [col.count().alias(f"n{i}"), col.mean().alias(f"mean{i}"), col.var(ddof=1).alias(f"var{i}")]
    wide = runs.group_by([*keys, system]).agg(aggs).collect(engine=ENGINE)
    groups = _sorted_groups(wide, keys)
    arrays: dict[str, np.ndarray] = {}
    for side, name in (("t", treatment), ("c", control)):
        aligned = align(groups, wide.filter(pl.col(system) == name).drop(system), keys)
        part = to_arrays(aligned, {f"n_{side}": "n", f"mean_{side}": "mean", f"var_{side}": "var"}, m)
        part[f"n_{side}"] = np.nan_to_num(part[f"n_{side}"], nan=0.0)
        arrays.update(part)
    return Summary(groups, arrays)


def _case_level(
    runs: pl.LazyFrame,
    keys: Sequence[str],
    system: str,
    names: tuple[str, str],
    pair_on: str,
    m: int,
    cluster: str | None,
) -> pl.LazyFrame:
    """One row per (group, case): each system's case mean ``t{i}``/``c{i}``, runs ``kt{i}``/``kc{i}``, ``d{i}``."""
    aggs = []
    for i in range(m):
        aggs += [pl.col(metric(i)).mean().alias(f"a{i}"), pl.col(metric(i)).count().alias(f"k{i}")]
    if cluster is not None:
        aggs += [pl.col(cluster).first().alias("_cl"), pl.col(cluster).n_unique().alias("_cln")]
    per_case = runs.group_by([*keys, pair_on, system]).agg(aggs)

    def side(name: str, tag: str) -> pl.LazyFrame:
        renames = [pl.col(f"a{i}").alias(f"{tag}{i}") for i in range(m)]
        renames += [pl.col(f"k{i}").alias(f"k{tag}{i}") for i in range(m)]
        if cluster is not None:
            renames += [pl.col("_cl").alias(f"_cl{tag}"), pl.col("_cln").alias(f"_cln{tag}")]
        return per_case.filter(pl.col(system) == name).select(*keys, pair_on, *renames)

    wide = side(names[0], "t").join(side(names[1], "c"), on=[*keys, pair_on], how="full", coalesce=True,
                                    nulls_equal=True)  # fmt: skip
    columns = [(pl.col(f"t{i}") - pl.col(f"c{i}")).alias(f"d{i}") for i in range(m)]
    if cluster is not None:
        columns.append(pl.coalesce("_clt", "_clc").alias(cluster))
    # Group-by and join outputs come in no fixed order; sorted cases make every later sum (and so
    # every result, to the last bit) the same from call to call and independent of the input order.
    return wide.with_columns(columns).sort([*keys, pair_on], nulls_last=True, maintain_order=True)


def _check_case_clusters(cases: pl.LazyFrame, pair_on: str, label: str) -> None:
    spanning = (pl.col("_clnt") > 1) | (pl.col("_clnc") > 1) | (pl.col("_clt") != pl.col("_clc")).fill_null(False)
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
    case table (materialised, sorted by case), then one group-by group. Per metric: ``n_pairs``
    (cases where both systems have a value), mean and variance of the differences, mean and
    variance of each system's case means over those cases, the runs they average (``runs_t``,
    ``runs_c``), ``unpaired`` cases (one system only), and the cases with any value per system
    (``cases_t``, ``cases_c``). ``cluster`` is (internal column, user's name); every case must
    lie in one cluster.
    """
    # Materialised and sorted: the optimiser would drop a sort that only feeds a group-by, and the
    # join's row order varies from call to call (so would the last bits of every sum).
    cases = _case_level(runs, keys, system, names, pair_on, m, cluster[0] if cluster else None)
    cases = cases.collect(engine=ENGINE).lazy()
    if cluster is not None:
        _check_case_clusters(cases, pair_on, cluster[1])
    aggs = []
    for i in range(m):
        d, t, c = pl.col(f"d{i}"), pl.col(f"t{i}"), pl.col(f"c{i}")
        paired = d.is_not_null()
        aggs += [
            d.count().alias(f"np{i}"),
            d.mean().alias(f"md{i}"),
            d.var(ddof=1).alias(f"vd{i}"),
            t.filter(paired).mean().alias(f"mt{i}"),
            t.filter(paired).var(ddof=1).alias(f"vt{i}"),
            c.filter(paired).mean().alias(f"mc{i}"),
            c.filter(paired).var(ddof=1).alias(f"vc{i}"),
            pl.col(f"kt{i}").filter(paired).sum().alias(f"rt{i}"),
            pl.col(f"kc{i}").filter(paired).sum().alias(f"rc{i}"),
            (t.is_not_null() != c.is_not_null()).sum().alias(f"up{i}"),
            t.count().alias(f"ct{i}"),
            c.count().alias(f"cc{i}"),
        ]
    wide = cases.group_by(list(keys)).agg(aggs).collect(engine=ENGINE)
    groups = _sorted_groups(wide, keys)
    names_map = {
        "n_pairs": "np", "mean_d": "md", "var_d": "vd", "mean_t": "mt", "var_t": "vt", "mean_c": "mc", "var_c": "vc",
        "runs_t": "rt", "runs_c": "rc", "unpaired": "up", "cases_t": "ct", "cases_c": "cc",
    }  # fmt: skip
    arrays = to_arrays(align(groups, wide, keys), names_map, m)
    for count in ("n_pairs", "runs_t", "runs_c", "unpaired", "cases_t", "cases_c"):
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
    frame = cases.select(*keys, pair_on, *(f"d{i}" for i in range(m))).sort([*keys, pair_on]).collect(engine=ENGINE)
    parts = _partitions(frame, keys)
    out: list[Sample] = []
    # A loop over (group, metric) rows, not runs: the bootstrap takes each row's differences.
    for key in groups.iter_rows():
        part = parts.get(key)
        for i in range(m):
            out.append(None if part is None else (part[f"d{i}"].drop_nulls().to_numpy().astype(float), None))
    return out
