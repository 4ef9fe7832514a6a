r"""Agreement among raters who labelled the same units: Cohen's kappa, Fleiss' kappa, Krippendorff's alpha.

Every function takes ratings in long form, one row per (unit, rater) with the rater's ``value``
(a category: any type compared for equality; nulls and NaN are missing ratings), and returns one
row per group of ``by`` (every group at once, from group sums). Annotators of failure modes are
raters, runs are units and a mode's present/absent is the value
(:func:`~mas_eval.stats.failures.annotator_agreement`).

Notes
-----
With :math:`N` units, category counts :math:`n_{uk}` (raters who put unit :math:`u` in category
:math:`k`) and :math:`m_u = \sum_k n_{uk}` ratings of unit :math:`u`:

* Cohen (1960), two raters A and B, the :math:`N` units both rated: observed agreement
  :math:`p_o = \frac1N \#\{u: a_u = b_u\}`, chance agreement :math:`p_e = \sum_k \frac{c_{Ak}}{N}\frac{c_{Bk}}{N}`
  (:math:`c_{Rk}` units rater R put in k), :math:`\kappa = (p_o - p_e)/(1 - p_e)`.
* Fleiss (1971), :math:`m` ratings per unit (not necessarily by the same raters), over the units
  with as many ratings as the most-rated unit: :math:`P_u = \frac{\sum_k n_{uk}^2 - m}{m(m-1)}`,
  :math:`\bar P = \frac1N \sum_u P_u`, :math:`p_k = \frac{1}{Nm}\sum_u n_{uk}`,
  :math:`\bar P_e = \sum_k p_k^2`, :math:`\kappa = (\bar P - \bar P_e)/(1 - \bar P_e)`.
* Krippendorff's alpha, nominal (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"),
  over the pairable units (:math:`m_u \ge 2`; a unit with one rating carries no agreement, so
  missing ratings need no imputation): :math:`n = \sum_u m_u`, :math:`n_k = \sum_u n_{uk}`,
  observed disagreement :math:`D_o = \frac1n \sum_u \frac{m_u^2 - \sum_k n_{uk}^2}{m_u - 1}`,
  expected :math:`D_e = \frac{n^2 - \sum_k n_k^2}{n(n-1)}`, :math:`\alpha = 1 - D_o/D_e`.

Each statistic is undefined when the chance term leaves nothing to explain (every rating the same
category: :math:`p_e = 1`, :math:`\bar P_e = 1`, :math:`D_e = 0`) and is then null. Every
numerator and denominator is a sum of integers (units grouped by their number of ratings for
:math:`D_o`), so the results do not depend on row order. Tests check them against statsmodels'
``cohens_kappa`` and ``fleiss_kappa``, the ``krippendorff`` package, Fleiss' (1971) Table 1
(:math:`\kappa = 0.430`) and Krippendorff's (2011) nominal example (:math:`\alpha = 0.743`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from mas_eval.constraints import NONE, RUN_METRICS, validate_params
from mas_eval.errors import DataError, format_keys
from mas_eval.stats._common import COLUMN_NAME, COLUMN_NAMES, ENGINE, GROUP, as_lazy, check_columns, column_list

__all__ = ["AGREEMENT_CONSTRAINTS", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"]

#: What the parameters of the agreement functions accept.
AGREEMENT_CONSTRAINTS = {
    "unit": [COLUMN_NAMES],
    "rater": [COLUMN_NAME],
    "value": [COLUMN_NAME],
    "by": [COLUMN_NAMES, NONE],
}

#: Internal names: the rating, and a unit's number of ratings.
_VALUE, _M = "_value", "_m"


def _ratings(
    ratings: Any, unit: str | Sequence[str], rater: str, value: str, by: str | Sequence[str] | None, where: str
) -> tuple[pl.LazyFrame, list[str], list[str], list[str]]:
    """Return the non-missing ratings with the group keys (``by``, or one constant group) and unit columns.

    A rater rating a unit twice is a DataError.
    """
    frame = as_lazy(ratings)
    schema = frame.collect_schema()
    units = column_list(unit, "unit", required=True)
    by_columns = column_list(by, "by")
    check_columns(schema, [*by_columns, *units, rater, value], where)
    keys = by_columns or [GROUP]
    rating = pl.col(value).fill_nan(None) if schema[value].is_float() else pl.col(value)
    data = frame.select(
        *(pl.col(c) for c in by_columns),
        *([] if by_columns else [pl.lit(0).alias(GROUP)]),
        *(pl.col(c) for c in units if c not in by_columns),
        pl.col(rater),
        rating.alias(_VALUE),
    ).filter(pl.col(_VALUE).is_not_null())
    # Read once: every statistic below reads these rows in several branches of its query.
    data = data.collect(engine=ENGINE).lazy()
    twice = data.group_by([*keys, *units, rater]).len().filter(pl.col("len") > 1).head(5).collect(engine=ENGINE)
    if twice.height:
        shown = format_keys(twice.drop("len", *([GROUP] if not by_columns else [])).to_dicts())
        msg = f"{where}: a rater rated a unit twice: {shown}; keep one rating per unit and rater"
        raise DataError(msg)
    return data, keys, [u for u in units if u not in by_columns], by_columns


def _output(table: pl.DataFrame, by_columns: list[str], columns: list[str]) -> pl.DataFrame:
    counts = [c for c in columns if c.startswith("n_") or c == "ratings_per_unit"]
    ordered = table.sort(by_columns or GROUP, nulls_last=True).with_columns(pl.col(counts).cast(pl.Int64))
    return ordered.select(*by_columns, *columns)


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator != 0).then(numerator / denominator)


def _kappa(observed: pl.Expr, expected: pl.Expr) -> pl.Expr:
    return pl.when(expected < 1).then((observed - expected) / (1 - expected))


@validate_params({**AGREEMENT_CONSTRAINTS, "ratings": [RUN_METRICS]})
def cohen_kappa(
    ratings: Any,
    *,
    unit: str | Sequence[str] = "unit",
    rater: str = "rater",
    value: str = "value",
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    r"""Cohen's (1960) kappa of two raters, per group, over the units both rated.

    Parameters
    ----------
    ratings : polars.DataFrame or polars.LazyFrame
        One row per unit and rater: the ``unit`` column(s), ``rater``, ``value`` and any ``by``
        columns. Null (and NaN) values are missing ratings.
    unit : str or list of str
        The column(s) naming the unit rated.
    rater : str
        The column naming the rater.
    value : str
        The rating: a category, compared for equality.
    by : str or list of str, optional
        Grouping columns: one kappa per group (a failure mode, say).

    Returns
    -------
    polars.DataFrame
        Sorted by ``by``:

        ============ ====================================================================
        (``by``)     the group
        rater_1      the first rater (in sorted order)
        rater_2      the second
        n_units      units both rated
        observed     :math:`p_o`, the share of those units they put in one category
        expected     :math:`p_e = \sum_k (c_{1k}/N)(c_{2k}/N)`, chance agreement
        kappa        :math:`(p_o - p_e)/(1 - p_e)`; null when :math:`p_e = 1` (both
                     raters used one and the same category throughout) or no unit
        ============ ====================================================================

    Raises
    ------
    SchemaError
        A named column is missing.
    DataError
        A group has other than two raters, or a rater rated a unit twice.

    Notes
    -----
    Equal to statsmodels' ``cohens_kappa`` on the two raters' contingency table (tested to 1e-12).

    Examples
    --------
    >>> import polars as pl
    >>> ratings = pl.DataFrame({"unit": [1, 2, 3, 4] * 2, "rater": ["a"] * 4 + ["b"] * 4,
    ...                         "value": [True, True, False, False, True, False, False, False]})
    >>> cohen_kappa(ratings).row(0, named=True)
    {'rater_1': 'a', 'rater_2': 'b', 'n_units': 4, 'observed': 0.75, 'expected': 0.5, 'kappa': 0.5}
    """
    data, keys, units, by_columns = _ratings(ratings, unit, rater, value, by, "cohen_kappa")
    raters = data.group_by(keys).agg(pl.col(rater).unique().sort().alias("_raters")).collect(engine=ENGINE)
    wrong = raters.filter(pl.col("_raters").list.len() != 2)
    if wrong.height:
        row = wrong.row(0, named=True)
        group = ", ".join(f"{c}={row[c]!r}" for c in by_columns) or "the ratings"
        msg = (
            f"cohen_kappa: {group} has {len(row['_raters'])} rater(s); Cohen's kappa is of two (fleiss_kappa and "
            "krippendorff_alpha take any number)"
        )
        raise DataError(msg)
    per_unit = data.group_by([*keys, *units]).agg(pl.len().alias(_M), pl.col(_VALUE).n_unique().alias("_distinct"))
    both = per_unit.filter(pl.col(_M) == 2)
    observed = both.group_by(keys).agg(pl.len().alias("n_units"), (pl.col("_distinct") == 1).sum().alias("_agree"))
    # With two raters, (c_1k + c_2k)^2 - c_1k^2 - c_2k^2 = 2 c_1k c_2k: the chance term from group sums.
    counts = (
        data.join(both.select(*keys, *units), on=[*keys, *units], how="semi", nulls_equal=True)
        .group_by([*keys, rater, _VALUE])
        .len()
        .group_by([*keys, _VALUE])
        .agg(pl.col("len").sum().alias("_s"), (pl.col("len") ** 2).sum().alias("_s2"))
        .group_by(keys)
        .agg(((pl.col("_s") ** 2 - pl.col("_s2")) // 2).sum().alias("_cross"))
    )
    table = (
        raters.lazy()
        .join(observed, on=keys, how="left", nulls_equal=True)
        .join(counts, on=keys, how="left", nulls_equal=True)
        .with_columns(
            pl.col("_raters").list.get(0).alias("rater_1"),
            pl.col("_raters").list.get(1).alias("rater_2"),
            pl.col("n_units").fill_null(0),
            _ratio(pl.col("_agree"), pl.col("n_units")).alias("observed"),
            _ratio(pl.col("_cross"), pl.col("n_units") ** 2).alias("expected"),
        )
        .with_columns(_kappa(pl.col("observed"), pl.col("expected")).alias("kappa"))
        .collect(engine=ENGINE)
    )
    return _output(table, by_columns, ["rater_1", "rater_2", "n_units", "observed", "expected", "kappa"])


@validate_params({**AGREEMENT_CONSTRAINTS, "ratings": [RUN_METRICS]})
def fleiss_kappa(
    ratings: Any,
    *,
    unit: str | Sequence[str] = "unit",
    rater: str = "rater",
    value: str = "value",
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    r"""Fleiss' (1971) kappa of any number of raters, per group, over the units rated by the most raters.

    Parameters
    ----------
    ratings : polars.DataFrame or polars.LazyFrame
        One row per unit and rater (as :func:`cohen_kappa`); the raters of two units need not be
        the same people.
    unit, rater, value, by
        As :func:`cohen_kappa`.

    Returns
    -------
    polars.DataFrame
        Sorted by ``by``:

        ================ ================================================================
        (``by``)         the group
        n_units          units with :math:`m` ratings, the most any unit of the group has
        n_left_out       units with fewer (a missing rating): Fleiss' kappa needs the
                         same number per unit (:func:`krippendorff_alpha` uses them all)
        ratings_per_unit :math:`m`
        observed         :math:`\bar P`, the mean share of agreeing pairs of ratings
        expected         :math:`\bar P_e = \sum_k p_k^2`
        kappa            :math:`(\bar P - \bar P_e)/(1 - \bar P_e)`; null when
                         :math:`\bar P_e = 1` or :math:`m < 2`
        ================ ================================================================

    Raises
    ------
    SchemaError
        A named column is missing.
    DataError
        A rater rated a unit twice.

    Notes
    -----
    Equal to statsmodels' ``fleiss_kappa(table, method="fleiss")`` on the units × categories
    count table (tested to 1e-12); Fleiss' Table 1 (30 patients, 6 psychiatrists, 5 diagnoses)
    gives his :math:`\kappa = 0.430`.

    Examples
    --------
    >>> import polars as pl
    >>> ratings = pl.DataFrame({"unit": [1, 1, 1, 2, 2, 2, 3, 3, 3], "rater": ["a", "b", "c"] * 3,
    ...                         "value": ["x", "x", "x", "x", "y", "y", "y", "y", "y"]})
    >>> row = fleiss_kappa(ratings).row(0, named=True)
    >>> row["n_units"], round(row["observed"], 4), round(row["expected"], 4), round(row["kappa"], 4)
    (3, 0.7778, 0.5062, 0.55)
    """
    data, keys, units, by_columns = _ratings(ratings, unit, rater, value, by, "fleiss_kappa")
    per_value = data.group_by([*keys, *units, _VALUE]).agg(pl.len().alias("_n"))
    per_unit = per_value.group_by([*keys, *units]).agg(
        pl.col("_n").sum().alias(_M), (pl.col("_n") ** 2).sum().alias("_n2")
    )
    most = per_unit.group_by(keys).agg(pl.col(_M).max().alias("ratings_per_unit"), pl.len().alias("_units"))
    complete = per_unit.join(most, on=keys, nulls_equal=True).filter(pl.col(_M) == pl.col("ratings_per_unit"))
    sums = complete.group_by(keys).agg(pl.len().alias("n_units"), pl.col("_n2").sum().alias("_n2"))
    pooled = (
        per_value.join(complete.select(*keys, *units), on=[*keys, *units], how="semi", nulls_equal=True)
        .group_by([*keys, _VALUE])
        .agg(pl.col("_n").sum().alias("_nk"))
        .group_by(keys)
        .agg((pl.col("_nk") ** 2).sum().alias("_nk2"))
    )
    m, n = pl.col("ratings_per_unit"), pl.col("n_units")
    table = (
        most.join(sums, on=keys, how="left", nulls_equal=True)
        .join(pooled, on=keys, how="left", nulls_equal=True)
        .with_columns(
            (pl.col("_units") - n).alias("n_left_out"),
            pl.when(m >= 2).then((pl.col("_n2") - n * m) / (n * m * (m - 1))).alias("observed"),
            (pl.col("_nk2") / (n * m) ** 2).alias("expected"),
        )
        .with_columns(_kappa(pl.col("observed"), pl.col("expected")).alias("kappa"))
        .collect(engine=ENGINE)
    )
    return _output(table, by_columns, ["n_units", "n_left_out", "ratings_per_unit", "observed", "expected", "kappa"])


@validate_params({**AGREEMENT_CONSTRAINTS, "ratings": [RUN_METRICS]})
def krippendorff_alpha(
    ratings: Any,
    *,
    unit: str | Sequence[str] = "unit",
    rater: str = "rater",
    value: str = "value",
    by: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    r"""Krippendorff's alpha for nominal ratings, per group, missing ratings allowed.

    Parameters
    ----------
    ratings : polars.DataFrame or polars.LazyFrame
        One row per unit and rater (as :func:`cohen_kappa`); a unit any rater skipped simply has
        fewer rows.
    unit, rater, value, by
        As :func:`cohen_kappa`.

    Returns
    -------
    polars.DataFrame
        Sorted by ``by``:

        ======================= ===========================================================
        (``by``)                the group
        n_units                 pairable units: rated at least twice
        n_values                :math:`n`, the ratings of those units
        observed_disagreement   :math:`D_o`
        expected_disagreement   :math:`D_e`
        alpha                   :math:`1 - D_o/D_e`; null when :math:`D_e = 0` (one
                                category throughout) or no unit is pairable
        ======================= ===========================================================

    Raises
    ------
    SchemaError
        A named column is missing.
    DataError
        A rater rated a unit twice.

    Notes
    -----
    Equal to the ``krippendorff`` package's ``alpha(reliability_data, level_of_measurement="nominal")``
    (tested to 1e-12 on random data with missing ratings). With two raters and no missing
    rating, :math:`\alpha = 1 - \frac{n-1}{n}(1 - \pi)` where :math:`\pi` is Scott's pi.

    Examples
    --------
    Krippendorff's (2011) nominal example: 4 observers, 12 units, some values missing.

    >>> import polars as pl
    >>> table = {"A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    ...          "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    ...          "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    ...          "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]}
    >>> ratings = pl.DataFrame({"unit": list(range(1, 13)) * 4, "rater": [r for r in table for _ in range(12)],
    ...                         "value": [v for r in table for v in table[r]]})
    >>> row = krippendorff_alpha(ratings).row(0, named=True)
    >>> row["n_units"], row["n_values"], round(row["alpha"], 3)
    (11, 40, 0.743)
    """
    data, keys, units, by_columns = _ratings(ratings, unit, rater, value, by, "krippendorff_alpha")
    per_value = data.group_by([*keys, *units, _VALUE]).agg(pl.len().alias("_n"))
    per_unit = (
        per_value.group_by([*keys, *units])
        .agg(pl.col("_n").sum().alias(_M), (pl.col("_n") ** 2).sum().alias("_n2"))
        .filter(pl.col(_M) >= 2)
    )
    # Units grouped by their number of ratings m: sum_u (m_u^2 - sum_k n_uk^2)/(m_u - 1) is a sum of
    # integer sums, each divided once, in a fixed order (so the result does not depend on row order).
    observed = (
        per_unit.group_by([*keys, _M])
        .agg(pl.len().alias("_units"), (pl.col(_M) ** 2 - pl.col("_n2")).sum().alias("_pairs"))
        .sort([*keys, _M])
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col("_units").sum().alias("n_units"),
            (pl.col(_M) * pl.col("_units")).sum().alias("n_values"),
            (pl.col("_pairs") / (pl.col(_M) - 1)).sum().alias("_disagree"),
        )
    )
    pooled = (
        per_value.join(per_unit.select(*keys, *units), on=[*keys, *units], how="semi", nulls_equal=True)
        .group_by([*keys, _VALUE])
        .agg(pl.col("_n").sum().alias("_nk"))
        .group_by(keys)
        .agg((pl.col("_nk") ** 2).sum().alias("_nk2"))
    )
    n = pl.col("n_values")
    table = (
        data.select(keys)
        .unique()
        .join(observed, on=keys, how="left", nulls_equal=True)
        .join(pooled, on=keys, how="left", nulls_equal=True)
        .with_columns(pl.col("n_units").fill_null(0), n.fill_null(0))
        .with_columns(
            _ratio(pl.col("_disagree"), n).alias("observed_disagreement"),
            _ratio(n**2 - pl.col("_nk2"), n * (n - 1)).alias("expected_disagreement"),
        )
        .with_columns(
            pl.when(pl.col("expected_disagreement") > 0)
            .then(1 - pl.col("observed_disagreement") / pl.col("expected_disagreement"))
            .alias("alpha")
        )
        .collect(engine=ENGINE)
    )
    columns = ["n_units", "n_values", "observed_disagreement", "expected_disagreement", "alpha"]
    return _output(table, by_columns, columns)
