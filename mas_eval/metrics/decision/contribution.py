r"""Expert contribution balance and diversity (the crisis-MAS evaluation methodology, "Expert Contribution Balance").

Notes
-----
.. math:: contrib_i = \frac{c_i + H_{norm}(m_i)}{2},\qquad H_{norm}(m) = \frac{-\sum_a p_a\ln p_a}{\ln N}

with N the distinct alternatives in the run's beliefs (``entropy_support="run"``; the agent's
own under ``"agent"``), :math:`p = m / \sum m` (not renormalised under
``entropy_renormalise=False``), 0 ln 0 = 0 and N = 1 → 0. ``balance_score = 1 - Gini`` of the
contributions, Gini exactly as the methodology writes it (:meth:`MasExpr.gini
<mas_eval.metrics.namespace.MasExpr.gini>`); ``diversity_score`` = distinct top choices /
agents. The ``mas`` namespace (:mod:`mas_eval.metrics.namespace`) has both formulas as Polars
expressions for users' queries; these numpy forms are what scoring runs, and a test checks that
the two agree.
"""

from __future__ import annotations

import numpy as np

from mas_eval.metrics.segments import Groups

__all__ = ["balance", "normalized_entropy"]


def normalized_entropy(
    mass_total: np.ndarray,
    m_log_m: np.ndarray,
    outcomes: np.ndarray,
    *,
    renormalise: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Each agent's ``H / ln N`` from its sums ``T = Σ m`` and ``S = Σ m ln m``: ``(values, valid)``.

    ``outcomes`` is N: the run's distinct belief alternatives (``entropy_support="run"``) or
    the agent's own (``"agent"``). ``renormalise``: ``H = ln T - S / T``
    (null when T is 0), else ``H = -S``. N <= 1 gives 0. The formula of
    :meth:`MasExpr.normalized_entropy <mas_eval.metrics.namespace.MasExpr.normalized_entropy>`
    (tested equal).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        if renormalise:
            entropy = np.log(mass_total) - m_log_m / mass_total
            valid = mass_total > 0
        else:
            entropy, valid = -m_log_m, np.ones(len(m_log_m), dtype=bool)
        n = outcomes.astype(np.float64)
        return np.where(n > 1, entropy / np.log(n), entropy * 0.0), valid


#: Up to this many agents per run, the Gini numerator is summed over pairs of agents (shifted
#: differences, no sort); beyond, the contributions are sorted within runs (docs/performance.md).
PAIRWISE_GROUP_SIZE = 16


def balance(run: np.ndarray, contribution: np.ndarray, valid: np.ndarray, runs: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Per run, the Gini coefficient of its agents' contributions (null for a run without any).

    ``run`` is per agent, sorted; ``valid`` marks agents with a contribution.

    Notes
    -----
    .. math:: G = \frac{\sum_i (2i - n - 1)\, w_{(i)}}{n \sum_i w_i} = \frac{\sum_{i<j} |w_i - w_j|}{n \sum_i w_i}

    with :math:`w_{(1)} \le \dots \le w_{(n)}`, 0 when the sum is 0. The two numerators are
    equal term by term (each pair adds its larger value once and subtracts its smaller one);
    runs of at most :data:`PAIRWISE_GROUP_SIZE` agents take the pairwise form, which needs no sort.

    Examples
    --------
    Three agents contributing 1, 1 and 4 (Gini 6 / 18); a run of one agent; a run without a contribution:

    >>> import numpy as np
    >>> from mas_eval.metrics.decision.contribution import balance
    >>> run = np.array([0, 0, 0, 1, 1])
    >>> valid = np.array([True, True, True, True, False])
    >>> gini, known = balance(run, np.array([1.0, 1.0, 4.0, 2.0, 0.0]), valid, runs=3)
    >>> gini.round(4).tolist(), known.tolist()
    ([0.3333, 0.0, 0.0], [True, True, False])
    """
    values, owner = contribution[valid], run[valid]
    by_run = Groups.sorted_runs(owner, runs)
    n = by_run.count()
    total = by_run.sum(values)
    largest = int(n.max()) if runs else 0
    if largest <= PAIRWISE_GROUP_SIZE:
        spread = np.zeros(runs)
        for distance in range(1, largest):
            same = owner[distance:] == owner[:-distance]
            gap = np.abs(values[distance:] - values[:-distance])
            spread += np.bincount(owner[distance:][same], weights=gap[same], minlength=runs)
    else:
        order = np.lexsort((values, owner))
        values, owner = values[order], owner[order]
        starts = np.searchsorted(owner, np.arange(runs, dtype=owner.dtype))
        position = np.arange(len(values)) - starts[owner] + 1.0
        spread = by_run.sum((2.0 * position - n[owner] - 1.0) * values)
    with np.errstate(divide="ignore", invalid="ignore"):
        gini = np.where(total > 0, spread / (n * total), 0.0)
    return gini, n > 0
