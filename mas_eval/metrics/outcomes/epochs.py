r"""A case's epochs reduced to one value, as inspect_ai's epoch reducers do: pass@k, pass^k and the counts they rest on.

For a case run :math:`n` times of which :math:`c` passed, the chance that :math:`k` draws without
replacement from the :math:`n` runs all fall among :math:`m` marked ones is
:math:`\binom{m}{k}/\binom{n}{k}`; so

* :math:`\text{pass@}k = 1 - \binom{n-c}{k}/\binom{n}{k}` (Chen et al. 2021, "Evaluating Large
  Language Models Trained on Code", the unbiased estimator; inspect_ai's ``pass_at(k)`` reducer);
* :math:`\text{pass}^k = \binom{c}{k}/\binom{n}{k}` (Yao et al. 2024, "τ-bench"; inspect_ai's
  ``pass_k(k)`` reducer).

:func:`draw_ratio` computes the ratio as a product of :math:`k` exact integer quotients, one
vector operation per factor over every case at once: no factorial is formed, so nothing
overflows. :mod:`mas_eval.stats.epochs` (pass@k and its intervals) and
:mod:`mas_eval.scoring.reproduction` (a log's recorded reducer recomputed) both use it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_ratio", "pass_at", "pass_hat"]


def draw_ratio(n: np.ndarray, m: np.ndarray, k: np.ndarray) -> np.ndarray:
    r""":math:`\binom{m}{k}/\binom{n}{k} = \prod_{j<k} (m-j)/(n-j)`, elementwise; NaN where :math:`k > n`.

    The chance that :math:`k` draws without replacement from :math:`n` items all fall among
    :math:`m` marked ones; 0 when :math:`m < k` (a factor is then exactly 0).

    >>> draw_ratio(np.array([5, 5, 2]), np.array([3, 1, 2]), np.array([2, 2, 3])).tolist()
    [0.3, 0.0, nan]
    """
    n, m, k = (np.asarray(x, dtype=np.int64) for x in (n, m, k))
    out = np.ones(n.shape)
    # One vector product per factor j, over every case at once; rows with k <= j keep their value.
    for j in range(int(k.max(initial=0))):
        active = j < k
        factor = np.maximum(m - j, 0) / np.maximum(n - j, 1)
        out = np.where(active, out * factor, out)
    return np.where(k > n, np.nan, out)


def pass_at(n: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    r"""pass@k of each case: :math:`1 - \binom{n-c}{k}/\binom{n}{k}`; NaN where :math:`k > n`.

    >>> pass_at(np.array([4, 10]), np.array([2, 3]), np.array([2, 2])).round(4).tolist()
    [0.8333, 0.5333]
    """
    n, c = np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64)
    return 1.0 - draw_ratio(n, n - c, k)


def pass_hat(n: np.ndarray, c: np.ndarray, k: np.ndarray) -> np.ndarray:
    r"""pass^k of each case: :math:`\binom{c}{k}/\binom{n}{k}`; NaN where :math:`k > n`.

    >>> pass_hat(np.array([4, 10]), np.array([2, 3]), np.array([2, 2])).round(4).tolist()
    [0.1667, 0.0667]
    """
    return draw_ratio(n, c, k)
