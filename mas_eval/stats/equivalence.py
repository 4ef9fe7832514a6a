r"""Non-inferiority and equivalence: whether the treatment is as good as the control, within a stated margin.

A MAS that is not significantly better than a single agent is not thereby as good: absence of
evidence of a difference is not evidence of its absence. "As good, at a third of the cost" needs a
test whose null hypothesis is that the treatment *is* worse by the margin :math:`\delta > 0` (or
more), so that rejecting it shows non-inferiority (Schuirmann 1987; Wellek, *Testing Statistical
Hypotheses of Equivalence and Noninferiority*, 2010). Higher is better, and the difference is
:math:`\theta = \text{treatment} - \text{control}`:

* non-inferiority: :math:`H_0: \theta \le -\delta` against :math:`H_1: \theta > -\delta`, one-sided;
* equivalence: :math:`H_0: \theta \le -\delta` or :math:`\theta \ge \delta` against
  :math:`H_1: -\delta < \theta < \delta`, by two one-sided tests (TOST), each at level
  :math:`\alpha`; its p-value is the larger of the two (an intersection–union test, Berger 1982).

Notes
-----
Means (:func:`margin_test`): with the estimate :math:`\hat\theta`, its standard error SE and
:math:`\nu` degrees of freedom (Welch–Satterthwaite, Student's :math:`n_T + n_C - 2`, the paired
:math:`n - 1`, a cluster-robust :math:`G - 1`, or :math:`\infty` for a z test),
:math:`t_L = (\hat\theta + \delta)/SE`, :math:`p_L = P(T_\nu \ge t_L)`;
:math:`t_U = (\hat\theta - \delta)/SE`, :math:`p_U = P(T_\nu \le t_U)`. Non-inferiority's p is
:math:`p_L`; equivalence's is :math:`\max(p_L, p_U)`. Tested against statsmodels' ``ttost_ind``,
``ttost_paired`` and pingouin's ``tost``.

Paired pass rates (:func:`tango_test`): Tango's (1998) score test. With b the cases only the
treatment passed, c those only the control passed, n cases and :math:`\theta_0` the value under
:math:`H_0`, the restricted maximum-likelihood estimate of the control-only probability is
:math:`\tilde p_{c} = (\sqrt{B^2 - 4AC} - B)/(2A)`, :math:`A = 2n`,
:math:`B = -b - c + (2n - b + c)\theta_0`, :math:`C = -c\,\theta_0(1 - \theta_0)`, and
:math:`Z(\theta_0) = (b - c - n\theta_0)/\sqrt{n(2\tilde p_c + \theta_0(1 - \theta_0))}`
(decreasing in :math:`\theta_0`). Non-inferiority's p is :math:`1 - \Phi(Z(-\delta))`; the upper
test's :math:`\Phi(Z(\delta))`. Tango's interval is :math:`\{\theta_0 : |Z(\theta_0)| \le z_{1-\gamma/2}\}`,
the test inverted; Newcombe's (1998) method 10 interval is given beside it.

Independent pass rates (:func:`farrington_manning`): Farrington & Manning's (1990) score test,
:math:`Z(\theta_0) = (\hat p_T - \hat p_C - \theta_0)/
\sqrt{\tilde p_T(1-\tilde p_T)/n_T + \tilde p_C(1-\tilde p_C)/n_C}`, with
:math:`\tilde p_T - \tilde p_C = \theta_0` the restricted maximum-likelihood estimates (the root
of a cubic, in closed form, Farrington & Manning 1990, eq. 5; Miettinen & Nurminen 1985 without
their :math:`N/(N-1)` factor). Its inversion is Mee's (1984) score interval. The same as
statsmodels' ``test_proportions_2indep(method="score", compare="diff", correction=False)`` where
that function's restricted estimate is right: at a difference of 0. At others statsmodels 0.15
has a count where a sample size belongs in the cubic (reported upstream), so the tests check the
restricted estimate against a numerical maximisation of the likelihood instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from mas_eval.constraints import Interval, Options, Predicate, validate_params
from mas_eval.errors import InvalidParameterError
from mas_eval.stats._common import PROBABILITY
from mas_eval.stats._rows import Patch, Rows
from mas_eval.stats.proportions import COUNTS, newcombe_paired_interval

__all__ = [
    "MARGIN",
    "MarginTest",
    "farrington_manning",
    "hypothesis_step",
    "margin_test",
    "shifted_t",
    "tango_test",
    "verdicts",
]

Array = NDArray[np.float64]

#: A margin: a positive number, in the units of the difference.
MARGIN = Interval(float, 0, closed="neither")

#: The hypotheses tested against a margin (``compare``'s :data:`~mas_eval.stats.options.Hypothesis` less
#: ``"superior"``, its ordinary two-sided test).
MarginTest = Literal["noninferior", "equivalent"]

#: Steps of the bisection that inverts a score test: the interval (-1, 1) halves each time, to below
#: a float's resolution near 0 after 60.
_STEPS = 64


def _arrays(*values: ArrayLike) -> tuple[Array, ...]:
    arrays = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, dtype=float)) for v in values))
    return tuple(np.array(a, dtype=float) for a in arrays)


def verdicts(hypothesis: str, margin: ArrayLike, shown: ArrayLike) -> list[str | None]:
    """Word each row's outcome: ``"non-inferior at δ=0.05"``, ``"equivalent within ±0.05"``, ``"not shown"``.

    ``shown`` is True, False or None (no test: the verdict is None too).

    Examples
    --------
    >>> verdicts("noninferior", [0.05, 0.05, 0.05], [True, False, None])
    ['non-inferior at δ=0.05', 'not shown', None]
    >>> verdicts("equivalent", 0.1, [True])
    ['equivalent within ±0.1']
    """
    shown_list = list(np.atleast_1d(np.asarray(shown, dtype=object)))
    margins = np.broadcast_to(np.asarray(margin, dtype=float), (len(shown_list),))
    words = "non-inferior at δ={:g}" if hypothesis == "noninferior" else "equivalent within ±{:g}"
    return [
        None if s is None else (words.format(float(m)) if bool(s) else "not shown")
        for s, m in zip(shown_list, margins, strict=True)
    ]


def _combine(hypothesis: str, lower: tuple[Array, Array], upper: tuple[Array, Array]) -> tuple[Array, Array]:
    """``(statistic, p)`` of the hypothesis from the lower test's and the upper test's ``(statistic, p)``.

    Non-inferiority is the lower test; equivalence the test with the larger p (TOST's).
    """
    if hypothesis == "noninferior":
        return lower
    binding = upper[1] > lower[1]
    return np.where(binding, upper[0], lower[0]), np.where(binding, upper[1], lower[1])


def shifted_t(estimate: ArrayLike, se: ArrayLike, dof: ArrayLike, margin: ArrayLike) -> dict[str, Array]:
    r"""Test ``estimate`` one-sided by t at :math:`-\delta` (``lower``) and :math:`+\delta` (``upper``), unchecked.

    ``t_lower`` :math:`= (\hat\theta + \delta)/SE` with ``p_lower`` :math:`= P(T_\nu \ge t)`;
    ``t_upper`` :math:`= (\hat\theta - \delta)/SE` with ``p_upper`` :math:`= P(T_\nu \le t)`.
    ``dof`` ``inf`` (or NaN) uses the normal distribution. NaN in, NaN out.

    Examples
    --------
    >>> out = shifted_t([0.02], [0.03], [40.0], [0.1])
    >>> {name: round(float(values[0]), 4) for name, values in out.items()}
    {'t_lower': 4.0, 'p_lower': 0.0001, 't_upper': -2.6667, 'p_upper': 0.0055}
    """
    est, se_, df, delta = _arrays(estimate, se, dof, margin)
    finite = np.isfinite(df) & (df > 0)
    df_safe = np.where(finite, df, 1.0)
    with np.errstate(all="ignore"):
        t_lower = (est + delta) / se_
        t_upper = (est - delta) / se_
        p_lower = np.where(finite, stats.t.sf(t_lower, df_safe), stats.norm.sf(t_lower))
        p_upper = np.where(finite, stats.t.cdf(t_upper, df_safe), stats.norm.cdf(t_upper))
    return {"t_lower": t_lower, "p_lower": p_lower, "t_upper": t_upper, "p_upper": p_upper}


def _frame(
    columns: dict[str, Array], hypothesis: str, margin: Array, alpha: float, lower_upper: dict[str, Array]
) -> pl.DataFrame:
    statistic, p_value = _combine(
        hypothesis, (lower_upper["t_lower"], lower_upper["p_lower"]), (lower_upper["t_upper"], lower_upper["p_upper"])
    )
    shown = np.where(np.isfinite(p_value), p_value <= alpha, np.nan)
    upper = hypothesis == "equivalent"
    nan = np.full(statistic.size, np.nan)
    out = {
        **columns,
        "hypothesis": [hypothesis] * statistic.size,
        "margin": margin,
        "statistic_lower": lower_upper["t_lower"],
        "p_lower": lower_upper["p_lower"],
        "statistic_upper": lower_upper["t_upper"] if upper else nan,
        "p_upper": lower_upper["p_upper"] if upper else nan,
        "statistic": statistic,
        "p_value": p_value,
        "verdict": verdicts(hypothesis, margin, [None if np.isnan(s) else bool(s) for s in shown]),
    }
    return pl.DataFrame(out, nan_to_null=True)


_HYPOTHESIS = {"hypothesis": [Options.of(MarginTest)], "margin": [MARGIN], "alpha": [PROBABILITY]}


@validate_params(
    {
        "estimate": [Predicate(lambda v: np.all(np.isfinite(np.asarray(v, dtype=float))), "finite numbers")],
        "standard_error": [
            Predicate(lambda v: np.all(np.asarray(v, dtype=float) > 0), "positive finite numbers (not NaN)")
        ],
        "dof": [Predicate(lambda v: np.all(np.asarray(v, dtype=float) > 0), "numbers > 0 (inf: a z test)")],
        **_HYPOTHESIS,
    }
)
def margin_test(
    estimate: ArrayLike,
    standard_error: ArrayLike,
    dof: ArrayLike = np.inf,
    *,
    margin: float,
    hypothesis: MarginTest = "noninferior",
    alpha: float = 0.05,
) -> pl.DataFrame:
    r"""Non-inferiority (one-sided t) or equivalence (TOST) test of a difference from its estimate and SE.

    The test ``compare(..., hypothesis=..., margin=...)`` runs on every row of means (Welch,
    Student, paired, cluster-robust or mixed-model), for one difference or an array of them.

    Parameters
    ----------
    estimate : float or array of float
        The difference treatment - control (higher is better).
    standard_error : float or array of float
        Its standard error, > 0.
    dof : float or array of float
        Degrees of freedom of the t distribution; ``inf`` for a z test.
    margin : float
        :math:`\delta > 0`, in the units of the difference.
    hypothesis : {"noninferior", "equivalent"}
        Non-inferiority (:math:`\theta > -\delta`) or equivalence (:math:`|\theta| < \delta`).
    alpha : float
        Level of each one-sided test: ``verdict`` says "shown" when ``p_value <= alpha``.

    Returns
    -------
    polars.DataFrame
        One row per element:

        =============== ====================================================
        estimate        as given
        standard_error  as given
        dof             as given
        hypothesis      as given
        margin          :math:`\delta`
        statistic_lower :math:`t_L = (\hat\theta + \delta)/SE`
        p_lower         :math:`P(T_\nu \ge t_L)`: the test of :math:`\theta \le -\delta`
        statistic_upper :math:`t_U = (\hat\theta - \delta)/SE` (equivalence only)
        p_upper         :math:`P(T_\nu \le t_U)` (equivalence only)
        statistic       the t of the test that decides: :math:`t_L`, or TOST's with the larger p
        p_value         :math:`p_L`, or :math:`\max(p_L, p_U)` (TOST)
        verdict         ``non-inferior at δ=...``, ``equivalent within ±...`` or ``not shown``
        =============== ====================================================

    Raises
    ------
    InvalidParameterError
        A margin that is not a positive number, a standard error that is not positive, or an
        unknown hypothesis.

    Notes
    -----
    The verdict at level :math:`\alpha` is the same as asking whether the :math:`1 - 2\alpha`
    two-sided interval lies above :math:`-\delta` (non-inferiority) or within
    :math:`(-\delta, \delta)` (equivalence): a 90% interval for tests at 5% (Schuirmann 1987).

    Examples
    --------
    pingouin's ``tost`` example (independent samples, equal variances, bound 1):
    a = 4, 7, 8, 6, 3, 2 and b = 6, 8, 7, 10, 11, 9 differ by -3.5 with SE 1.2315 on 10 df.

    >>> row = margin_test(-3.5, 1.2315302134607444, 10, margin=1.0, hypothesis="equivalent").row(0, named=True)
    >>> round(row["p_value"], 6), row["verdict"]
    (0.965097, 'not shown')
    >>> margin_test(0.01, 0.02, margin=0.05)["verdict"].to_list()
    ['non-inferior at δ=0.05']
    """
    est, se, df = _arrays(estimate, standard_error, dof)
    delta = np.full(est.size, float(margin))
    tests = shifted_t(est, se, df, delta)
    return _frame({"estimate": est, "standard_error": se, "dof": df}, hypothesis, delta, alpha, tests)


# --- paired pass rates: Tango's score test ---------------------------------------------------------


def _tango_z(b: Array, c: Array, n: Array, theta: Array) -> Array:
    r"""Tango's (1998) score statistic :math:`Z(\theta_0)` (module notes); 0 where b - c = n theta_0."""
    with np.errstate(all="ignore"):
        big_a = 2.0 * n
        big_b = -b - c + (2.0 * n - b + c) * theta
        big_c = -c * theta * (1.0 - theta)
        p_c = (np.sqrt(np.maximum(big_b**2 - 4.0 * big_a * big_c, 0.0)) - big_b) / (2.0 * big_a)
        numerator = b - c - n * theta
        denominator = np.sqrt(np.maximum(n * (2.0 * p_c + theta * (1.0 - theta)), 0.0))
        return np.where(numerator == 0.0, 0.0, numerator / denominator)


def _invert(z: Callable[[Array], Array], target: Array) -> Array:
    r"""Solve ``z(theta_0) = target`` for :math:`\theta_0 \in [-1, 1]`, ``z`` decreasing, by vectorised bisection.

    A root beyond an end converges to that end (an interval reaching -1 or 1).
    """
    low, high = np.full(target.shape, -1.0), np.full(target.shape, 1.0)
    # A loop over bisection steps, each one vector operation over every row.
    for _ in range(_STEPS):
        middle = (low + high) / 2.0
        above = z(middle) > target
        low, high = np.where(above, middle, low), np.where(above, high, middle)
    return (low + high) / 2.0


def tango_interval(b: Array, c: Array, n: Array, confidence: float) -> tuple[Array, Array]:
    """Tango's (1998) score interval of the paired difference ``(b - c)/n``, unchecked; NaN where n = 0."""
    z = float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))
    target = np.full(b.shape, z)
    low = _invert(lambda theta: _tango_z(b, c, n, theta), target)
    high = _invert(lambda theta: _tango_z(b, c, n, theta), -target)
    empty = n == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def tango_tests(b: Array, c: Array, n: Array, margin: Array) -> dict[str, Array]:
    """Tango's one-sided score tests at -margin (``lower``) and +margin (``upper``), unchecked."""
    z_lower = _tango_z(b, c, n, -margin)
    z_upper = _tango_z(b, c, n, margin)
    return {
        "t_lower": z_lower,
        "p_lower": stats.norm.sf(z_lower),
        "t_upper": z_upper,
        "p_upper": stats.norm.cdf(z_upper),
    }


@validate_params(
    {"a": [COUNTS], "b": [COUNTS], "c": [COUNTS], "d": [COUNTS], "confidence": [PROBABILITY], **_HYPOTHESIS}
)
def tango_test(
    a: ArrayLike,
    b: ArrayLike,
    c: ArrayLike,
    d: ArrayLike,
    *,
    margin: float,
    hypothesis: MarginTest = "noninferior",
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> pl.DataFrame:
    r"""Non-inferiority or equivalence of two systems' pass rates on the same cases: Tango's score test.

    Parameters
    ----------
    a, b, c, d : int or array of int
        The paired table: cases both systems passed (a), only the treatment (b), only the
        control (c), neither (d); broadcast together.
    margin : float
        :math:`\delta > 0`, a difference of pass rates (0.05: five points).
    hypothesis : {"noninferior", "equivalent"}
        :math:`p_T - p_C > -\delta`, or :math:`|p_T - p_C| < \delta` (two one-sided score tests).
    alpha : float
        Level of each one-sided test.
    confidence : float
        Level of the two intervals.

    Returns
    -------
    polars.DataFrame
        One row per element:

        =============== ====================================================
        n               cases
        difference      :math:`(b - c)/n`
        hypothesis      as given
        margin          :math:`\delta`
        statistic_lower :math:`Z(-\delta)`, Tango's score statistic
        p_lower         :math:`1 - \Phi(Z(-\delta))`
        statistic_upper :math:`Z(\delta)` (equivalence only)
        p_upper         :math:`\Phi(Z(\delta))` (equivalence only)
        statistic       the Z that decides (the lower one, or TOST's with the larger p)
        p_value         :math:`p_L`, or :math:`\max(p_L, p_U)`
        verdict         ``non-inferior at δ=...``, ``equivalent within ±...`` or ``not shown``
        ci_low, ci_high Tango's score interval (the test inverted); null when n = 0
        newcombe_low    Newcombe's (1998) method 10 interval, for comparison
        newcombe_high
        =============== ====================================================

    Raises
    ------
    InvalidParameterError
        Counts that are not whole numbers >= 0, a margin that is not a positive number.

    Notes
    -----
    Formulas in the module notes. Tango's interval matches the published examples of Tango (1998;
    44 patients, a = 43, c = 1: 90% interval -0.096 to 0.037) and of Fagerland, Lydersen & Laake
    (2014, airway hyper-responsiveness, 1, 1, 7, 12: -0.517 to -0.026).

    Examples
    --------
    Tango's (1998) example: two diagnostic procedures on 44 patients, 43 positive by both and one
    by the second only. Equivalent within ten points?

    >>> row = tango_test(43, 0, 1, 0, margin=0.1, hypothesis="equivalent", confidence=0.9).row(0, named=True)
    >>> round(row["ci_low"], 3), round(row["ci_high"], 3), row["verdict"]
    (-0.096, 0.037, 'equivalent within ±0.1')
    """
    a_, b_, c_, d_ = _arrays(a, b, c, d)
    n = a_ + b_ + c_ + d_
    delta = np.full(n.size, float(margin))
    with np.errstate(all="ignore"):
        difference = (b_ - c_) / n
    low, high = tango_interval(b_, c_, n, confidence)
    newcombe = newcombe_paired_interval(a_, b_, c_, d_, confidence)
    tests = tango_tests(b_, c_, n, delta)
    empty = n == 0
    tests = {name: np.where(empty, np.nan, values) for name, values in tests.items()}
    frame = _frame({"n": n.astype(np.int64), "difference": difference}, hypothesis, delta, alpha, tests)
    return frame.with_columns(
        pl.Series("ci_low", low, nan_to_null=True),
        pl.Series("ci_high", high, nan_to_null=True),
        pl.Series("newcombe_low", newcombe[0], nan_to_null=True),
        pl.Series("newcombe_high", newcombe[1], nan_to_null=True),
    )


# --- independent pass rates: Farrington and Manning's score test ------------------------------------


def _restricted_rates(x_t: Array, n_t: Array, x_c: Array, n_c: Array, theta: Array) -> tuple[Array, Array]:
    r"""Return the maximum-likelihood rates :math:`(\tilde p_T, \tilde p_C)` under :math:`p_T - p_C = \theta_0`.

    Farrington & Manning (1990), eq. 5: the cubic's root in trigonometric form; the pooled rate
    where :math:`\theta_0 = 0`.
    """
    with np.errstate(all="ignore"):
        p_t, p_c = x_t / n_t, x_c / n_c
        ratio = n_c / n_t
        a = 1.0 + ratio
        b = -(1.0 + ratio + p_t + ratio * p_c + theta * (ratio + 2.0))
        c = theta**2 + theta * (2.0 * p_t + ratio + 1.0) + p_t + ratio * p_c
        d = -p_t * theta * (1.0 + theta)
        v = b**3 / (27.0 * a**3) - b * c / (6.0 * a**2) + d / (2.0 * a)
        u = np.sign(v) * np.sqrt(np.maximum(b**2 / (9.0 * a**2) - c / (3.0 * a), 0.0))
        cosine = np.where(u == 0.0, 1.0, np.clip(v / u**3, -1.0, 1.0))
        w = (np.pi + np.arccos(cosine)) / 3.0
        rate_t = 2.0 * u * np.cos(w) - b / (3.0 * a)
        pooled = (x_t + x_c) / (n_t + n_c)
        rate_t = np.clip(np.where(theta == 0.0, pooled, rate_t), 0.0, 1.0)
        rate_c = np.clip(rate_t - theta, 0.0, 1.0)
    return rate_t, rate_c


def _fm_z(x_t: Array, n_t: Array, x_c: Array, n_c: Array, theta: Array) -> Array:
    r"""Farrington and Manning's score statistic :math:`Z(\theta_0)` (module notes); 0 at the estimate itself."""
    rate_t, rate_c = _restricted_rates(x_t, n_t, x_c, n_c, theta)
    with np.errstate(all="ignore"):
        numerator = x_t / n_t - x_c / n_c - theta
        variance = rate_t * (1.0 - rate_t) / n_t + rate_c * (1.0 - rate_c) / n_c
        return np.where(numerator == 0.0, 0.0, numerator / np.sqrt(variance))


def score_interval(x_t: Array, n_t: Array, x_c: Array, n_c: Array, confidence: float) -> tuple[Array, Array]:
    """Mee's (1984) score interval of ``x_t/n_t - x_c/n_c``: Farrington and Manning's test inverted; unchecked."""
    z = float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))
    target = np.full(x_t.shape, z)
    low = _invert(lambda theta: _fm_z(x_t, n_t, x_c, n_c, theta), target)
    high = _invert(lambda theta: _fm_z(x_t, n_t, x_c, n_c, theta), -target)
    empty = (n_t == 0) | (n_c == 0)
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def farrington_manning_tests(x_t: Array, n_t: Array, x_c: Array, n_c: Array, margin: Array) -> dict[str, Array]:
    """Farrington and Manning's one-sided score tests at -margin and +margin, unchecked."""
    z_lower = _fm_z(x_t, n_t, x_c, n_c, -margin)
    z_upper = _fm_z(x_t, n_t, x_c, n_c, margin)
    return {
        "t_lower": z_lower,
        "p_lower": stats.norm.sf(z_lower),
        "t_upper": z_upper,
        "p_upper": stats.norm.cdf(z_upper),
    }


@validate_params(
    {
        "passes_treatment": [COUNTS],
        "n_treatment": [COUNTS],
        "passes_control": [COUNTS],
        "n_control": [COUNTS],
        "confidence": [PROBABILITY],
        **_HYPOTHESIS,
    }
)
def farrington_manning(
    passes_treatment: ArrayLike,
    n_treatment: ArrayLike,
    passes_control: ArrayLike,
    n_control: ArrayLike,
    *,
    margin: float,
    hypothesis: MarginTest = "noninferior",
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> pl.DataFrame:
    r"""Non-inferiority or equivalence of two independent pass rates: Farrington and Manning's score test.

    Parameters
    ----------
    passes_treatment, n_treatment : int or array of int
        The treatment's passes and runs.
    passes_control, n_control : int or array of int
        The control's passes and runs (all four broadcast together).
    margin : float
        :math:`\delta > 0`, a difference of pass rates.
    hypothesis : {"noninferior", "equivalent"}
        :math:`p_T - p_C > -\delta`, or :math:`|p_T - p_C| < \delta` (two one-sided score tests).
    alpha : float
        Level of each one-sided test.
    confidence : float
        Level of the score interval.

    Returns
    -------
    polars.DataFrame
        One row per element:

        =============== ====================================================
        rate_treatment  :math:`\hat p_T`
        rate_control    :math:`\hat p_C`
        difference      :math:`\hat p_T - \hat p_C`
        hypothesis      as given
        margin          :math:`\delta`
        statistic_lower :math:`Z(-\delta)`
        p_lower         :math:`1 - \Phi(Z(-\delta))`
        statistic_upper :math:`Z(\delta)` (equivalence only)
        p_upper         :math:`\Phi(Z(\delta))` (equivalence only)
        statistic       the Z that decides
        p_value         :math:`p_L`, or :math:`\max(p_L, p_U)`
        verdict         ``non-inferior at δ=...``, ``equivalent within ±...`` or ``not shown``
        ci_low, ci_high Mee's (1984) score interval (the test inverted); null
                        when a system has no run
        =============== ====================================================

    Raises
    ------
    InvalidParameterError
        Counts that are not whole numbers >= 0, passes above runs, a margin that is not positive.

    Notes
    -----
    Formulas in the module notes. The interval is Mee's, as Newcombe (1998, "Interval estimation
    for the difference between independent proportions", example d) prints it for 5/56 against
    0/29: -0.0313 to 0.1926.

    Examples
    --------
    >>> row = farrington_manning(5, 56, 0, 29, margin=0.05).row(0, named=True)
    >>> round(row["ci_low"], 4), round(row["ci_high"], 4), round(row["p_value"], 4), row["verdict"]
    (-0.0313, 0.1926, 0.0167, 'non-inferior at δ=0.05')
    """
    x_t, n_t, x_c, n_c = _arrays(passes_treatment, n_treatment, passes_control, n_control)
    if np.any(x_t > n_t) or np.any(x_c > n_c):
        msg = "farrington_manning: passes must not exceed runs (a pass rate is at most 1)"
        raise InvalidParameterError(msg)
    delta = np.full(x_t.size, float(margin))
    with np.errstate(all="ignore"):
        rate_t, rate_c = x_t / n_t, x_c / n_c
    low, high = score_interval(x_t, n_t, x_c, n_c, confidence)
    empty = (n_t == 0) | (n_c == 0)
    tests = farrington_manning_tests(x_t, n_t, x_c, n_c, delta)
    tests = {name: np.where(empty, np.nan, values) for name, values in tests.items()}
    columns = {"rate_treatment": rate_t, "rate_control": rate_c, "difference": rate_t - rate_c}
    frame = _frame(columns, hypothesis, delta, alpha, tests)
    return frame.with_columns(pl.Series("ci_low", low, nan_to_null=True), pl.Series("ci_high", high, nan_to_null=True))


# --- compare's step ---------------------------------------------------------------------------------


def hypothesis_step(
    rows: Rows,
    *,
    hypothesis: str,
    margin: Array,
    confidence: float,
    paired_counts: dict[str, Array] | None = None,
    independent_pass_fail: Array | None = None,
) -> Patch:
    r"""Replace each row's two-sided test in ``compare`` by the test against the margin.

    ``rows`` are the finished rows before the correction; ``margin`` holds each row's
    :math:`\delta`. Rows of McNemar's test (``test == "mcnemar"``, with ``paired_counts``, the
    paired table of each row) get Tango's score test and interval (``test`` and ``ci_method``
    ``"tango"``); rows marked in ``independent_pass_fail`` whose test is still Welch's get
    Farrington and Manning's score test and Mee's interval (``"farrington_manning"``); every
    other row keeps its design and interval and gets the shifted t (or z) test of its estimate
    and standard error. ``statistic`` and ``p_value`` become the one-sided test's (or TOST's
    larger), and ``power`` is left out (the observed power of the two-sided test does not apply).
    """
    cols = rows.cols
    size = rows.size
    test = cols["test"]
    statistic, p_value = cols["statistic"].copy(), cols["p_value"].copy()
    columns: dict[str, object] = {}

    tango = (test == "mcnemar") if paired_counts is not None else np.zeros(size, dtype=bool)
    farrington = (
        np.asarray(independent_pass_fail, dtype=bool) & (test == "welch")
        if independent_pass_fail is not None
        else np.zeros(size, dtype=bool)
    )
    means = ~(tango | farrington)

    dof = np.where(np.isfinite(cols["dof"]), cols["dof"], np.inf)
    shifted = shifted_t(cols["difference"], cols["standard_error"], dof, margin)
    t_stat, t_p = _combine(
        hypothesis, (shifted["t_lower"], shifted["p_lower"]), (shifted["t_upper"], shifted["p_upper"])
    )
    statistic[means], p_value[means] = t_stat[means], t_p[means]

    if tango.any() or farrington.any():
        new_test, ci_method = test.copy(), cols["ci_method"].copy()
        ci_low, ci_high, dof_out = cols["ci_low"].copy(), cols["ci_high"].copy(), cols["dof"].copy()
        parts = []
        if tango.any() and paired_counts is not None:
            b, c = paired_counts["n10"], paired_counts["n01"]
            n = paired_counts["n11"] + b + c + paired_counts["n00"]
            low, high = tango_interval(b, c, n, confidence)
            parts.append((tango, "tango", tango_tests(b, c, n, margin), low, high))
        if farrington.any():
            n_t, n_c = cols["n_treatment"], cols["n_control"]
            with np.errstate(all="ignore"):
                # The values are 0 and 1, so mean x n is the count of passes (rounded off its float noise).
                x_t, x_c = np.round(cols["mean_treatment"] * n_t), np.round(cols["mean_control"] * n_c)
            low, high = score_interval(x_t, n_t, x_c, n_c, confidence)
            parts.append((farrington, "farrington_manning", farrington_manning_tests(x_t, n_t, x_c, n_c, margin),
                          low, high))  # fmt: skip
        for mask, name, tests, low, high in parts:
            z, p = _combine(hypothesis, (tests["t_lower"], tests["p_lower"]), (tests["t_upper"], tests["p_upper"]))
            statistic[mask], p_value[mask] = z[mask], p[mask]
            ci_low[mask], ci_high[mask] = low[mask], high[mask]
            new_test[mask], ci_method[mask], dof_out[mask] = name, name, np.nan
        columns |= {"test": new_test, "ci_method": ci_method, "ci_low": ci_low, "ci_high": ci_high, "dof": dof_out}

    columns |= {"statistic": statistic, "p_value": p_value, "power": np.full(size, np.nan)}
    return Patch(columns=columns)
