r"""Bootstrap CIs of a difference in means, vectorised: resamples are index matrices, not loops.

Notes
-----
Independent designs resample each system's values separately (stratified); paired designs
resample cases, i.e. the per-case differences :math:`d_i`. The statistic is the difference in
means :math:`\hat\theta`; :math:`\hat\theta^*_b` (b = 1..B) are its bootstrap replicates.

* Percentile: the :math:`\alpha/2` and :math:`1-\alpha/2` quantiles of :math:`\hat\theta^*`.
* BCa (Efron & Tibshirani 1993, §14.3): bias correction
  :math:`z_0 = \Phi^{-1}\big((\#\{\hat\theta^*_b < \hat\theta\} + \#\{\hat\theta^*_b \le \hat\theta\})/(2B)\big)`,
  acceleration from the jackknife, which for a mean has the closed form
  :math:`U_i = \pm(x_i - \bar x)` per sample, :math:`a = \frac{1}{6}\,
  \sum_j \sum_i U_{ji}^3 / n_j^3 \,\big/\, \big(\sum_j \sum_i U_{ji}^2 / n_j^2\big)^{3/2}`;
  the limits are the quantiles at :math:`\Phi\big(z_0 + (z_0 + z_q)/(1 - a(z_0 + z_q))\big)`.

With the same generator state and small inputs (no chunking) the resamples, and so the
intervals, are exactly those of ``scipy.stats.bootstrap`` (tests check this to 1e-10).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from mas_eval.stats._rows import Patch
from mas_eval.stats.options import BootCI
from mas_eval.stats.summaries import Sample

__all__ = ["bootstrap_difference_ci", "bootstrap_step", "resampled_means"]

#: Largest index matrix drawn at once (elements); bigger resamples are drawn in row chunks.
MAX_ELEMENTS = 1 << 22


def resampled_means(
    values: NDArray[np.float64], n_boot: int, rng: np.random.Generator, *, max_elements: int = MAX_ELEMENTS
) -> NDArray[np.float64]:
    """Return the means of ``n_boot`` resamples (with replacement) of ``values``: ``(n_boot,)``.

    Indices are drawn as ``(rows, n)`` matrices, ``rows`` as large as ``max_elements`` allows.

    Examples
    --------
    >>> import numpy as np
    >>> resampled_means(np.array([1.0, 2.0, 3.0, 4.0]), 5, np.random.default_rng(0))
    array([3.  , 1.25, 3.  , 3.25, 3.25])
    """
    n = values.size
    rows = max(1, min(n_boot, max_elements // max(n, 1)))
    out = np.empty(n_boot)
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        index = rng.integers(0, n, (stop - start, n))
        out[start:stop] = values[index].mean(axis=1)
    return out


def _bca_limits(
    replicates: NDArray[np.float64], estimate: float, influence: list[NDArray[np.float64]], confidence: float
) -> tuple[float, float]:
    b = replicates.size
    share = (np.count_nonzero(replicates < estimate) + np.count_nonzero(replicates <= estimate)) / (2.0 * b)
    z0 = special.ndtri(share)
    num = sum(float((u**3).sum()) / u.size**3 for u in influence)
    den = sum(float((u**2).sum()) / u.size**2 for u in influence)
    accel = num / (6.0 * den**1.5) if den > 0 else 0.0
    tail = (1.0 - confidence) / 2.0
    z = special.ndtri(np.array([tail, 1.0 - tail]))
    with np.errstate(all="ignore"):
        levels = special.ndtr(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    if not np.all(np.isfinite(levels)):
        return np.nan, np.nan
    low, high = np.percentile(replicates, levels * 100.0)
    return float(low), float(high)


def bootstrap_difference_ci(
    treatment: NDArray[np.float64],
    control: NDArray[np.float64] | None,
    *,
    n_boot: int,
    confidence: float,
    method: BootCI,
    rng: np.random.Generator,
) -> tuple[float, float, str | None]:
    """Bootstrap CI of ``mean(treatment) - mean(control)``, or of ``mean(treatment)`` when paired.

    Parameters
    ----------
    treatment
        Treatment values, or the per-case differences of a paired design.
    control
        Control values; ``None`` for a paired design (``treatment`` holds the differences).
    n_boot
        Number of resamples.
    confidence
        Two-sided confidence level.
    method
        ``"bca"`` or ``"percentile"``.
    rng
        The generator; the draws are treatment's resamples, then control's.

    Returns
    -------
    tuple
        ``(low, high, warning)``; ``warning`` says why BCa fell back to the percentile interval.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> low, high, _ = bootstrap_difference_ci(
    ...     np.array([0.82, 0.85, 0.81, 0.84]), np.array([0.75, 0.73, 0.76, 0.74]),
    ...     n_boot=2000, confidence=0.95, method="percentile", rng=rng)
    >>> bool(0.06 < low < 0.085 < high < 0.11)
    True
    """
    replicates = resampled_means(treatment, n_boot, rng)
    estimate = float(treatment.mean())
    influence = [treatment - treatment.mean()]
    if control is not None:
        replicates = replicates - resampled_means(control, n_boot, rng)
        estimate -= float(control.mean())
        influence.append(-(control - control.mean()))
    tail = (1.0 - confidence) / 2.0
    if method == "bca":
        low, high = _bca_limits(replicates, estimate, influence, confidence)
        if np.isfinite(low) and np.isfinite(high):
            return low, high, None
        warning = "BCa interval undefined (estimate outside the bootstrap distribution); percentile interval given"
    else:
        warning = None
    low, high = np.percentile(replicates, [tail * 100.0, (1.0 - tail) * 100.0])
    return float(low), float(high), warning


def bootstrap_step(
    samples: list[Sample],
    *,
    valid: np.ndarray,
    n_boot: int,
    seed: Any,
    confidence: float,
    method: BootCI,
) -> Patch:
    """Replace the design's CI of the difference by the bootstrap CI on every ``valid`` row.

    One generator, ``numpy.random.default_rng(seed)``, draws for the rows in table order, so the
    same data and seed give the same intervals.
    """
    size = len(samples)
    low, high = np.full(size, np.nan), np.full(size, np.nan)
    ci_method = np.full(size, None, dtype=object)
    done = np.zeros(size, dtype=bool)
    notes: dict[int, list[str]] = {}
    rng = np.random.default_rng(seed)
    # One resampling per (group, metric) row (each draws all its resamples at once); not per run.
    for r, sample in enumerate(samples):
        if sample is None or not valid[r]:
            continue
        low[r], high[r], warning = bootstrap_difference_ci(
            sample[0], sample[1], n_boot=n_boot, confidence=confidence, method=method, rng=rng
        )
        ci_method[r] = "bootstrap_percentile" if warning else f"bootstrap_{method}"
        done[r] = True
        if warning:
            notes[r] = [warning]
    return Patch(columns={"ci_low": low, "ci_high": high, "ci_method": ci_method}, where=done, warnings=notes)
