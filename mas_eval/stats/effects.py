r"""Standardised effect sizes: Cohen's d, Hedges' g, their noncentral-t CIs, labels, observed power.

Everything here is vectorised over numpy arrays (one element per comparison row); invalid
inputs give NaN, which :func:`~mas_eval.stats.comparison.compare` turns into null with a warning.

Notes
-----
With :math:`t` a Student (or paired) t statistic on :math:`\nu` degrees of freedom and
:math:`m = \sqrt{n_1 n_2 / (n_1 + n_2)}` (independent) or :math:`m = \sqrt{n}` (paired),
:math:`d = t / m` and :math:`t \sim t_\nu(\delta m)`, a noncentral t. The confidence limits of
:math:`\delta` solve :math:`F_{t_\nu(\lambda)}(t) = 1 - \alpha/2` (lower) and :math:`= \alpha/2`
(upper) for the noncentrality :math:`\lambda`, divided by :math:`m` (Steiger & Fouladi 1997;
what R's ``effectsize::cohens_d`` and ``MBESS::ci.smd`` report).

Hedges' exact small-sample correction (Hedges 1981):
:math:`J(\nu) = \Gamma(\nu/2) / (\sqrt{\nu/2}\,\Gamma((\nu-1)/2))`, :math:`g = J(\nu)\,d`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats
from scipy.optimize import elementwise

__all__ = [
    "EFFECT_LABELS",
    "d_confidence_interval",
    "effect_size_label",
    "hedges_correction",
    "observed_power",
]

#: The crisis-MAS evaluation methodology's labels of |d|: below 0.2 negligible, below 0.5 small, below 0.8
#: medium, else large.
EFFECT_LABELS = ((0.2, "negligible"), (0.5, "small"), (0.8, "medium"), (np.inf, "large"))

_ROOT_TOLERANCES = {"xatol": 1e-13, "xrtol": 4 * np.finfo(float).eps, "fatol": 0.0, "frtol": 0.0}


def hedges_correction(df: ArrayLike) -> NDArray[np.float64]:
    r"""Exact :math:`J(\nu) = \Gamma(\nu/2) / (\sqrt{\nu/2}\,\Gamma((\nu-1)/2))`; NaN for :math:`\nu < 2`.

    Examples
    --------
    >>> round(float(hedges_correction(18.0)), 6)
    0.957646
    """
    df = np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        j = np.exp(special.gammaln(df / 2.0) - special.gammaln((df - 1.0) / 2.0)) / np.sqrt(df / 2.0)
    return np.where(df >= 2.0, j, np.nan)


def effect_size_label(d: ArrayLike) -> NDArray[np.object_]:
    """Label ``|d|`` as the crisis-MAS methodology does (negligible/small/medium/large at 0.2/0.5/0.8); None for NaN.

    Examples
    --------
    >>> effect_size_label([0.1, -0.3, 0.5, 0.81, float("nan")]).tolist()
    ['negligible', 'small', 'medium', 'large', None]
    """
    size = np.abs(np.asarray(d, dtype=float))
    out = np.full(size.shape, None, dtype=object)
    lower = -np.inf
    for upper, label in EFFECT_LABELS:
        out[(size >= lower) & (size < upper)] = label
        lower = upper
    return out


def _cdf_in_nc(nc: NDArray[np.float64], t: NDArray[np.float64], df: NDArray[np.float64]) -> NDArray[np.float64]:
    # F(t; df, nc) falls from 1 to 0 as nc grows. Boost's noncentral t returns NaN deep in a tail
    # and for very large |t|. There 1 - sf is tried first: at df = 1, t = 19.13 the CDF is NaN for
    # nc in about [-12.5, -6] while 1 - sf gives 1, as it should; the normal approximation gave
    # 0.95-0.976 there, a false root of F = 0.975, and d's upper limit jumped from -0.25 to 8.59
    # when t moved by an ulp. Where both fail, the normal approximation of Abramowitz & Stegun
    # 26.7.10, Phi((t (1 - 1/(4 df)) - nc) / sqrt(1 + t^2 / (2 df))), keeps the function continuous.
    with np.errstate(all="ignore"):
        value = stats.nct.cdf(t, df, nc)
        value = np.where(np.isnan(value), 1.0 - stats.nct.sf(t, df, nc), value)
        approx = stats.norm.cdf((t * (1.0 - 1.0 / (4.0 * df)) - nc) / np.sqrt(1.0 + t * t / (2.0 * df)))
    return np.where(np.isnan(value), approx, value)


def _solve_nc(t: NDArray[np.float64], df: NDArray[np.float64], target: float) -> NDArray[np.float64]:
    """Solve for the noncentrality ``nc`` with ``F(t; df, nc) = target``, element-wise."""

    def f(nc: NDArray[np.float64], t: NDArray[np.float64], df: NDArray[np.float64]) -> NDArray[np.float64]:
        return _cdf_in_nc(nc, t, df) - target

    bracket = elementwise.bracket_root(f, t - 1.0, t + 1.0, args=(t, df))
    root = elementwise.find_root(f, bracket.bracket, args=(t, df), tolerances=_ROOT_TOLERANCES)
    return np.where(bracket.success & root.success, root.x, np.nan)


def d_confidence_interval(
    t: ArrayLike, df: ArrayLike, scale: ArrayLike, confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Confidence limits of a standardised mean difference by inverting the noncentral t.

    Parameters
    ----------
    t
        The Student (pooled-SD) or paired t statistic.
    df
        Its degrees of freedom, :math:`n_1 + n_2 - 2` or :math:`n - 1`.
    scale
        :math:`m` in :math:`d = t / m`: :math:`\sqrt{n_1 n_2 / (n_1 + n_2)}` or :math:`\sqrt{n}`.
    confidence
        Two-sided confidence level.

    Examples
    --------
    R: ``effectsize::cohens_d(mpg ~ am, data = mtcars)`` prints -1.48 [-2.27, -0.67]
    (t = -4.1061 with 30 df, n = 19 and 13):

    >>> import math
    >>> lo, hi = d_confidence_interval(-4.106126983, 30, math.sqrt(19 * 13 / 32))
    >>> round(float(lo[0]), 2), round(float(hi[0]), 2)
    (-2.27, -0.67)
    """
    t, df, scale = np.broadcast_arrays(*(np.atleast_1d(np.asarray(x, dtype=float)) for x in (t, df, scale)))
    lower = np.full(t.shape, np.nan)
    upper = np.full(t.shape, np.nan)
    valid = np.isfinite(t) & np.isfinite(df) & (df > 0) & np.isfinite(scale) & (scale > 0)
    if valid.any():
        tail = (1.0 - confidence) / 2.0
        # The limits of -t are minus the limits of t (F(-t; df, -nc) = 1 - F(t; df, nc)). Solving for
        # |t| and reflecting keeps that exact where Boost's noncentral t is inaccurate (df = 1 and a
        # large |t|), so swapping treatment and control only flips the interval's sign.
        size, sign = np.abs(t[valid]), np.where(t[valid] < 0, -1.0, 1.0)
        low = _solve_nc(size, df[valid], 1.0 - tail) / scale[valid]
        high = _solve_nc(size, df[valid], tail) / scale[valid]
        lower[valid] = np.where(sign > 0, low, -high)
        upper[valid] = np.where(sign > 0, high, -low)
    return lower, upper


def observed_power(nc: ArrayLike, df: ArrayLike, alpha: float = 0.05) -> NDArray[np.float64]:
    r"""Power of a two-sided t test at level ``alpha`` when its statistic is :math:`t_\nu(\lambda)`.

    :math:`1 - F_{t_\nu(\lambda)}(c) + F_{t_\nu(\lambda)}(-c)` with :math:`c = t_{\nu, 1-\alpha/2}`;
    ``df = inf`` gives the normal (z test) version. For a Student test :math:`\lambda = d\,m`, so this
    is statsmodels' ``TTestIndPower().power(d, n1, alpha, ratio)`` (``TTestPower`` when paired).

    Examples
    --------
    >>> round(float(observed_power(2.0, 18.0)[0]), 6)
    0.473366
    """
    nc, df = np.broadcast_arrays(np.atleast_1d(np.asarray(nc, dtype=float)), np.atleast_1d(np.asarray(df, float)))
    out = np.full(nc.shape, np.nan)
    finite_df = np.isfinite(df) & (df > 0) & np.isfinite(nc)
    normal = np.isinf(df) & (df > 0) & np.isfinite(nc)
    if finite_df.any():
        v, lam = df[finite_df], nc[finite_df]
        crit = stats.t.ppf(1.0 - alpha / 2.0, v)
        with np.errstate(all="ignore"):
            upper = stats.nct.sf(crit, v, lam)
            lower = stats.nct.cdf(-crit, v, lam)
        upper = np.where(np.isnan(upper), np.where(lam > crit, 1.0, 0.0), upper)
        lower = np.where(np.isnan(lower), np.where(lam < -crit, 1.0, 0.0), lower)
        out[finite_df] = np.clip(upper + lower, 0.0, 1.0)
    if normal.any():
        z = stats.norm.ppf(1.0 - alpha / 2.0)
        lam = nc[normal]
        out[normal] = stats.norm.sf(z - lam) + stats.norm.cdf(-z - lam)
    return out
