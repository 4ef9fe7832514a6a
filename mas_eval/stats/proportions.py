r"""Pass/fail outcomes: a pass rate's interval, McNemar's exact test, the paired difference of pass rates, power.

Notes
-----
A paired pass/fail comparison of two systems on the same n cases is the 2x2 table

============ ============== ==============
             control passed control failed
treatment    a              b
passed
treatment    c              d
failed
============ ============== ==============

with pass rates :math:`p_T = (a+b)/n`, :math:`p_C = (a+c)/n` and difference
:math:`\hat\theta = p_T - p_C = (b-c)/n`. Only the discordant cases b and c carry information
about :math:`\theta` (McNemar 1947).

* Wilson's score interval for x passes of n (Wilson 1927), :math:`z = \Phi^{-1}(1-(1-\gamma)/2)`:
  :math:`\frac{x + z^2/2}{n + z^2} \pm \frac{z}{n + z^2}\sqrt{\frac{x(n-x)}{n} + \frac{z^2}{4}}`.
* Clopper–Pearson (1934): :math:`[B^{-1}_{\alpha/2}(x, n-x+1),\ B^{-1}_{1-\alpha/2}(x+1, n-x)]`
  (beta quantiles; 0 when x = 0, 1 when x = n).
* McNemar's exact test: under :math:`H_0: \theta = 0`, :math:`b \mid b+c \sim \mathrm{Bin}(b+c, 1/2)`;
  the two-sided p is :math:`\min(1,\ 2 P(X \le \min(b, c)))`.
* Newcombe's (1998) method 10 for the paired difference: with :math:`(l_T, u_T)`, :math:`(l_C, u_C)`
  the Wilson intervals of the two rates,
  :math:`L = \hat\theta - \sqrt{(p_T-l_T)^2 - 2\hat\phi(p_T-l_T)(u_C-p_C) + (u_C-p_C)^2}`,
  :math:`U = \hat\theta + \sqrt{(u_T-p_T)^2 - 2\hat\phi(u_T-p_T)(p_C-l_C) + (p_C-l_C)^2}`, where
  :math:`\hat\phi` is the correlation of the table with Newcombe's correction of its numerator
  :math:`A = ad - bc`: :math:`A - n/2` when :math:`A > n/2`, 0 when :math:`0 \le A \le n/2`, A when
  :math:`A < 0`, over :math:`\sqrt{(a+b)(c+d)(a+c)(b+d)}`; :math:`\hat\phi = 0` when a margin is 0.
* Connor (1987), "Sample size for testing differences in proportions for the paired-sample
  design" (Biometrics 43, 207-211): with the discordant proportion :math:`\psi = p_{10} + p_{01}`
  and the difference :math:`\delta = p_{10} - p_{01}`, the normal approximation of McNemar's test
  gives :math:`n = \big(z_{1-\alpha/2}\sqrt\psi + z_{1-\beta}\sqrt{\psi - \delta^2}\big)^2/\delta^2`
  pairs, and power :math:`1-\beta = \Phi\big((|\delta|\sqrt n - z_{1-\alpha/2}\sqrt\psi)/\sqrt{\psi-\delta^2}\big)`
  (one-sided alternatives use :math:`z_{1-\alpha}` and the signed :math:`\delta`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from mas_eval.constraints import NONE, RUN_METRICS, Interval, Options, Predicate, validate_params
from mas_eval.errors import DataError, InvalidParameterError, MasEvalError, SchemaError
from mas_eval.stats import summaries
from mas_eval.stats._common import (
    COLUMN_NAME,
    COLUMN_NAMES,
    ENGINE,
    PROBABILITY,
    as_lazy,
    aside_note,
    check_columns,
    check_no_nulls,
    column_list,
    one_or_list,
    set_aside,
    solved_for,
    values_of,
    with_aside,
)
from mas_eval.stats._rows import Patch, Rows, warnings_on
from mas_eval.stats.options import Alternative, ProportionMethod

__all__ = [
    "MAX_PAIRS",
    "PAIRED_TABLE_COUNTS",
    "PASS_RATE_COLUMNS",
    "mcnemar_exact",
    "mcnemar_p_values",
    "mcnemar_power",
    "mcnemar_step",
    "newcombe_paired_interval",
    "paired_difference",
    "paired_table_counts",
    "pass_fail_expression",
    "pass_rates",
    "proportion_interval",
]

Array = NDArray[np.float64]

#: Largest number of pairs given or solved for by :func:`mcnemar_power` (as ``power_analysis.MAX_N``).
MAX_PAIRS = 1e15


def _counts(value: object) -> bool:
    """Whether ``value`` is a whole number >= 0, or a non-empty array-like of them."""
    if isinstance(value, bool):
        return False
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return False
    if array.size == 0 or array.dtype == bool or array.dtype.kind not in "iuf":
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.isfinite(array)) and np.all(array >= 0) and np.all(array == np.floor(array)))


#: Counts: a whole number >= 0, or an array of them.
COUNTS = Predicate(_counts, "a whole number >= 0 or an array of them")


def _as_counts(*values: ArrayLike) -> tuple[Array, ...]:
    arrays = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float)) for v in values))
    return tuple(np.array(a, dtype=float) for a in arrays)


def _critical(confidence: float) -> float:
    return float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _wilson(x: Array, n: Array, confidence: float) -> tuple[Array, Array]:
    z = _critical(confidence)
    z2 = z * z
    with np.errstate(all="ignore"):
        centre = (x + z2 / 2.0) / (n + z2)
        half = z / (n + z2) * np.sqrt(x * (n - x) / n + z2 / 4.0)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def _clopper_pearson(x: Array, n: Array, confidence: float) -> tuple[Array, Array]:
    tail = (1.0 - confidence) / 2.0
    with np.errstate(all="ignore"):
        low = np.where(x > 0, stats.beta.ppf(tail, np.maximum(x, 1.0), n - x + 1.0), 0.0)
        high = np.where(x < n, stats.beta.ppf(1.0 - tail, x + 1.0, np.maximum(n - x, 1.0)), 1.0)
    return low, high


@validate_params(
    {"successes": [COUNTS], "n": [COUNTS], "method": [Options.of(ProportionMethod)], "confidence": [PROBABILITY]}
)
def proportion_interval(
    successes: ArrayLike, n: ArrayLike, method: ProportionMethod = "wilson", confidence: float = 0.95
) -> tuple[Array, Array]:
    r"""Confidence interval of a proportion (a pass rate) ``successes / n``, element by element.

    Parameters
    ----------
    successes, n : int or array of int
        Passes and trials (broadcast together), whole numbers with ``successes <= n``.
    method : {"wilson", "clopper-pearson"}
        Wilson's score interval (Wilson 1927; the default, near-nominal coverage) or the exact
        Clopper–Pearson (1934) interval (at least nominal coverage, wider).
    confidence : float
        Level of the interval, in (0, 1).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The lower and upper limits, within [0, 1]; NaN where ``n`` is 0.

    Raises
    ------
    InvalidParameterError
        Counts that are not whole numbers >= 0, or ``successes > n``.

    Notes
    -----
    Wilson: :math:`\frac{x + z^2/2}{n + z^2} \pm \frac{z}{n + z^2}\sqrt{x(n-x)/n + z^2/4}`;
    Clopper–Pearson: beta quantiles :math:`B^{-1}_{\alpha/2}(x, n-x+1)` and
    :math:`B^{-1}_{1-\alpha/2}(x+1, n-x)`. Both equal statsmodels'
    ``proportion_confint(x, n, method="wilson")`` / ``method="beta"`` (tested to 1e-12).

    Examples
    --------
    >>> low, high = proportion_interval(7, 10)
    >>> round(float(low[0]), 4), round(float(high[0]), 4)
    (0.3968, 0.8922)
    >>> low, high = proportion_interval([0, 10], 10, method="clopper-pearson")
    >>> float(low[0]), round(float(high[0]), 4), round(float(low[1]), 4), float(high[1])
    (0.0, 0.3085, 0.6915, 1.0)
    """
    x, trials = _as_counts(successes, n)
    if np.any(x > trials):
        msg = "proportion_interval: successes must not exceed n (a pass rate is at most 1)"
        raise InvalidParameterError(msg)
    low, high = (_wilson if method == "wilson" else _clopper_pearson)(x, trials, confidence)
    empty = trials == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def mcnemar_p_values(b: ArrayLike, c: ArrayLike) -> Array:
    r"""McNemar's exact two-sided p of discordant counts ``b``, ``c`` (arrays of whole numbers, unchecked).

    :math:`p = \min(1, 2\,F_{\mathrm{Bin}(b+c, 1/2)}(\min(b, c)))`; 1 when ``b + c = 0``.

    Examples
    --------
    As R's ``binom.test(6, 22)$p.value``, :math:`2 \cdot 110056 / 2^{22}`:

    >>> [round(float(p), 6) for p in mcnemar_p_values([6, 0], [16, 0])]
    [0.052479, 1.0]
    """
    b, c = _as_counts(b, c)
    return np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(b, c), b + c, 0.5))


@validate_params({"b": [COUNTS], "c": [COUNTS]})
def mcnemar_exact(b: ArrayLike, c: ArrayLike) -> pl.DataFrame:
    r"""McNemar's exact test of paired pass/fail outcomes from the discordant counts.

    The two-sided binomial test of ``b`` successes in ``b + c`` trials with p = 1/2: under the
    null hypothesis that both systems pass as often, a discordant case is as likely to favour
    either (McNemar 1947; the exact conditional form, e.g. Agresti, *Categorical Data Analysis*,
    section 11.1).

    Parameters
    ----------
    b : int or array of int
        Cases the treatment passed and the control failed.
    c : int or array of int
        Cases the control passed and the treatment failed (broadcast with ``b``).

    Returns
    -------
    polars.DataFrame
        One row per element:

        ============ ===========================================================
        b, c         the discordant counts, as given
        n_discordant ``b + c``
        statistic    ``min(b, c)`` (as statsmodels' ``mcnemar(exact=True)``)
        p_value      :math:`\min(1, 2 P(X \le \min(b, c)))`, X ~ Bin(b + c, 1/2);
                     1 when there is no discordant case
        ============ ===========================================================

    Raises
    ------
    InvalidParameterError
        Counts that are not whole numbers >= 0.

    Examples
    --------
    Armitage & Berry's two culture media (*Statistical Methods in Medical Research*, 1994, p. 127):
    12 specimens grew on medium A only, 2 on B only.

    >>> round(mcnemar_exact(12, 2)["p_value"].item(), 4)
    0.0129
    """
    b_, c_ = _as_counts(b, c)
    return pl.DataFrame(
        {
            "b": b_.astype(np.int64),
            "c": c_.astype(np.int64),
            "n_discordant": (b_ + c_).astype(np.int64),
            "statistic": np.minimum(b_, c_),
            "p_value": mcnemar_p_values(b_, c_),
        }
    )


def newcombe_paired_interval(
    a: ArrayLike, b: ArrayLike, c: ArrayLike, d: ArrayLike, confidence: float
) -> tuple[Array, Array]:
    r"""Newcombe's (1998) method 10 interval of :math:`p_T - p_C` from the paired table (a, b, c, d), unchecked.

    See the module notes for the formula; NaN where the table is empty.

    Examples
    --------
    The table (59, 6, 16, 80) of Cavo et al. (2012), as Fagerland, Lydersen & Laake (2017, ch. 8)
    print it: "Newcombe square-and-add: ... 95% CI -0.1186 to -0.0046".

    >>> low, high = newcombe_paired_interval([59], [6], [16], [80], 0.95)
    >>> round(float(low[0]), 4), round(float(high[0]), 4)
    (-0.1186, -0.0046)
    """
    a, b, c, d = _as_counts(a, b, c, d)
    n = a + b + c + d
    with np.errstate(all="ignore"):
        p_t, p_c = (a + b) / n, (a + c) / n
    l_t, u_t = _wilson(a + b, n, confidence)
    l_c, u_c = _wilson(a + c, n, confidence)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    numerator = a * d - b * c
    # Newcombe's correction of the correlation: a positive ad - bc is shrunk by n/2, not below 0.
    corrected = np.where(numerator > n / 2.0, numerator - n / 2.0, np.where(numerator < 0.0, numerator, 0.0))
    with np.errstate(all="ignore"):
        phi = np.where(margins > 0, corrected / np.sqrt(np.where(margins > 0, margins, 1.0)), 0.0)
        lower = p_t - p_c - np.sqrt((p_t - l_t) ** 2 - 2.0 * phi * (p_t - l_t) * (u_c - p_c) + (u_c - p_c) ** 2)
        upper = p_t - p_c + np.sqrt((u_t - p_t) ** 2 - 2.0 * phi * (u_t - p_t) * (p_c - l_c) + (p_c - l_c) ** 2)
    return lower, upper


@validate_params({"a": [COUNTS], "b": [COUNTS], "c": [COUNTS], "d": [COUNTS], "confidence": [PROBABILITY]})
def paired_difference(a: ArrayLike, b: ArrayLike, c: ArrayLike, d: ArrayLike, confidence: float = 0.95) -> pl.DataFrame:
    r"""Compare two systems' pass rates on the same cases: Newcombe's method 10 interval and McNemar's p.

    Parameters
    ----------
    a : int or array of int
        Cases both systems passed.
    b : int or array of int
        Cases only the treatment passed.
    c : int or array of int
        Cases only the control passed.
    d : int or array of int
        Cases both failed (all four broadcast together).
    confidence : float
        Level of the interval, in (0, 1).

    Returns
    -------
    polars.DataFrame
        One row per element:

        ==================== ===================================================
        n                    cases, ``a + b + c + d``
        rate_treatment       :math:`(a + b)/n`
        rate_control         :math:`(a + c)/n`
        difference           :math:`(b - c)/n`
        ci_low, ci_high      Newcombe's (1998) method 10 (score-based, from the
                             two Wilson intervals, with his correction of the
                             correlation :math:`\hat\phi`); null when n = 0
        p_value              McNemar's exact p (:func:`mcnemar_exact`)
        ==================== ===================================================

    Raises
    ------
    InvalidParameterError
        Counts that are not whole numbers >= 0.

    Notes
    -----
    The interval is Newcombe's "square-and-add" of the Wilson limits, with the covariance of the
    two paired rates entering through :math:`\hat\phi` (module notes). It lies within [-1, 1] and
    is defined at the boundaries (b = n, or no discordant case), where the Wald interval is not.

    Examples
    --------
    Cavo et al. (2012), as analysed by Fagerland, Lydersen & Laake, *Statistical Analysis of
    Contingency Tables* (2017), chapter 8: complete response before and after consolidation therapy.

    >>> row = paired_difference(59, 6, 16, 80).row(0, named=True)
    >>> round(row["difference"], 4), round(row["ci_low"], 4), round(row["ci_high"], 4)
    (-0.0621, -0.1186, -0.0046)
    """
    a_, b_, c_, d_ = _as_counts(a, b, c, d)
    n = a_ + b_ + c_ + d_
    lower, upper = newcombe_paired_interval(a_, b_, c_, d_, confidence)
    with np.errstate(all="ignore"):
        rates = ((a_ + b_) / n, (a_ + c_) / n, (b_ - c_) / n)
    return pl.DataFrame(
        {
            "n": n.astype(np.int64),
            "rate_treatment": rates[0],
            "rate_control": rates[1],
            "difference": rates[2],
            "ci_low": lower,
            "ci_high": upper,
            "p_value": mcnemar_p_values(b_, c_),
        },
        nan_to_null=True,
    )


#: The columns of :func:`pass_rates` after its ``by`` columns and the system.
PASS_RATE_COLUMNS = [
    "metric", "n", "passes", "rate", "wilson_low", "wilson_high", "clopper_pearson_low", "clopper_pearson_high",
    "n_clusters", "cluster_se", "cluster_low", "cluster_high", "note",
]  # fmt: skip


def pass_fail_expression(schema: pl.Schema, name: str, what: str) -> pl.Expr:
    """Return column ``name`` as Float64 0/1 (a Boolean, or numbers; NaN as null); other types are a SchemaError.

    Examples
    --------
    >>> runs = pl.DataFrame({"solved": [1.0, 0.0, float("nan")]})
    >>> runs.select(pass_fail_expression(runs.schema, "solved", "metric")).to_series().to_list()
    [1.0, 0.0, None]
    """
    dtype = schema[name]
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        msg = f"{what} {name!r} has type {dtype}; a pass/fail column is Boolean or holds only 0 and 1"
        raise SchemaError(msg)
    expr = pl.col(name).cast(pl.Float64)
    return expr.fill_nan(None) if dtype.is_float() else expr


@validate_params(
    {
        "run_metrics": [RUN_METRICS],
        "metric": [COLUMN_NAME],
        "by": [COLUMN_NAMES, NONE],
        "system": [COLUMN_NAME],
        "confidence": [PROBABILITY],
        "cluster": [COLUMN_NAME, NONE],
    }
)
def pass_rates(
    run_metrics: object,
    metric: str,
    by: str | Sequence[str] | None = None,
    system: str = "system",
    confidence: float = 0.95,
    cluster: str | None = None,
) -> pl.DataFrame:
    r"""Each system's pass rate on a pass/fail column, with Wilson, Clopper–Pearson and cluster-robust intervals.

    Parameters
    ----------
    run_metrics : polars.DataFrame, polars.LazyFrame or Scores
        One row per run, with the ``system`` column, ``metric`` and any ``by`` / ``cluster`` columns.
    metric : str
        A pass/fail column: Boolean, or numeric holding only 0 and 1. Nulls (and NaN) are left out.
    by : str or list of str, optional
        Grouping columns: one row per group and system.
    system : str
        The column naming the system of each run.
    confidence : float
        Level of every interval, in (0, 1).
    cluster : str, optional
        Column whose values are clusters of correlated runs: the case when runs repeat it
        (epochs). The binomial intervals treat runs as independent; with repeats they are too
        narrow, and the cluster-robust interval is the one to read (Miller 2024, "Adding Error
        Bars to Evals").

    Returns
    -------
    polars.DataFrame
        Sorted by ``by`` and ``system`` (nulls last):

        ==================== =========================================================
        (``by`` columns)     the group
        system               the system (the ``system`` column keeps its name)
        metric               the metric's name
        n                    runs with a value
        passes               runs that passed
        rate                 ``passes / n``
        wilson_low/_high     Wilson's score interval (Wilson 1927)
        clopper_pearson_low  the exact Clopper–Pearson (1934) interval
        clopper_pearson_high
        n_clusters           clusters with a value (null without ``cluster``)
        cluster_se           CR1 standard error of the rate:
                             :math:`\sqrt{\frac{G}{G-1}\sum_g (\sum_{i\in g}(y_i - \hat p))^2}/n`
        cluster_low/_high    :math:`\hat p \pm t_{G-1}\,SE` clipped to [0, 1]; null
                             without ``cluster`` or with fewer than 2 clusters
        note                 the runs with a NaN or infinite ``metric``, set aside; or null
        ==================== =========================================================

    Raises
    ------
    InvalidParameterError
        A bad option.
    SchemaError
        A named column is missing, or ``metric`` is not Boolean or numeric.
    DataError
        ``metric`` holds a value other than 0 and 1; nulls in ``cluster``.

    Examples
    --------
    >>> import polars as pl
    >>> runs = pl.DataFrame({"system": ["mas"] * 4 + ["single"] * 4,
    ...                      "solved": [True, True, True, False, True, False, False, False]})
    >>> table = pass_rates(runs, "solved")
    >>> table.select("system", "n", "passes", "rate").rows()
    [('mas', 4, 3, 0.75), ('single', 4, 1, 0.25)]
    """
    frame = as_lazy(run_metrics)
    schema = frame.collect_schema()
    by_columns = column_list(by, "by")
    check_columns(schema, [system], "system")
    check_columns(schema, by_columns, "by")
    check_columns(schema, [metric], "metric")
    if cluster is not None:
        check_columns(schema, [cluster], "cluster")
        check_no_nulls(frame, [cluster], "cluster")
    value = pass_fail_expression(schema, metric, "metric").alias("_value")
    keys = [*by_columns, system]
    frame, aside = set_aside(frame, [metric], keys)
    runs = frame.select(*dict.fromkeys(keys), *([pl.col(cluster).alias("_cluster")] if cluster else []), value)
    other = runs.filter(pl.col("_value").is_not_null() & ~pl.col("_value").is_in([0.0, 1.0]))
    bad = other.select(pl.col("_value").first(), pl.len()).collect(engine=ENGINE)
    if bad["len"].item():
        msg = (
            f"pass_rates: metric {metric!r} holds {bad['len'].item():,} value(s) other than 0 and 1 (e.g. "
            f"{bad['_value'].item()!r}); a pass rate needs a pass/fail column"
        )
        raise DataError(msg)
    counts = (
        runs.group_by(keys)
        .agg(n=pl.col("_value").count(), passes=pl.col("_value").sum())
        .sort(keys, nulls_last=True)
        .collect(engine=ENGINE)
    )
    n = counts["n"].to_numpy().astype(float)
    passes = counts["passes"].to_numpy().astype(float)
    wilson = proportion_interval(passes, n, "wilson", confidence)
    exact = proportion_interval(passes, n, "clopper-pearson", confidence)
    with np.errstate(all="ignore"):
        rate = passes / n
    clustered = _cluster_columns(runs, counts, keys, confidence) if cluster else _no_clusters(counts.height)
    out = counts.select(*keys).with_columns(
        pl.lit(metric).alias("metric"),
        pl.Series("n", n.astype(np.int64)),
        pl.Series("passes", passes.astype(np.int64)),
        pl.Series("rate", rate, nan_to_null=True),
        pl.Series("wilson_low", wilson[0], nan_to_null=True),
        pl.Series("wilson_high", wilson[1], nan_to_null=True),
        pl.Series("clopper_pearson_low", exact[0], nan_to_null=True),
        pl.Series("clopper_pearson_high", exact[1], nan_to_null=True),
        *clustered,
    )
    out = with_aside(out, aside, keys).with_columns(aside_note(f"{metric!r}").alias("note"))
    return out.select(*keys, *PASS_RATE_COLUMNS)


def _no_clusters(size: int) -> list[pl.Series]:
    return [pl.Series("n_clusters", [None] * size, dtype=pl.Int64)] + [
        pl.Series(name, [None] * size, dtype=pl.Float64) for name in ("cluster_se", "cluster_low", "cluster_high")
    ]


def _cluster_columns(runs: pl.LazyFrame, counts: pl.DataFrame, keys: list[str], confidence: float) -> list[pl.Series]:
    """CR1 standard error of each (group, system)'s rate from its cluster sums of residuals."""
    value = pl.col("_value")
    # Sorted before summing, so the sums (and the SE) are the same to the last bit on every call.
    per_cluster = (
        runs.filter(value.is_not_null())
        .with_columns((value - value.mean().over(keys)).alias("_residual"))
        .group_by([*keys, "_cluster"])
        .agg(pl.col("_residual").sum().alias("_score"))
        .sort([*keys, "_cluster"], nulls_last=True)
        .group_by(keys, maintain_order=True)
        .agg(ss=(pl.col("_score") ** 2).sum(), g=pl.len())
        .collect(engine=ENGINE)
    )
    aligned = counts.join(per_cluster, on=keys, how="left", nulls_equal=True, maintain_order="left")
    n = aligned["n"].to_numpy().astype(float)
    g = aligned["g"].fill_null(0).to_numpy().astype(float)
    ss = aligned["ss"].to_numpy().astype(float)
    rate = aligned["passes"].to_numpy().astype(float) / np.where(n > 0, n, np.nan)
    with np.errstate(all="ignore"):
        se = np.sqrt(g / (g - 1.0) * ss) / n
        crit = stats.t.ppf(1.0 - (1.0 - confidence) / 2.0, np.where(g > 1, g - 1.0, 1.0))
    se = np.where(g > 1, se, np.nan)
    return [
        pl.Series("n_clusters", g.astype(np.int64)),
        pl.Series("cluster_se", se, nan_to_null=True),
        pl.Series("cluster_low", np.clip(rate - crit * se, 0.0, 1.0), nan_to_null=True),
        pl.Series("cluster_high", np.clip(rate + crit * se, 0.0, 1.0), nan_to_null=True),
    ]


@validate_params(
    {
        "p_discordant": one_or_list(Interval(float, 0, 1, closed="right")),
        "difference": [*one_or_list(Interval(float, -1, 1)), NONE],
        "n": [*one_or_list(Interval(float, 1, MAX_PAIRS)), NONE],
        "power": [*one_or_list(PROBABILITY), NONE],
        "alpha": [PROBABILITY],
        "alternative": [Options.of(Alternative)],
    }
)
def mcnemar_power(
    p_discordant: float | Collection[float],
    difference: float | Collection[float] | None = None,
    n: float | Collection[float] | None = None,
    power: float | Collection[float] | None = None,
    *,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
) -> pl.DataFrame:
    r"""Pairs needed, minimum detectable difference, or power of McNemar's test (Connor 1987).

    Like :func:`~mas_eval.stats.power_analysis.power`: give two of ``difference``, ``n`` and
    ``power``, and the third is solved for, given the expected proportion of discordant cases.

    Parameters
    ----------
    p_discordant : float or list of float
        :math:`\psi = p_{10} + p_{01}`: the share of cases on which the systems disagree, in (0, 1].
    difference : float or list of float, optional
        :math:`\delta = p_{10} - p_{01}`, the difference of pass rates (treatment - control),
        with :math:`|\delta| < \psi`; non-zero when ``n`` is solved for.
    n : float or list of float, optional
        Paired cases, from 1 to :data:`MAX_PAIRS`.
    power : float or list of float, optional
        Target power, in (alpha, 1).
    alpha : float
        Significance level, in (0, 1).
    alternative : {"two-sided", "larger", "smaller"}
        ``"larger"``: the treatment passes more often (:math:`\delta > 0`); ``"smaller"``: less.

    Returns
    -------
    polars.DataFrame
        One row per combination of the values given:

        ============ =======================================================
        design       ``mcnemar``
        alternative  as given
        alpha        as given
        solved_for   ``n``, ``difference`` or ``power``
        p_discordant :math:`\psi`, as given
        difference   :math:`\delta` (given, or the minimum detectable one;
                     positive unless ``alternative="smaller"``)
        n            pairs (given, or the exact solution)
        n_required   ``ceil(n)``: the whole number of cases to plan for
        power        given, or the achieved power
        ============ =======================================================

    Raises
    ------
    InvalidParameterError
        A parameter outside the values above, not exactly two of ``difference``, ``n`` and
        ``power``, :math:`|\delta| \ge \psi`, a target power not above ``alpha``, or
        ``difference=0`` when solving for ``n``.
    MasEvalError
        No difference below :math:`\psi` reaches the power with that ``n``, or the ``n``
        solved for is over :data:`MAX_PAIRS`.

    Notes
    -----
    Connor's normal approximation (module notes), with :math:`z_a = z_{1-\alpha/2}` (two-sided)
    or :math:`z_{1-\alpha}`, :math:`z_b = z_{\text{power}}` and :math:`e = |\delta|` (two-sided)
    or the signed :math:`\delta`: power :math:`= \Phi((e\sqrt n - z_a\sqrt\psi)/\sqrt{\psi-\delta^2})`,
    :math:`n = (z_a\sqrt\psi + z_b\sqrt{\psi-\delta^2})^2/\delta^2`, and the minimum detectable
    :math:`e = (z_a\sqrt{\psi n} + z_b\sqrt{(n+z_b^2)\psi - z_a^2\psi})/(n + z_b^2)`, the root of the
    power equation squared. Two-sided power leaves out the far tail, as Connor does.

    Examples
    --------
    The discordant proportions :math:`p_{01} = 0.45`, :math:`p_{10} = 0.05`, 80% power at
    alpha 0.05 need 23 pairs (powerandsamplesize.com's McNemar calculator, after Connor 1987):

    >>> mcnemar_power(0.5, difference=-0.4, power=0.8)["n_required"].item()
    23
    """
    given = {"difference": values_of(difference), "n": values_of(n), "power": values_of(power)}
    solved = solved_for("mcnemar_power", given, alpha)
    grids = [values_of(p_discordant), *(given[k] if given[k] is not None else np.array([np.nan]) for k in given)]
    psi, delta, size, target = (g.ravel() for g in np.meshgrid(*grids, indexing="ij"))
    if solved != "difference" and np.any(np.abs(delta) >= psi):
        msg = "mcnemar_power: |difference| must be below p_discordant (p10 - p01 < p10 + p01 when p01 > 0)"
        raise InvalidParameterError(msg)
    if solved == "n" and np.any(delta == 0):
        msg = "mcnemar_power: difference=0 cannot be detected with any n; give a non-zero difference"
        raise InvalidParameterError(msg)
    z_a = stats.norm.ppf(1.0 - (alpha / 2.0 if alternative == "two-sided" else alpha))
    sign = -1.0 if alternative == "smaller" else 1.0
    with np.errstate(all="ignore"):
        effect = np.abs(delta) if alternative == "two-sided" else sign * delta
        if solved == "power":
            target = stats.norm.cdf((effect * np.sqrt(size) - z_a * np.sqrt(psi)) / np.sqrt(psi - delta**2))
        elif solved == "n":
            z_b = stats.norm.ppf(target)
            size = ((z_a * np.sqrt(psi) + z_b * np.sqrt(psi - delta**2)) / delta) ** 2
            size = np.where(effect > 0, size, np.nan)
        else:
            z_b = stats.norm.ppf(target)
            root = np.sqrt((size + z_b**2) * psi - z_a**2 * psi)
            effect = (z_a * np.sqrt(psi * size) + z_b * root) / (size + z_b**2)
            effect = np.where(np.isfinite(effect) & (effect > 0) & (effect < psi), effect, np.nan)
            delta = sign * effect
    value = {"n": size, "difference": delta, "power": target}[solved]
    bad = ~np.isfinite(value) | ((size > MAX_PAIRS) if solved == "n" else False)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        msg = (
            f"mcnemar_power: no solution for {solved} with p_discordant={psi[i]:g}, "
            f"difference={delta[i]:g}, n={size[i]:g}, power={target[i]:g} ({alternative})"
        )
        raise MasEvalError(msg)
    out = pl.DataFrame({"p_discordant": psi, "difference": delta, "n": size, "power": target})
    return out.select(
        design=pl.lit("mcnemar"),
        alternative=pl.lit(alternative),
        alpha=pl.lit(float(alpha)),
        solved_for=pl.lit(solved),
        p_discordant=pl.col("p_discordant"),
        difference=pl.col("difference"),
        n=pl.col("n"),
        n_required=(pl.col("n") - 1e-9).ceil().cast(pl.Int64),
        power=pl.col("power"),
    )


#: The counts :func:`paired_table_counts` returns per (group, metric).
PAIRED_TABLE_COUNTS = ("n11", "n10", "n01", "n00", "repeated")


def paired_table_counts(cases: pl.LazyFrame, groups: pl.DataFrame, keys: Sequence[str], m: int) -> dict[str, Array]:
    """Per (group, metric) row, the paired 2x2 table of a pass/fail metric from ``compare``'s case table.

    ``cases`` is :func:`~mas_eval.stats.summaries.case_table`'s frame (per case each system's
    ``case_mean_t_{i}``, ``case_mean_c_{i}``, the runs they average ``case_runs_t_{i}``,
    ``case_runs_c_{i}``, and ``difference_{i}``, null unless both systems have a value). Returns flat
    arrays in table-row order: ``n11`` (both passed), ``n10`` (treatment only), ``n01`` (control
    only), ``n00`` (both failed), and ``repeated``: paired cases where a system has several runs
    (then the case means are not 0/1 and the table does not apply).
    """
    aggs = []
    for i in range(m):
        t, c = pl.col(summaries.column("case_mean_t", i)), pl.col(summaries.column("case_mean_c", i))
        paired = pl.col(summaries.column("difference", i)).is_not_null()
        several = (pl.col(summaries.column("case_runs_t", i)) > 1) | (pl.col(summaries.column("case_runs_c", i)) > 1)
        for name, cell in (("n11", (t == 1) & (c == 1)), ("n10", (t == 1) & (c == 0)),
                           ("n01", (t == 0) & (c == 1)), ("n00", (t == 0) & (c == 0))):  # fmt: skip
            aggs.append((paired & cell).sum().alias(summaries.column(name, i)))
        aggs.append((paired & several).sum().alias(summaries.column("repeated", i)))
    wide = cases.group_by(list(keys)).agg(aggs).collect(engine=ENGINE)
    arrays = summaries.to_arrays(summaries.align(groups, wide, keys), PAIRED_TABLE_COUNTS, m)
    return {name: np.nan_to_num(values, nan=0.0) for name, values in summaries.flat(arrays).items()}


def mcnemar_step(rows: Rows, counts: dict[str, Array], pass_fail: Array, *, explicit: bool, confidence: float) -> Patch:
    """McNemar's exact test and Newcombe's interval on ``compare``'s paired rows of pass/fail metrics.

    ``pass_fail`` marks the rows whose metric is pass/fail; of those, the valid rows with one run
    per case and system get ``test="mcnemar"``, the exact p, ``statistic = min(b, c)`` (no df) and
    Newcombe's method 10 interval (``ci_method="newcombe"``); the rows with repeated runs keep the
    paired t on case means, and a warning says why.
    """
    repeated = pass_fail & (counts["repeated"] > 0)
    eligible = pass_fail & rows.ok & ~repeated
    b, c = counts["n10"], counts["n01"]
    low, high = newcombe_paired_interval(counts["n11"], b, c, counts["n00"], confidence)
    columns = {
        "test": "mcnemar",
        "statistic": np.minimum(b, c),
        "dof": np.nan,
        "p_value": mcnemar_p_values(b, c),
        "ci_low": low,
        "ci_high": high,
        "ci_method": "newcombe",
    }
    why = "test='mcnemar' needs one run per case and system" if explicit else "pass/fail metric with repeated runs"
    notes = warnings_on(
        repeated,
        lambda r: (
            f"{why}: {counts['repeated'][r]:.0f} case(s) have several (epochs), so the paired t on case "
            f"means is used, not McNemar's test"
        ),
    )
    return Patch(columns=columns, where=eligible, warnings=notes)
