r"""Multiple-comparison corrections across a family of p-values (nulls/NaN are left out of the family).

Notes
-----
With the :math:`m` defined p-values sorted ascending, :math:`p_{(1)} \le \dots \le p_{(m)}`:

* Bonferroni: :math:`\tilde p_{(i)} = \min(1, m\,p_{(i)})`.
* Holm (step-down, family-wise error): :math:`\tilde p_{(i)} = \min\big(1, \max_{j \le i} (m-j+1)\,p_{(j)}\big)`.
* Benjamini–Hochberg (step-up, false discovery rate):
  :math:`\tilde p_{(i)} = \min\big(1, \min_{j \ge i} \tfrac{m}{j} p_{(j)}\big)`.

These are statsmodels' ``multipletests`` methods ``bonferroni``, ``holm`` and ``fdr_bh``
(tests cross-check them to 1e-10). Every adjusted p is at least its raw p.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mas_eval.constraints import NONE, Options, Predicate, validate_params
from mas_eval.stats.options import Correction, canonical_correction

__all__ = ["adjust_pvalues"]


def _p_values(value: object) -> bool:
    try:
        p = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return False
    finite = p[np.isfinite(p)]
    return p.ndim <= 1 and bool(np.all((finite >= 0) & (finite <= 1)))


@validate_params(
    {
        "p_values": [Predicate(_p_values, "numbers in [0, 1] (NaN for rows outside the family)")],
        "correction": [Options.of(Correction), NONE],
    }
)
def adjust_pvalues(p_values: ArrayLike, correction: Correction | None = "holm") -> NDArray[np.float64]:
    """Adjust ``p_values`` for multiple testing over the family of their finite entries (others stay NaN).

    Parameters
    ----------
    p_values : array_like
        Raw p-values; NaN marks a row outside the family (a degenerate comparison).
    correction : {"holm", "fdr_bh", "bonferroni", "none", "bh", "benjamini-hochberg"} or None
        ``"holm"`` (default), ``"fdr_bh"`` (aliases ``"bh"``, ``"benjamini-hochberg"``),
        ``"bonferroni"`` or ``"none"`` (also None).

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, each at least its raw p and at most 1, where ``p_values`` is finite.

    Raises
    ------
    InvalidParameterError
        ``correction`` is none of the above, or ``p_values`` are not numbers in [0, 1] (or NaN).

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, float("nan"), 0.03], "holm").tolist()
    [0.03, 0.06, nan, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "fdr_bh").round(6).tolist()
    [0.03, 0.04, 0.04]
    """
    method = canonical_correction(correction)
    p = np.asarray(p_values, dtype=float).copy()
    family = np.isfinite(p)
    values = p[family]
    m = values.size
    if m == 0 or method == "none":
        return p
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    if method == "bonferroni":
        adjusted_sorted = ranked * m
    elif method == "holm":
        adjusted_sorted = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        adjusted_sorted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    adjusted = np.empty(m)
    # max(., p): m * p / j can round one ulp below p when j = m; an adjusted p is never below p.
    adjusted[order] = np.minimum(np.maximum(adjusted_sorted, ranked), 1.0)
    p[family] = adjusted
    return p
