r"""Mergeable sufficient statistics of :func:`~mas_eval.stats.comparison.compare`, for data scored shard by shard.

:func:`sufficient_statistics` reduces one chunk of per-run rows to a few small frames of sums,
:func:`merge_statistics` adds any number of them (in any order, in any grouping), and
``compare(merged, ...)`` runs the same code on the merged sums as on the runs themselves: every
test whose statistic depends only on counts, means, variances and cluster sums (Welch, Student,
paired, the cluster-robust SE, d, g, their CIs, power, the corrections across the table).
Tests that need the raw values (rank tests, the bootstrap, the mixed model) are refused with an
error that says what to do instead.

>>> import polars as pl
>>> from mas_eval.stats import compare
>>> runs = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4,
...                      "dqs": [0.82, 0.85, 0.81, 0.84, 0.75, 0.73, 0.76, 0.74]})
>>> parts = [sufficient_statistics(runs[i::3], "dqs") for i in range(3)]  # three "shards"
>>> merged = merge_statistics(parts)
>>> row = compare(merged, "dqs", test="student").row(0, named=True)
>>> round(row["statistic"], 6), round(row["cohens_d"], 6)
(7.602631, 5.375872)

Notes
-----
Each record holds, per metric, the count :math:`n` of finite values, their sum :math:`S`, a shift
:math:`c` (the chunk's mean of that group and system), the shifted sum :math:`D = \sum (x - c)`
and the centred sum of squares :math:`M_2 = \sum (x - \bar x)^2`, computed in a chunk by the
corrected two-pass formula :math:`M_2 = \sum (x - c)^2 - D^2/n` (Chan, Golub & LeVeque 1983).
Records of the same key merge by

.. math:: n = \sum_j n_j,\quad S = \sum_j S_j,\quad c = \min_j c_j,\quad
          D = \sum_j \big(D_j + n_j (c_j - c)\big),\quad
          M_2 = \sum_j M_{2,j} + \sum_j n_j (o_j - D/n)^2,\quad o_j = (c_j - c) + D_j / n_j,

the k-way form of the pairwise update of Chan, Golub & LeVeque (1979),
:math:`M_2 = M_{2,a} + M_{2,b} + \delta^2 n_a n_b / n`, :math:`\delta = \bar x_b - \bar x_a`. The
offsets :math:`o_j` are means relative to a common shift, so no mean of size :math:`|\bar x|`
is ever subtracted from another: with values near :math:`10^9` and unit noise a merge of
:math:`\sum x^2` would lose every digit, and :math:`\delta` from rounded means would keep only
about seven. The mean is :math:`S/n` (what Polars computes in memory), the variance
:math:`M_2/(n-1)`.

A paired design needs each case's mean per system before any difference, and a case's runs may
sit in different chunks: the ``cases`` level keeps :math:`(n, S)` per (group, case, system) and
differences are taken only when ``compare`` reads the merged sums. The independent
cluster-robust SE needs :math:`E_{sg} = \sum_{i \in g} (y_i - \bar y_s)`, which is
:math:`D_{sg} + n_{sg} (c_{sg} - \bar y_s)` from the ``clusters`` level's shifted sums.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, TEXT, TEXTS, Boolean, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    as_lazy,
    check_columns,
    column_list,
    numeric_value,
)
from mas_eval.stats.guard import DQS_METRICS

__all__ = ["RUNS", "SufficientStatistics", "merge_statistics", "stat_column", "sufficient_statistics"]

#: Column of every level counting the runs of its key (whatever their metric values).
RUNS = "_runs"
#: The per-metric statistics of each level (``dqs_method``'s level counts runs with a DQS value).
LEVEL_STATS: dict[str, tuple[str, ...]] = {
    "moments": ("n", "sum", "shift", "dev", "m2", "nan", "inf"),
    "cases": ("n", "sum"),
    "clusters": ("n", "shift", "dev"),
}
_ADDITIVE = ("n", "sum", "nan", "inf", "has")


def stat_column(stat: str, name: str) -> str:
    """Return the column of statistic ``stat`` of metric ``name`` in a level's frame.

    Examples
    --------
    >>> stat_column("m2", "dqs")
    'm2:dqs'
    """
    return f"{stat}:{name}"


#: Constraint of the parts merged: Sufficient statistics (of shards of one Dataset).
_PARTS = Predicate(
    lambda value: (
        isinstance(value, Iterable)
        and not isinstance(value, str | bytes)
        # A one-pass iterable (a generator) is not read here: merge_statistics checks each part it takes.
        and (not isinstance(value, Collection) or all(isinstance(part, SufficientStatistics) for part in value))
    ),
    "SufficientStatistics (sufficient_statistics' results)",
)


@dataclass(frozen=True)
class SufficientStatistics:
    """Merged (or one chunk's) sums of :func:`sufficient_statistics`, and the options they were built with.

    Attributes
    ----------
    metrics, by, system, pair_on, cluster
        The options of :func:`sufficient_statistics`.
    moments : polars.DataFrame
        Per (``by``..., ``system``): ``_runs`` and per metric ``n``, ``sum``, ``shift``, ``dev``,
        ``m2``, ``nan``, ``inf`` (columns ``"n:dqs"``, ...).
    cases : polars.DataFrame or None
        With ``pair_on``: per (``by``..., ``pair_on``, ``system``[, ``cluster``]) ``_runs``, ``n``, ``sum``.
    clusters : polars.DataFrame or None
        With ``cluster``: per (``by``..., ``system``, ``cluster``) ``_runs``, ``n``, ``shift``, ``dev``.
    methods : polars.DataFrame or None
        When ``dqs`` or ``dqs_raw`` is a metric and the runs have ``dqs_method``: per
        (``by``..., ``system``, ``dqs_method``) the runs with a value of each (``"has:dqs"``), for
        :func:`~mas_eval.stats.guard.dqs_method_guard`.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"task": ["a", "a", "b", "b"] * 2, "system": ["mas"] * 4 + ["single"] * 4,
    ...                      "dqs": [1.0, 0.75, 0.75, 0.5, 0.5, 0.5, 0.25, 0.5]})
    >>> stats = sufficient_statistics(runs, "dqs", by="task")
    >>> stats.metrics, stats.by, stats.system, stats.pair_on
    (('dqs',), ('task',), 'system', None)
    >>> stats.moments.sort("task", "system").select("task", "system", "n:dqs", "sum:dqs").rows()
    [('a', 'mas', 2, 1.75), ('a', 'single', 2, 1.0), ('b', 'mas', 2, 1.25), ('b', 'single', 2, 0.75)]
    """

    metrics: tuple[str, ...]
    by: tuple[str, ...]
    system: str
    pair_on: str | None
    cluster: str | None
    moments: pl.DataFrame
    cases: pl.DataFrame | None = None
    clusters: pl.DataFrame | None = None
    methods: pl.DataFrame | None = None

    @property
    def options(self) -> dict[str, Any]:
        """The options these sums were built with (two sums merge only when they agree)."""
        return {
            "metrics": self.metrics,
            "by": self.by,
            "system": self.system,
            "pair_on": self.pair_on,
            "cluster": self.cluster,
        }

    @validate_params({"level": [TEXT], "by": [TEXTS, NONE]})
    def level_keys(self, level: str, by: Sequence[str] | None = None) -> list[str]:
        """Return the key columns of ``level`` (with ``by`` in place of the built ``by``).

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"task": ["a", "a", "b", "b"] * 2, "system": ["mas"] * 4 + ["single"] * 4,
        ...                      "case_id": ["c1", "c2", "c3", "c4"] * 2,
        ...                      "dqs": [1.0, 0.75, 0.75, 0.5, 0.5, 0.5, 0.25, 0.5]})
        >>> stats = sufficient_statistics(runs, "dqs", by="task", pair_on="case_id")
        >>> stats.level_keys("moments"), stats.level_keys("cases", by=[])
        (['task', 'system'], ['case_id', 'system'])
        """
        by = list(self.by if by is None else by)
        extra = {
            "moments": [self.system],
            "cases": [self.pair_on, self.system, self.cluster],
            "clusters": [self.system, self.cluster],
            "methods": [self.system, "dqs_method"],
        }[level]
        return list(dict.fromkeys([*by, *(k for k in extra if k is not None)]))

    def levels(self) -> dict[str, pl.DataFrame]:
        """Return the levels these sums hold, by name.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"task": ["a", "a", "b", "b"] * 2, "system": ["mas"] * 4 + ["single"] * 4,
        ...                      "case_id": ["c1", "c2", "c3", "c4"] * 2,
        ...                      "dqs": [1.0, 0.75, 0.75, 0.5, 0.5, 0.5, 0.25, 0.5]})
        >>> stats = sufficient_statistics(runs, "dqs", by="task", pair_on="case_id")
        >>> {name: frame.height for name, frame in stats.levels().items()}
        {'moments': 4, 'cases': 8}
        """
        frames = {"moments": self.moments, "cases": self.cases, "clusters": self.clusters, "methods": self.methods}
        return {name: frame for name, frame in frames.items() if frame is not None}

    @validate_params({"by": [TEXTS], "drop_case_cluster": [Boolean()]})
    def regrouped(self, by: Sequence[str], *, drop_case_cluster: bool = False) -> SufficientStatistics:
        """Merge these sums over coarser groups: ``by`` a subset of the built ``by``.

        With ``drop_case_cluster`` the ``cases`` level is also merged over ``cluster`` (a paired
        comparison without the cluster-robust SE).

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"task": ["a", "a", "b", "b"] * 2, "system": ["mas"] * 4 + ["single"] * 4,
        ...                      "case_id": ["c1", "c2", "c3", "c4"] * 2,
        ...                      "dqs": [1.0, 0.75, 0.75, 0.5, 0.5, 0.5, 0.25, 0.5]})
        >>> stats = sufficient_statistics(runs, "dqs", by="task")
        >>> stats.regrouped([]).moments.sort("system").select("system", "n:dqs", "sum:dqs").rows()
        [('mas', 4, 3.0), ('single', 4, 1.75)]
        """
        missing = [name for name in by if name not in self.by]
        if missing:
            msg = (
                f"compare: by={list(by)!r} is not available from these statistics, built with by={list(self.by)!r}; "
                f"{', '.join(map(repr, missing))} must be among them (rebuild with sufficient_statistics(..., by=...))"
            )
            raise InvalidParameterError(msg)
        drop_case_cluster = drop_case_cluster and self.cluster is not None and self.cases is not None
        if list(by) == list(self.by) and not drop_case_cluster:
            return self
        merged: dict[str, Any] = {}
        for level, frame in self.levels().items():
            keys = self.level_keys(level, by)
            if drop_case_cluster and level == "clusters":
                merged[level] = None
                continue
            if drop_case_cluster and level == "cases":
                keys = [k for k in keys if k != self.cluster or k in (self.pair_on, *by)]
            merged[level] = _merge_frames([frame], keys, self.metrics)
        cluster = None if drop_case_cluster else self.cluster
        return replace(self, by=tuple(by), cluster=cluster, **merged)

    @validate_params({"others": [_PARTS]})
    def merge(self, *others: SufficientStatistics) -> SufficientStatistics:
        """Add ``others`` to these sums (see :func:`merge_statistics`).

        The merged levels' rows come in no set order: sort them to read them.

        Examples
        --------
        >>> import polars as pl
        >>> runs = pl.DataFrame({"task": ["a", "a", "b", "b"] * 2, "system": ["mas"] * 4 + ["single"] * 4,
        ...                      "case_id": ["c1", "c2", "c3", "c4"] * 2,
        ...                      "dqs": [1.0, 0.75, 0.75, 0.5, 0.5, 0.5, 0.25, 0.5]})
        >>> first = sufficient_statistics(runs[:4], "dqs", by="task")
        >>> second = sufficient_statistics(runs[4:], "dqs", by="task")
        >>> first.merge(second).moments.sort("task", "system").select("task", "system", "n:dqs").rows()
        [('a', 'mas', 2), ('a', 'single', 2), ('b', 'mas', 2), ('b', 'single', 2)]
        """
        return merge_statistics([self, *others])

    def __add__(self, other: SufficientStatistics) -> SufficientStatistics:
        """Add ``other`` to these sums (``a + b`` is ``a.merge(b)``)."""
        return merge_statistics([self, other])


def _values(schema: pl.Schema, name: str) -> pl.Expr:
    """Metric ``name`` as Float64 with NaN and ±inf as null (``compare`` leaves them out like nulls)."""
    value = numeric_value(schema, name, "metric")
    return pl.when(value.is_finite()).then(value) if schema[name].is_float() else value


def _check_columns(
    schema: pl.Schema, names: list[str], by_columns: list[str], system: str, pair_on: str | None, cluster: str | None
) -> None:
    """Raise if a named column is missing, a metric is also a grouping column, or ``pair_on`` is a ``by`` column."""
    extra = list(dict.fromkeys(c for c in (pair_on, cluster) if c is not None))
    check_columns(schema, [system], "system")
    check_columns(schema, by_columns, "by")
    check_columns(schema, extra, "pair_on/cluster")
    check_columns(schema, names, "metrics")
    clash = [name for name in names if name in {system, *by_columns, *extra}]
    if clash or system in by_columns:
        msg = (
            f"sufficient_statistics: {', '.join(map(repr, clash or [system]))} cannot be both a metric/system and "
            f"a grouping column"
        )
        raise InvalidParameterError(msg)
    if pair_on is not None and pair_on in by_columns:
        msg = f"sufficient_statistics: pair_on={pair_on!r} is also a by column: every group would hold a single case"
        raise InvalidParameterError(msg)


def _n_and_sum(name: str) -> list[pl.Expr]:
    """Return the count and the sum of metric ``name``'s prepared values."""
    value = pl.col(stat_column("value", name))
    return [value.count().cast(pl.Int64).alias(stat_column("n", name)), value.sum().alias(stat_column("sum", name))]


def _shifted(name: str) -> list[pl.Expr]:
    """Return metric ``name``'s shift (its group's centre) and the sum of its values minus that shift."""
    value, centre = pl.col(stat_column("value", name)), pl.col(stat_column("centre", name))
    return [centre.first().alias(stat_column("shift", name)), (value - centre).sum().alias(stat_column("dev", name))]


def _moments(prepared: pl.LazyFrame, schema: pl.Schema, names: list[str], within: list[str]) -> pl.LazyFrame:
    """Return the ``moments`` level: runs, n, sum, shift, deviation, M2 and NaN/inf counts per group and system."""
    moment_aggs = [pl.len().cast(pl.Int64).alias(RUNS)]
    for name in names:
        raw = pl.col(name)
        value, centre = pl.col(stat_column("value", name)), pl.col(stat_column("centre", name))
        is_float = schema[name].is_float()
        moment_aggs += [
            *_n_and_sum(name),
            *_shifted(name),
            ((value - centre) ** 2).sum().alias(stat_column("square", name)),
            (raw.is_nan().sum() if is_float else pl.lit(0)).cast(pl.Int64).alias(stat_column("nan", name)),
            (raw.is_infinite().sum() if is_float else pl.lit(0)).cast(pl.Int64).alias(stat_column("inf", name)),
        ]
    moments = (
        prepared.group_by(within)
        .agg(moment_aggs)
        .with_columns(
            # Corrected two-pass (Chan, Golub & LeVeque 1983): the D^2/n term undoes the rounding of the shift.
            pl.when(pl.col(stat_column("n", name)) > 0)
            .then(
                (
                    pl.col(stat_column("square", name))
                    - pl.col(stat_column("dev", name)) ** 2 / pl.col(stat_column("n", name))
                ).clip(lower_bound=0.0)
            )
            .otherwise(0.0)
            .alias(stat_column("m2", name))
            for name in names
        )
    )
    return moments.select(*within, RUNS, *_stat_columns("moments", names))


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metrics": [COLUMN_NAMES],
        "by": [COLUMN_NAMES, NONE],
        "pair_on": [COLUMN_NAME, NONE],
        "cluster": [COLUMN_NAME, NONE],
        "system": [COLUMN_NAME],
    }
)
def sufficient_statistics(
    run_metrics: Any,
    metrics: str | Iterable[str],
    *,
    by: str | Sequence[str] | None = None,
    pair_on: str | None = None,
    cluster: str | None = None,
    system: str = "system",
) -> SufficientStatistics:
    r"""Reduce one chunk of per-run rows to the sums :func:`~mas_eval.stats.comparison.compare` needs.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run, as for ``compare`` (e.g. one shard's ``Scores.runs``).
    metrics : str or list of str
        Numeric or boolean metric columns; NaN and infinite values are left out like nulls, and
        counted (``compare``'s warning says how many).
    by, pair_on, cluster, system : optional
        As in ``compare``. ``compare`` on the merged sums may use fewer ``by`` columns and may
        leave out ``pair_on`` (an independent test) or ``cluster``; nothing else.

    Returns
    -------
    SufficientStatistics
        Every system's sums, so one set of statistics serves any ``treatment`` / ``control``.

    Raises
    ------
    SchemaError
        A named column is missing or a metric is not numeric.
    InvalidParameterError
        A parameter that is not a column name (or names), a metric that is also a grouping
        column, or ``pair_on`` a ``by`` column.

    Notes
    -----
    One vectorised group-by per level (no loop over runs): ``moments`` per (group, system),
    ``cases`` per (group, case, system) with ``pair_on``, ``clusters`` per (group, system,
    cluster) with ``cluster``; formulas in :mod:`~mas_eval.stats.sufficient`.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas", "mas", "single"], "dqs": [1.0, 3.0, 2.0]})
    >>> sufficient_statistics(runs, "dqs").moments.sort("system").select("system", "n:dqs", "sum:dqs", "m2:dqs")
    shape: (2, 4)
    ┌────────┬───────┬─────────┬────────┐
    │ system ┆ n:dqs ┆ sum:dqs ┆ m2:dqs │
    │ ---    ┆ ---   ┆ ---     ┆ ---    │
    │ str    ┆ i64   ┆ f64     ┆ f64    │
    ╞════════╪═══════╪═════════╪════════╡
    │ mas    ┆ 2     ┆ 4.0     ┆ 2.0    │
    │ single ┆ 1     ┆ 2.0     ┆ 0.0    │
    └────────┴───────┴─────────┴────────┘
    """
    names = column_list(metrics, "metrics", required=True)
    by_columns = column_list(by, "by")
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    _check_columns(schema, names, by_columns, system, pair_on, cluster)
    within = [*by_columns, system]
    # The chunk's mean per group and system is every record's shift: values minus it are small,
    # so the squares and shifted sums below keep their digits whatever the size of the mean.
    prepared = frame.with_columns(_values(schema, name).alias(stat_column("value", name)) for name in names)
    prepared = prepared.with_columns(
        pl.col(stat_column("value", name)).mean().over(within).alias(stat_column("centre", name)) for name in names
    )
    counts = [pl.len().cast(pl.Int64).alias(RUNS)]
    lazy_levels: dict[str, pl.LazyFrame] = {"moments": _moments(prepared, schema, names, within)}

    options = {"by": tuple(by_columns), "system": system, "pair_on": pair_on, "cluster": cluster}
    probe = SufficientStatistics(metrics=tuple(names), moments=pl.DataFrame(), **options)
    if pair_on is not None:
        keys = probe.level_keys("cases")
        aggs = [*counts, *(e for name in names for e in _n_and_sum(name))]
        lazy_levels["cases"] = prepared.group_by(keys).agg(aggs).select(*keys, RUNS, *_stat_columns("cases", names))
    if cluster is not None:
        keys = probe.level_keys("clusters")
        aggs = [*counts, *(e for name in names for e in [_n_and_sum(name)[0], *_shifted(name)])]
        lazy_levels["clusters"] = (
            prepared.group_by(keys).agg(aggs).select(*keys, RUNS, *_stat_columns("clusters", names))
        )
    guarded = [c for c in DQS_METRICS if c in names and "dqs_method" in schema]
    if guarded:
        keys = probe.level_keys("methods")
        has = pl.any_horizontal(pl.col(c).is_not_null() for c in guarded) & pl.col("dqs_method").is_not_null()
        lazy_levels["methods"] = (
            frame.filter(has)
            .group_by(keys)
            .agg(pl.col(c).is_not_null().sum().cast(pl.Int64).alias(stat_column("has", c)) for c in guarded)
        )
    collected = pl.collect_all(list(lazy_levels.values()), engine=ENGINE)
    return SufficientStatistics(metrics=tuple(names), **options, **dict(zip(lazy_levels, collected, strict=True)))


def _stat_columns(level: str, names: Sequence[str]) -> list[str]:
    return [stat_column(stat, name) for name in names for stat in LEVEL_STATS[level]]


def _merge_frames(frames: Sequence[pl.DataFrame], keys: Sequence[str], metrics: Sequence[str]) -> pl.DataFrame:
    r"""Add the records of the same ``keys``: counts and sums summed, shifted sums and :math:`M_2` merged.

    The merge is the module Notes'. ``frames`` share one layout; the result has it too, so merges nest.
    """
    stacked = pl.concat(frames, how="vertical_relaxed") if len(frames) > 1 else frames[0]
    columns = stacked.columns
    aggs: list[pl.Expr] = [pl.col(RUNS).sum()] if RUNS in columns else []
    for name in dict.fromkeys([*metrics, *DQS_METRICS]):
        aggs += [pl.col(stat_column(stat, name)).sum() for stat in _ADDITIVE if stat_column(stat, name) in columns]
        if stat_column("shift", name) not in columns:
            continue
        n, shift, dev = (pl.col(stat_column(stat, name)) for stat in ("n", "shift", "dev"))
        common = shift.min()
        offset = shift - common
        merged_dev = (dev + n * offset).sum()
        aggs += [common.alias(stat_column("shift", name)), merged_dev.alias(stat_column("dev", name))]
        if stat_column("m2", name) in columns:
            # Records without values have a null shift, so null offsets: the sums skip them.
            between = (n * (offset + dev / n - merged_dev / n.sum()) ** 2).sum()
            m2 = pl.col(stat_column("m2", name)).sum() + between
            aggs.append(pl.when(n.sum() > 0).then(m2).otherwise(0.0).alias(stat_column("m2", name)))
    merged = stacked.lazy().group_by(list(keys)).agg(aggs).collect(engine=ENGINE)
    return merged.select(*keys, *(c for c in columns if c not in keys and c in merged.columns))


@validate_params({"parts": [_PARTS]})
def merge_statistics(parts: Iterable[SufficientStatistics]) -> SufficientStatistics:
    r"""Add the sufficient statistics of several chunks: one concat and one group-by per level.

    Parameters
    ----------
    parts : iterable of SufficientStatistics
        Chunks' statistics (or merged ones), all built with the same options.

    Returns
    -------
    SufficientStatistics
        Their sum. The merge is associative and commutative (up to the rounding of sums), so
        shards may be merged in any order and in any tree.

    Raises
    ------
    InvalidParameterError
        No parts, or parts built with different options.

    Notes
    -----
    Counts and sums add; shifted sums and centred sums of squares merge by the k-way form of
    Chan, Golub & LeVeque (1979) given in :mod:`~mas_eval.stats.sufficient`.

    Examples
    --------
    The variance of :math:`\{1, 3\} \cup \{5\}`: :math:`M_2 = 2 + 0 + (5 - 2)^2 \cdot 2 \cdot 1 / 3 = 8`.

    >>> import polars as pl
    >>> a = sufficient_statistics(pl.DataFrame({"system": ["mas"] * 2, "y": [1.0, 3.0]}), "y")
    >>> b = sufficient_statistics(pl.DataFrame({"system": ["mas"], "y": [5.0]}), "y")
    >>> merge_statistics([a, b]).moments.select("n:y", "sum:y", "m2:y").row(0)
    (3, 9.0, 8.0)
    """
    parts = list(parts)
    if not parts:
        msg = "merge_statistics: no statistics to merge; pass at least one sufficient_statistics(...) result"
        raise InvalidParameterError(msg)
    first = parts[0]
    for other in parts[1:]:
        if other.options != first.options:
            msg = (
                f"merge_statistics: the statistics were built with different options ({first.options} and "
                f"{other.options}); build every chunk's with the same metrics, by, system, pair_on and cluster"
            )
            raise InvalidParameterError(msg)
    merged = {}
    for level in first.levels():
        frames = [p.levels().get(level) for p in parts]
        present = [f for f in frames if f is not None]
        merged[level] = _merge_frames(present, first.level_keys(level), first.metrics)
    if "methods" not in merged:
        extra = [p.methods for p in parts if p.methods is not None]
        if extra:
            merged["methods"] = _merge_frames(extra, first.level_keys("methods"), first.metrics)
    return replace(first, **merged)


def check_request(stats: SufficientStatistics, *, metrics: Sequence[str], system: str, pair_on: str | None,
                  cluster: str | None) -> None:  # fmt: skip
    """Raise when ``compare``'s options ask for something these sums cannot give."""
    missing = [name for name in metrics if name not in stats.metrics]
    problems = []
    if missing:
        problems.append(f"metrics {', '.join(map(repr, missing))} (they hold {', '.join(stats.metrics)})")
    if system != stats.system:
        problems.append(f"system={system!r} (they were built with system={stats.system!r})")
    if pair_on is not None and pair_on != stats.pair_on:
        problems.append(f"pair_on={pair_on!r} (they were built with pair_on={stats.pair_on!r})")
    if cluster is not None and cluster != stats.cluster:
        problems.append(f"cluster={cluster!r} (they were built with cluster={stats.cluster!r})")
    if problems:
        msg = (
            f"compare: these sufficient statistics cannot give {'; '.join(problems)}; rebuild every chunk's with "
            f"sufficient_statistics(..., metrics=..., by=..., pair_on=..., cluster=...) as compare needs them"
        )
        raise InvalidParameterError(msg)


def null_key_counts(stats: SufficientStatistics, names: tuple[str, str], columns: Sequence[str]) -> dict[str, int]:
    """Count the runs of the two compared systems with a null ``pair_on`` / ``cluster`` (finest level holding it)."""
    level = stats.cases if stats.cases is not None else stats.clusters
    if level is None or not columns:
        return {}
    compared = level.filter(pl.col(stats.system).is_in(list(names)))
    row = compared.select(pl.col(RUNS).filter(pl.col(c).is_null()).sum().alias(c) for c in columns).row(0)
    return dict(zip(columns, (int(v or 0) for v in row), strict=True))


def no_runs_error(stats: SufficientStatistics, names: tuple[str, str]) -> DataError | None:
    """Return ``compare``'s error when a compared system has no runs at all, or None."""
    runs = stats.moments.group_by(stats.system).agg(pl.col(RUNS).sum())
    counts = dict(runs.iter_rows())  # one row per system (a handful), not per run
    missing = [name for name in names if not counts.get(name)]
    if not missing:
        return None
    present = stats.moments.select(pl.col(stats.system).unique().sort()).head(20).to_series().to_list()
    msg = (
        f"no runs of system {', '.join(map(repr, missing))} in column {stats.system!r}; "
        f"the systems present are: {', '.join(map(repr, present)) or '(none: the frame is empty)'}"
    )
    return DataError(msg)
