r"""t tests from group summaries (n, mean, variance), vectorised over all comparison rows at once.

Notes
-----
With :math:`\bar x_T, s_T^2, n_T` and :math:`\bar x_C, s_C^2, n_C` (sample variances, ddof = 1) and
:math:`\Delta = \bar x_T - \bar x_C`:

* Welch (the crisis-MAS evaluation methodology's formula): :math:`SE = \sqrt{s_T^2/n_T + s_C^2/n_C}`,
  Welch–Satterthwaite :math:`\nu = SE^4 / \big((s_T^2/n_T)^2/(n_T-1) + (s_C^2/n_C)^2/(n_C-1)\big)`.
* Student: :math:`s_p^2 = ((n_T-1)s_T^2 + (n_C-1)s_C^2)/(n_T+n_C-2)`,
  :math:`SE = s_p\sqrt{1/n_T + 1/n_C}`, :math:`\nu = n_T + n_C - 2`.
* Paired, on the per-case differences :math:`d_i`: :math:`SE = s_d/\sqrt{n}`, :math:`\nu = n - 1`.

Then :math:`t = \Delta / SE`, :math:`p = 2\,P(T_\nu > |t|)` and the CI is
:math:`\Delta \pm t_{\nu,1-(1-\text{confidence})/2}\, SE` (``dof = inf`` uses the normal).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = ["t_inference", "welch_dof"]

Array = NDArray[np.float64]


def welch_dof(v1: Array, n1: Array, v2: Array, n2: Array) -> Array:
    r"""Return the Welch–Satterthwaite degrees of freedom of two samples' variances and sizes.

    :math:`\nu = (v_1/n_1 + v_2/n_2)^2 / \left(\frac{(v_1/n_1)^2}{n_1 - 1} + \frac{(v_2/n_2)^2}{n_2 - 1}\right)`
    (Welch 1947; R's ``t.test(var.equal = FALSE)``); element by element, unchecked.

    Examples
    --------
    >>> import numpy as np
    >>> welch_dof(np.array([0.01]), np.array([3.0]), np.array([0.0058]), np.array([3.0])).round(4)
    array([3.736])
    """
    with np.errstate(all="ignore"):
        a, b = v1 / n1, v2 / n2
        return (a + b) ** 2 / (a**2 / (n1 - 1.0) + b**2 / (n2 - 1.0))


def t_inference(estimate: ArrayLike, se: ArrayLike, dof: ArrayLike, confidence: float) -> dict[str, Array]:
    """``statistic``, ``p_value``, ``ci_low``, ``ci_high`` of ``estimate`` with standard error ``se``.

    Two-sided; ``dof`` may be ``inf`` (normal reference distribution). NaN in, NaN out.

    Examples
    --------
    >>> out = t_inference([1.0], [0.5], [10.0], 0.95)
    >>> round(float(out["statistic"][0]), 3), round(float(out["p_value"][0]), 6)
    (2.0, 0.073388)
    """
    est, se, dof = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (estimate, se, dof))
    est, se, dof = np.broadcast_arrays(est, se, dof)
    with np.errstate(all="ignore"):
        statistic = est / se
        tail = (1.0 - confidence) / 2.0
        finite = np.isfinite(dof)
        p = np.where(finite, 2.0 * stats.t.sf(np.abs(statistic), np.where(finite, dof, 1.0)), np.nan)
        p = np.where(finite, p, 2.0 * stats.norm.sf(np.abs(statistic)))
        crit = np.where(finite, stats.t.ppf(1.0 - tail, np.where(finite, dof, 1.0)), stats.norm.ppf(1.0 - tail))
    bad = ~(dof > 0) | np.isnan(dof)
    crit = np.where(bad, np.nan, crit)
    p = np.where(bad, np.nan, p)
    return {"statistic": statistic, "p_value": p, "ci_low": est - crit * se, "ci_high": est + crit * se}
